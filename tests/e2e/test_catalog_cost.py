"""The command catalog's cost with many command files (issues 17 and 22, benchmarks/README.md
`corpus_*`): a listing re-stats the files and re-checks availability every time, so what
each costs must stay small; the reply is sent as the bytes msgspec encoded (no cattrs and
`json.dumps` over 1,000 entries), which must carry any text a file or a path holds.

The listing's own time is a benchmark (`corpus_list`, and the engine's share in its notes):
on a shared machine a round trip of a 490 KB reply is mostly the pipe, too noisy for a
test; the change's latency is bounded here generously (the code before missed it by far)."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import time
from pathlib import Path

from harness import init_git, lsp_session, trust_workspace_config
from lsprotocol import types

SKILLS = 1000


def install(xdg: Path, n: int = SKILLS) -> Path:
    skills = xdg / "coder" / "skills"
    for i in range(n):
        d = skills / f"skill-{i:04d}"
        d.mkdir(parents=True)
        paths = f"paths: ['src/mod{i}/**/*.py']\n" if i % 2 else ""
        (d / "SKILL.md").write_text(f"---\ndescription: Check module {i}\n{paths}---\nRead the module first.\n")
    return skills


async def test_one_changed_skill_among_1000_is_announced_quickly(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    skills = install(tmp_path / ".xdg-ws")
    target = skills / "skill-0007" / "SKILL.md"
    async with lsp_session(root, env={"HOME": str(tmp_path)}) as s:
        await s.execute("coder.listCommands", {})
        took = []
        for i in range(8):
            before = len(s.events_of("commandsChanged"))
            t0 = time.perf_counter()
            target.write_text(f"---\ndescription: changed {i}\n---\nBody {i}\n")
            await s.wait_for(lambda b=before: len(s.events_of("commandsChanged")) > b, 20)
            took.append((time.perf_counter() - t0) * 1000)
            entry = next(
                c for c in (await s.execute("coder.listCommands", {}))["data"]["commands"] if c["name"] == "skill-0007"
            )
            assert entry["description"] == f"changed {i}"  # the change itself, not only an event
            await asyncio.sleep(0.6)  # past the watcher's second look
    # the first changes also wait for the watcher to start; before: a median of 156 ms
    # (the watcher's 50 ms step, a reload that rebuilt all 1,000 commands and entries),
    # after: 44 ms, on the same loaded machine; the goal is 50 ms
    assert statistics.median(took[2:]) <= 100, took


async def test_the_bytes_reply_carries_any_text_a_file_or_a_path_holds(tmp_path):
    """Non-ASCII text is UTF-8 and counted in bytes (Content-Length); a path that is not
    UTF-8 (a surrogate-escaped name) is sent with that byte as `\\xNN` (protocol/wiretext.py)."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    home = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/h\xffme"))
    text = "Überprüfe — 日本語 ✓ \U0001f600"
    (home / ".claude" / "commands").mkdir(parents=True)
    (home / ".claude" / "commands" / "odd.md").write_text(f"---\ndescription: {text}\n---\nBody\n")
    skill = tmp_path / ".xdg-ws" / "coder" / "skills" / "uni"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\ndescription: {text}\n---\nBody\n")
    async with lsp_session(root, env={"HOME": str(home)}) as s:
        entries = {c["name"]: c for c in (await s.execute("coder.listCommands", {}))["data"]["commands"]}
        assert entries["uni"]["description"] == text
        assert entries["odd"]["description"] == text
        assert entries["odd"]["path"] == str(tmp_path / "h\\xffme" / ".claude" / "commands" / "odd.md")
        # the stream is still in step after both kinds of reply
        assert (await s.execute("coder.input", {"text": "/help"}))["status"] == "completed"


def settings(s, disabled: list[str]) -> None:
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"coder": {"commands": {"disabled": disabled}}})
    )


async def test_availability_is_rechecked_at_each_listing_of_many(tmp_path):
    """The per-listing shortcuts (each set of needs checked once, an unavailable entry
    kept per reason) never keep an answer once what it depends on changed."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    install(tmp_path / ".xdg-ws", 50)
    async with lsp_session(root, env={"HOME": str(tmp_path)}) as s:

        async def entry(name: str) -> dict:
            commands = (await s.execute("coder.listCommands", {}))["data"]["commands"]
            return next(c for c in commands if c["name"] == name)

        first = await entry("skill-0003")
        assert first["available"] is False and "ANTHROPIC_API_KEY" in first["reason"]  # no key
        settings(s, ["skill-0003"])
        off = await entry("skill-0003")
        assert off["available"] is False and "commands.disabled" in off["reason"], off
        assert "ANTHROPIC_API_KEY" in (await entry("skill-0004"))["reason"]
        settings(s, [])
        again = await entry("skill-0003")
        assert "ANTHROPIC_API_KEY" in again["reason"], again


async def test_activation_follows_each_touched_file_between_listings(tmp_path):
    """A listing remembers how far it matched the session's touched files: a file touched
    after a listing still activates a skill, and the first file that matched stays its cause."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder").mkdir()
    (root / ".coder" / "script.json").write_text('{"turns": [{"text": "ok."}, {"text": "ok."}, {"text": "ok."}]}')
    (root / ".coder" / "config.json").write_text('{"provider": "scripted", "scriptedFile": ".coder/script.json"}')
    trust_workspace_config(root)
    install(tmp_path / ".xdg-ws", 20)  # odd ones conditional: skill-0003 on src/mod3/**/*.py
    async with lsp_session(root, env={"HOME": str(tmp_path)}) as s:

        async def activation() -> dict:
            commands = (await s.execute("coder.listCommands", {}))["data"]["commands"]
            return next(c for c in commands if c["name"] == "skill-0003")["activation"]

        assert (await activation())["active"] is False
        assert (await s.execute("coder.input", {"text": "read docs/notes.md please"}))["status"] == "completed"
        assert (await activation())["active"] is False
        assert (await s.execute("coder.input", {"text": "now src/mod3/x/a.py"}))["status"] == "completed"
        first = await activation()
        assert (first["active"], first["by"]) == (True, "src/mod3/x/a.py"), first
        assert (await s.execute("coder.input", {"text": "and src/mod3/b.py"}))["status"] == "completed"
        assert (await activation())["by"] == "src/mod3/x/a.py"


