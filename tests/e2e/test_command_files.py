"""Commands and skills from files (contract section 10): every source, front matter
parsed as YAML (lists, CRLF, BOM), bad files skipped with one warning, hot reload,
and the expansion of the body (arguments, skill folder, inline `` !`cmd` ``)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from harness import init_git, lsp_session, trust_workspace_config


def scripted(root: Path, turns: int = 6) -> None:
    (root / ".coder").mkdir(exist_ok=True)
    (root / ".coder" / "script.json").write_text(json.dumps({"turns": [{"text": "ok."}] * turns}))
    (root / ".coder" / "config.json").write_text(
        json.dumps({"provider": "scripted", "scriptedFile": ".coder/script.json"})
    )
    trust_workspace_config(root)  # the provider is widening: the user's trust


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def home_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    return home, {"HOME": str(home)}


async def catalog(s) -> dict[str, dict]:
    return {c["name"]: c for c in (await s.execute("coder.listCommands", {}))["data"]["commands"]}


async def watcher_ready(s, folder: Path) -> None:
    """The watcher starts right after initialized (slowly on a loaded machine): wait until
    a probe file in `folder` is announced, so that what follows measures the reload alone."""
    await s.execute("coder.help", {})
    before = len(s.events_of("commandsChanged"))
    deadline = time.monotonic() + 20
    n = 0
    while len(s.events_of("commandsChanged")) == before:
        assert time.monotonic() < deadline, "the watcher never announced the probe"
        write(folder / f"probe{n}.md", f"probe {n}")  # a fresh file each try: a new catalog entry
        n += 1
        await asyncio.sleep(1)


def warnings(s) -> list[str]:
    return [m.message for m in s.client.messages if m.type == 2]  # MessageType.Warning


async def test_every_source_is_loaded_and_the_first_match_wins(tmp_path):
    """The user's files first (skills, then commands), then the workspace's: a clone never
    shadows the user's own command (tests/security/test_untrusted_commands.py); each
    clash is listed on the winner (`shadows`) and warned once."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    home, env = home_env(tmp_path)
    xdg = tmp_path / ".xdg-ws"  # the harness's XDG_CONFIG_HOME
    write(root / ".coder/commands/five.md", "---\ndescription: five from .coder\n---\nFIVE")
    write(root / ".claude/commands/five.md", "---\ndescription: five from .claude\n---\nshadowed")
    write(root / ".coder/commands/one.md", "---\ndescription: one from .coder\n---\nONE")
    write(root / ".claude/commands/two.md", "TWO body first line")
    write(xdg / "coder/commands/three.md", "---\ndescription: three, user\n---\nTHREE")
    write(home / ".claude/commands/four.md", "---\ndescription: four, ~/.claude\n---\nFOUR")
    write(home / ".claude/commands/two.md", "the user's two wins")
    write(root / ".coder/skills/deploy/SKILL.md", "---\nname: ship-it\ndescription: Ship\n---\nSHIP")
    write(
        root / ".claude/skills/lint/SKILL.md",
        "---\ndescription: Lint\nwhen_to_use: after edits\ndisable-model-invocation: true\n---\nLINT",
    )
    write(xdg / "coder/skills/forked/SKILL.md", "---\ndescription: Forked\ncontext: fork\nagent: general\n---\nFORK")
    write(home / ".claude/skills/quiet/SKILL.md", "---\ndescription: Quiet\nuser-invocable: false\n---\nQ")
    write(home / ".claude/skills/one/SKILL.md", "---\ndescription: the user's skill one wins\n---\nX")
    async with lsp_session(root, env=env) as s:
        c = await catalog(s)
        assert c["five"]["description"] == "five from .coder" and c["five"]["source"] == "workspace"
        assert c["five"]["path"] == str(root / ".coder/commands/five.md")
        assert c["one"]["description"] == "the user's skill one wins" and c["one"]["source"] == "skill"
        assert c["two"]["description"] == "the user's two wins" and c["two"]["source"] == "user"
        assert (c["three"]["source"], c["four"]["source"]) == ("user", "user")
        assert c["four"]["path"] == str(home / ".claude/commands/four.md")
        assert "ship-it" not in c  # a skill is named by its folder, as Claude Code does (`name:` is a label)
        ship = c["deploy"]
        assert (ship["source"], ship["kind"], ship["userInvocable"], ship["modelInvocable"]) == (
            "skill",
            "prompt",
            True,
            True,
        )
        assert ship["path"] == str(root / ".coder/skills/deploy/SKILL.md")
        assert c["lint"]["modelInvocable"] is False
        assert c["forked"]["kind"] == "agent"
        assert c["quiet"]["userInvocable"] is False
        assert "path" not in c["help"] and "userInvocable" not in c["help"]
        result = await s.execute("coder.input", {"text": "/quiet"})
        assert result["status"] == "failed" and result["error"]["code"] == "not_user_invocable"
        await s.wait_for(lambda: len(warnings(s)) >= 3)
        ignored = sorted(w.split(" was skipped")[0].removeprefix("Command file ") for w in warnings(s))
        assert ignored == [
            str(root / ".claude/commands/five.md"),
            str(root / ".claude/commands/two.md"),
            str(root / ".coder/commands/one.md"),
        ], ignored
        assert len([w for w in warnings(s) if "is your own" in w]) == 2
        assert c["five"]["shadows"] == [str(root / ".claude/commands/five.md")]  # every clash is shown
        assert c["two"]["shadows"] == [str(root / ".claude/commands/two.md")]


