"""The command model over stdio (contract section 18): aliases, hidden commands,
availability with its reason, immediate as data, and who may run what (the input's origin)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from harness import JsonRpcException, init_git, lsp_session


def user_commands(root: Path) -> Path:
    d = root.parent / f".xdg-{root.name}" / "coder" / "commands"
    d.mkdir(parents=True, exist_ok=True)
    return d


def by_name(listed: dict) -> dict[str, dict]:
    return {e["name"]: e for e in listed["data"]["commands"]}


async def test_an_alias_dispatches_lists_suggests_and_cannot_be_taken_by_a_file(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (user_commands(root) / "reset.md").write_text("Reset everything: $ARGUMENTS\n")
    async with lsp_session(root) as s:
        first = await s.execute("coder.input", {"text": "hello?"})  # a session with a message (no key: fails)
        sid = first["sessionId"]
        reset = await s.execute("coder.input", {"text": "/reset", "sessionId": sid})
        assert reset["status"] == "completed", reset
        assert reset["data"]["kind"] == "session"  # what /clear answers
        again = await s.execute("coder.reset", {})  # the alias is a command id too
        assert again["status"] == "completed", again

        entry = by_name(await s.execute("coder.listCommands", {}))
        assert entry["clear"]["aliases"] == ["reset"]
        assert "reset" not in entry  # the user's reset.md cannot take the alias
        assert any("reset.md" in m.message for m in s.client.messages), s.client.messages

        help_text = (await s.execute("coder.help", {}))["reply"]
        assert "/clear" in help_text and "/reset" in help_text
        typo = await s.execute("coder.input", {"text": "/resett"})
        assert typo["error"]["code"] == "unknown_command" and "/reset" in typo["error"]["message"]


async def test_a_hidden_command_runs_but_is_not_listed(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (user_commands(root) / "secret-tool.md").write_text("---\nhidden: true\ndescription: for scripts\n---\nDo $1\n")
    (user_commands(root) / "shown.md").write_text("---\ndescription: for people\n---\nDo $1\n")
    async with lsp_session(root) as s:
        listed = by_name(await s.execute("coder.listCommands", {}))
        assert "shown" in listed and "secret-tool" not in listed
        everything = by_name(await s.execute("coder.listCommands", {"includeHidden": True}))
        assert everything["secret-tool"]["hidden"] is True
        assert "secret-tool" not in (await s.execute("coder.help", {}))["reply"]
        ran = await s.execute("coder.input", {"text": "/secret-tool x"})
        # it is found (not unknown); with no API key it cannot run, and says so
        assert ran["error"]["code"] == "unavailable", ran
        assert "ANTHROPIC_API_KEY" in ran["error"]["message"]


async def test_git_commands_outside_git_say_why_before_they_run_and_become_available(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    async with lsp_session(root, env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}) as s:
        entry = by_name(await s.execute("coder.listCommands", {}))
        for name in ("commit", "diff"):
            assert entry[name]["available"] is False, entry[name]
            assert "not a git repository" in entry[name]["reason"]
        assert "available" not in entry["undo"]  # plain /undo needs no git, /undo --all does
        assert "available" not in entry["init"]  # a key is set: agent commands can run

        commit = await s.execute("coder.input", {"text": "/commit"})
        assert (commit["status"], commit["error"]["code"]) == ("failed", "unavailable"), commit
        assert "not a git repository" in commit["error"]["message"]
        assert s.events_of("userMessage") == []  # nothing ran: no turn started
        undo_all = await s.execute("coder.undo", {"args": "--all"})
        assert undo_all["error"]["code"] == "unavailable"

        # never cached: the folder becomes a repository while the server runs
        await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(root)], check=True, stdin=subprocess.DEVNULL)
        entry = by_name(await s.execute("coder.listCommands", {}))
        assert "available" not in entry["diff"] and "available" not in entry["commit"]
        diff = await s.execute("coder.diff", {})
        assert diff["status"] == "completed", diff


async def test_agent_commands_without_a_key_and_disabled_commands_are_unavailable(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder").mkdir()
    (root / ".coder" / "config.json").write_text(json.dumps({"commands": {"disabled": ["sessions", "reset"]}}))
    user_cfg = root.parent / f".xdg-{root.name}" / "coder" / "config.json"
    user_cfg.parent.mkdir(parents=True)
    user_cfg.write_text(json.dumps({"commands": {"disabled": ["agents"]}}))
    async with lsp_session(root) as s:
        entry = by_name(await s.execute("coder.listCommands", {}))
        for name in ("init", "review", "commit", "btw"):
            assert entry[name]["available"] is False and "ANTHROPIC_API_KEY" in entry[name]["reason"], entry[name]
        # the workspace's list adds to the user's: both are off
        for name in ("sessions", "agents", "clear"):  # `clear` through its alias `reset`
            assert entry[name]["available"] is False, entry[name]
            assert "commands.disabled" in entry[name]["reason"]
        off = await s.execute("coder.input", {"text": "/sessions"})
        assert off["error"]["code"] == "unavailable" and "commands.disabled" in off["error"]["message"]
        assert (await s.execute("coder.help", {}))["status"] == "completed"


async def test_immediate_is_data_of_the_command(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        entry = by_name(await s.execute("coder.listCommands", {}))
        assert {n for n, e in entry.items() if e.get("immediate")} == {
            "help", "sessions", "diff", "model", "permissions", "trust", "btw", "agents", "status", "skills",
            "mcp", "context", "cost",  # the MCP and section 19 reads, as their modules set them
            "shells",  # the background shells' list (section 22)
        }  # fmt: skip
        assert entry["commit"]["progressMessage"] == "Committing"


async def test_status_and_skills_say_what_is_in_force(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    skills = root.parent / f".xdg-{root.name}" / "coder" / "skills"
    (skills / "db").mkdir(parents=True)
    (skills / "db" / "SKILL.md").write_text("---\ndescription: Databases\npaths: ['*.sql']\n---\nUse the index.\n")
    (skills / "mine").mkdir(parents=True)
    (skills / "mine" / "SKILL.md").write_text("---\ndescription: Mine\ndisable-model-invocation: true\n---\nX\n")
    (root / ".coder").mkdir()
    (root / ".coder" / "config.json").write_text(json.dumps({"commands": {"disabled": ["diff"]}}))
    async with lsp_session(root) as s:
        status = await s.execute("coder.status", {})
        data = status["data"]
        assert data["kind"] == "status" and data["permissions"] == "balanced" and data["trusted"] is False
        assert data["sandbox"] == "workspace-write" and data["sessionId"] == status["sessionId"]
        reasons = {c["name"]: c["reason"] for c in data["disabled"]}
        assert "commands.disabled" in reasons["diff"] and "ANTHROPIC_API_KEY" in reasons["init"]
        assert "/diff" in status["reply"]
        listed = (await s.execute("coder.skills", {}))["data"]["skills"]
        by = {x["name"]: x for x in listed}
        assert by["db"]["active"] is False and by["db"]["modelInvocable"] is True
        assert by["mine"]["modelInvocable"] is False and by["mine"]["active"] is True
        entry = by_name(await s.execute("coder.listCommands", {}))
        assert entry["db"]["activation"] == {"paths": ["*.sql"], "active": False}


# -- origin -----------------------------------------------------------------------------


@pytest.mark.parametrize("origin", ["link", "codeAction", "client", "remote"])
async def test_what_the_user_did_not_type_cannot_run_a_shell_line_or_trust(tmp_path, origin):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder").mkdir()
    (root / ".coder" / "config.json").write_text(json.dumps({"permissions": "yolo"}))
    (user_commands(root) / "deploy.md").write_text("Deploy: !`touch deployed`\n")
    async with lsp_session(root) as s:
        rm = await s.execute("coder.input", {"text": "!rm a.txt", "origin": origin})
        assert (rm["status"], rm["error"]["code"]) == ("failed", "origin_refused"), rm
        assert origin in rm["error"]["message"]
        shell = await s.execute("coder.shell", {"command": "rm a.txt", "origin": origin})
        assert shell["error"]["code"] == "origin_refused"
        assert (root / "a.txt").exists()

        for text in ("/trust", "/permissions yolo", "/deploy now", "/undo", "/commit"):
            refused = await s.execute("coder.input", {"text": text, "origin": origin})
            assert refused["error"]["code"] == "origin_refused", (text, refused)
        via_id = await s.execute("coder.trust", {"origin": origin})  # a `command:` URI with arguments
        assert via_id["error"]["code"] == "origin_refused"
        assert not (root / "deployed").exists()
        permissions = await s.execute("coder.permissions", {})
        assert permissions["data"]["preset"] == "balanced"  # the workspace's yolo was never trusted

        for text in ("/help", "/sessions", "/diff"):  # looking is fine from anywhere
            looked = await s.execute("coder.input", {"text": text, "origin": origin})
            assert looked["status"] == "completed", (text, looked)
        typed = await s.execute("coder.input", {"text": "!echo typed", "origin": "typed"})
        assert typed["rawOutput"] == "typed\n"
        default = await s.execute("coder.input", {"text": "!echo mine"})  # no origin: the user's
        assert default["rawOutput"] == "mine\n"


async def test_an_unknown_origin_is_a_protocol_error(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        with pytest.raises(JsonRpcException) as err:
            await s.execute("coder.input", {"text": "!rm a.txt", "origin": "Typed"})
        assert "origin" in str(err.value)
        assert (root / "a.txt").exists()


async def test_config_shows_layers_and_writes_validated_values_gated_by_trust(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    user_cfg = root.parent / f".xdg-{root.name}" / "coder" / "config.json"
    user_cfg.parent.mkdir(parents=True)
    user_cfg.write_text(json.dumps({"shell": {"timeoutSeconds": 30}}))
    async with lsp_session(root) as s:
        shown = await s.execute("coder.settings", {})  # the alias
        entries = {e["key"]: e for e in shown["data"]["entries"]}
        assert entries["shell.timeoutSeconds"] == {"key": "shell.timeoutSeconds", "value": 30, "layer": str(user_cfg)}
        assert entries["maxSteps"]["layer"] == "default"

        bad = await s.execute("coder.input", {"text": "/config shell.timeoutSeconds -5"})
        assert bad["error"]["code"] == "invalid_config" and "shell.timeoutSeconds" in bad["error"]["message"]
        typo = await s.execute("coder.input", {"text": "/config shell.timeoutSecond 5"})
        assert typo["error"]["code"] == "invalid_argument" and "shell.timeoutSeconds" in typo["error"]["message"]
        assert json.loads(user_cfg.read_text()) == {"shell": {"timeoutSeconds": 30}}  # nothing written
        assert not (root / ".coder" / "config.json").exists()

        ok = await s.execute("coder.input", {"text": "/config maxSteps 7"})
        assert ok["status"] == "completed", ok
        assert json.loads((root / ".coder" / "config.json").read_text()) == {"maxSteps": 7}
        mine = await s.execute("coder.input", {"text": "/config timezone UTC --user"})
        assert mine["status"] == "completed", mine
        assert json.loads(user_cfg.read_text())["timezone"] == "UTC"
        entries = {e["key"]: e for e in (await s.execute("coder.config", {}))["data"]["entries"]}
        assert entries["maxSteps"]["value"] == 7 and entries["timezone"]["layer"] == str(user_cfg)

        wide = await s.execute("coder.input", {"text": "/config permissions yolo"})  # the workspace file
        assert wide["status"] == "completed", wide
        assert "/trust" in wide["reply"]
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "balanced"  # not until /trust
        link = await s.execute("coder.input", {"text": "/config permissions yolo --user", "origin": "link"})
        assert link["error"]["code"] == "origin_refused"
        assert "permissions" not in json.loads(user_cfg.read_text())