async def test_a_listing_given_again_still_follows_every_condition_it_shows(tmp_path):
    """A listing is given again while nothing it shows changed (`catalog.Listings`): each
    thing it depends on is changed between two listings, and the next one must show it —
    the repository, the model, the disabled list, a file, and hidden entries asked for or not."""
    root = tmp_path / "plain"  # not a git repository yet
    root.mkdir()
    skills = install(tmp_path / ".xdg-plain", 200)
    hidden = skills / "skill-0010" / "SKILL.md"
    hidden.write_text("---\ndescription: for scripts\nhidden: true\n---\nBody\n")
    (root / "script.json").write_text('{"turns": [{"text": "ok."}]}')
    async with lsp_session(root, env={"HOME": str(tmp_path)}) as s:

        async def entries(include_hidden: bool = False) -> dict[str, dict]:
            listed = await s.execute("coder.listCommands", {"includeHidden": include_hidden})
            return {c["name"]: c for c in listed["data"]["commands"]}

        first = await entries()
        assert first == await entries()  # nothing changed: the same answer
        assert first["commit"]["available"] is False and "not a git repository" in first["commit"]["reason"]
        assert "ANTHROPIC_API_KEY" in first["skill-0003"]["reason"]
        assert "skill-0010" not in first

        everything = await entries(include_hidden=True)  # the other kind, then back
        assert everything["skill-0010"]["hidden"] is True
        assert "skill-0010" not in await entries()
        assert "skill-0010" in await entries(include_hidden=True)

        await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(root)], check=True, stdin=subprocess.DEVNULL)
        commit = (await entries())["commit"]  # a repository now; still no model
        assert "ANTHROPIC_API_KEY" in commit["reason"] and "git" not in commit["reason"], commit

        scripted: dict = {"coder": {"provider": "scripted", "scriptedFile": str(root / "script.json")}}
        s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=scripted))
        now = await entries()
        assert now["skill-0003"].get("available", True) is True, now["skill-0003"]  # a model can answer now
        assert now["commit"].get("available", True) is True

        scripted["coder"]["commands"] = {"disabled": ["skill-0005"]}  # the client's settings, whole
        s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=scripted))
        off = await entries()
        assert off["skill-0005"]["available"] is False and "commands.disabled" in off["skill-0005"]["reason"]
        assert off["skill-0003"].get("available", True) is True  # the model condition kept its answer

        (skills / "skill-0007" / "SKILL.md").write_text("---\ndescription: edited\n---\nBody\n")
        assert (await entries())["skill-0007"]["description"] == "edited"


async def test_each_session_lists_its_own_activated_skills(tmp_path):
    """The listing given again is one session's: another session's touched files never show."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder").mkdir()
    (root / ".coder" / "script.json").write_text('{"turns": [{"text": "ok."}, {"text": "ok."}]}')
    (root / ".coder" / "config.json").write_text('{"provider": "scripted", "scriptedFile": ".coder/script.json"}')
    trust_workspace_config(root)
    install(tmp_path / ".xdg-ws", 20)  # odd ones conditional: skill-0003 on src/mod3/**/*.py
    async with lsp_session(root, env={"HOME": str(tmp_path)}) as s:

        async def active(session_id: str) -> bool:
            listed = await s.execute("coder.listCommands", {"sessionId": session_id})
            return next(c for c in listed["data"]["commands"] if c["name"] == "skill-0003")["activation"]["active"]

        a = (await s.execute("coder.input", {"text": "look at src/mod3/x.py"}))["sessionId"]
        b = (await s.execute("coder.new", {}))["sessionId"]
        # as many touched files as the first session (one), not the same one
        assert (await s.execute("coder.input", {"text": "see docs/y.py", "sessionId": b}))["status"] == "completed"
        assert a != b
        for _ in range(2):  # alternate: each answer is its own session's
            assert await active(a) is True
            assert await active(b) is False