async def test_crlf_bom_and_lists_parse_as_yaml(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    text = (
        "\ufeff---\r\n"
        "description: 'Review: carefully'\r\n"
        "argument-hint: [file] [focus]\r\n"
        "allowed-tools:\r\n  - Read\r\n  - Bash(git add:*)\r\n"
        "unknown-key: {nested: [1, 2]}\r\n"
        "---\r\n"
        "Review $1 for $2.\r\n"
    )
    write(root / ".coder/commands/rev.md", text.encode("utf-8"))
    async with lsp_session(root) as s:
        c = await catalog(s)
        assert c["rev"]["description"] == "Review: carefully"
        assert c["rev"]["argumentHint"] == "[file] [focus]"
        result = await s.execute("coder.input", {"text": "/rev app.py 'error handling'"})
        assert result["status"] == "completed", result
        assert s.events_of("userMessage")[-1]["text"] == "Review app.py for error handling.\n\napp.py 'error handling'"
        assert warnings(s) == []


async def test_a_bad_file_loads_what_it_can_with_one_warning_and_the_others_load(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    write(root / ".coder/commands/broken.md", "---\ndescription: [unclosed\n---\nbody")
    write(root / ".coder/commands/help.md", "my own help")
    write(root / ".coder/commands/good.md", "---\ndescription: Good\n---\nbody")
    async with lsp_session(root) as s:
        c = await catalog(s)
        # like Claude Code, front matter that is not YAML still loads what it can say
        assert "good" in c and c["broken"]["description"] == "[unclosed"
        assert c["help"]["source"] == "builtin"
        await s.wait_for(lambda: len(warnings(s)) >= 2)
        shown = warnings(s)
        broken = [w for w in shown if "broken.md" in w]
        assert len(broken) == 1 and "YAML" in broken[0] and "skipped" not in broken[0]
        assert len([w for w in shown if "help.md" in w and "built-in" in w]) == 1
        write(root / ".coder/commands/other.md", "another")  # a reload: the same problems, no new warnings
        await s.execute("coder.listCommands", {})
        await asyncio.sleep(0.3)
        assert len(warnings(s)) == len(shown)


async def test_files_added_changed_and_removed_reach_the_catalog_within_two_seconds(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder" / "skills").mkdir(parents=True)
    (root / ".claude" / "commands").mkdir(parents=True)
    async with lsp_session(root) as s:
        await watcher_ready(s, root / ".claude/commands")

        async def changed(action) -> float:
            before = len(s.events_of("commandsChanged"))
            start = time.monotonic()
            action()
            await s.wait_for(lambda: len(s.events_of("commandsChanged")) > before, timeout=5)
            return time.monotonic() - start

        skill = root / ".coder/skills/fmt/SKILL.md"
        assert await changed(lambda: write(skill, "---\ndescription: Format\n---\nfmt")) < 2
        c = await catalog(s)
        assert c["fmt"]["source"] == "skill"
        assert await changed(lambda: write(skill, "---\ndescription: Format it all\n---\nfmt")) < 2
        assert (await catalog(s))["fmt"]["description"] == "Format it all"
        assert await changed(lambda: write(skill, "---\ndescription: Format it all\n---\nfmt, new body")) < 2
        assert await changed(lambda: write(root / ".claude/commands/ship.md", "Ship it")) < 2
        assert await changed(lambda: skill.unlink()) < 2
        c = await catalog(s)
        assert "fmt" not in c and "ship" in c


async def test_expansion_of_arguments_skill_dir_and_inline_commands(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    write(root / ".coder/commands/args.md", "All: $ARGUMENTS\nFirst: $1\nSecond: $2\nNinth: [$9]")
    write(root / ".coder/skills/tool/SKILL.md", "Run ${CODER_SKILL_DIR}/run.sh and ${CLAUDE_SKILL_DIR}/x")
    write(root / ".coder/commands/state.md", "Branch files: !`ls a.txt` and !`echo err >&2`. Go: $ARGUMENTS")
    write(root / ".coder/commands/big.md", "!`head -c 50000 /dev/zero | tr '\\0' x`")
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": '/args "two words" it\'s'})
        assert result["status"] == "completed"
        # an unbalanced quote: split on whitespace instead
        assert s.events_of("userMessage")[-1]["text"] == (
            'All: "two words" it\'s\nFirst: "two\nSecond: words"\nNinth: [$9]'
        )
        await s.execute("coder.input", {"text": '/args "two words" three'})
        assert s.events_of("userMessage")[-1]["text"] == (
            'All: "two words" three\nFirst: two words\nSecond: three\nNinth: [$9]'
        )
        await s.execute("coder.input", {"text": "/tool"})
        skill_dir = root / ".coder/skills/tool"
        assert s.events_of("userMessage")[-1]["text"] == f"Run {skill_dir}/run.sh and {skill_dir}/x"
        result = await s.execute("coder.input", {"text": "/state now"})
        assert result["status"] == "completed", result
        assert s.events_of("userMessage")[-1]["text"] == "Branch files: a.txt and err. Go: now"
        await s.execute("coder.input", {"text": "/big"})
        text = s.events_of("userMessage")[-1]["text"]
        assert 19_000 <= text.count("x") <= 20_000


async def test_a_refused_inline_command_fails_the_whole_command_and_nothing_runs(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    write(root / ".coder/commands/evil.md", "First !`touch marker` then !`rm -rf /`")
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": "/evil"})
        assert result["status"] == "failed"
        assert result["error"]["code"] == "refused" and "rm -rf /" in result["error"]["message"]
        assert s.events_of("userMessage") == []  # no turn ran
        assert not (root / "marker").exists()  # and not even the harmless part


async def test_a_user_folder_is_watched_too(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    home, env = home_env(tmp_path)
    (home / ".claude" / "skills").mkdir(parents=True)
    (root / ".coder" / "commands").mkdir(parents=True)
    async with lsp_session(root, env=env) as s:
        await watcher_ready(s, root / ".coder/commands")  # one watcher covers both folders
        before = len(s.events_of("commandsChanged"))
        write(home / ".claude/skills/review/SKILL.md", "---\ndescription: Review\n---\nreview")
        await s.wait_for(lambda: len(s.events_of("commandsChanged")) > before, timeout=2.5)
        assert (await catalog(s))["review"]["source"] == "skill"


async def test_hostile_command_files_do_not_hang_the_server(tmp_path):
    import os

    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    commands = root / ".coder" / "commands"
    commands.mkdir(parents=True)
    os.mkfifo(commands / "fifo.md")
    (commands / "zero.md").symlink_to("/dev/zero")
    write(commands / "huge.md", "x" * (300 * 1024))
    write(commands / "fine.md", "fine")
    async with lsp_session(root) as s:
        c = await asyncio.wait_for(catalog(s), 10)
        assert "fine" in c and not {"fifo", "zero", "huge"} & set(c)
        await s.wait_for(lambda: len(warnings(s)) >= 3)
        assert sorted(w.split(" was skipped")[0].rsplit("/", 1)[1] for w in warnings(s)) == [
            "fifo.md",
            "huge.md",
            "zero.md",
        ]


async def test_arguments_are_text_never_commands_or_placeholders(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    scripted(root)
    write(root / ".coder/commands/say.md", "Say: $ARGUMENTS (first: $1) !`echo 'ran:$1'`")
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": "/say !`touch pwned` costs $2"})
        assert result["status"] == "completed", result
        assert not (root / "pwned").exists()
        assert s.events_of("userMessage")[-1]["text"] == ("Say: !`touch pwned` costs $2 (first: !`touch) ran:!`touch")
