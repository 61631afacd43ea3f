"""Every built-in command over stdio: what a user sees in the result, the events and on disk."""

from __future__ import annotations

import json

from e2e_support import git
from harness import init_git, lsp_session

BUILTINS = ["help", "model", "permissions", "new", "clear", "resume", "sessions", "diff", "undo"]


async def test_help_and_list_commands_describe_every_builtin(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        help_result = await s.execute("coder.help", {})
        assert (help_result["mode"], help_result["status"]) == ("command", "completed")
        for name in BUILTINS:
            assert f"/{name}" in help_result["reply"]
        assert "!<command>" in help_result["reply"]

        same = await s.execute("coder.input", {"text": "/help"})
        assert same["reply"] == help_result["reply"]

        listed = await s.execute("coder.listCommands", {})
        assert listed["status"] == "completed"
        entries = listed["data"]["commands"]
        by_name = {e["name"]: e for e in entries}
        assert set(BUILTINS) <= set(by_name)
        for entry in entries:
            assert set(entry) >= {"name", "description", "argumentHint", "kind", "source"}
            assert entry["kind"] in ("local", "prompt", "agent")
            assert entry["source"] in ("builtin", "workspace", "user", "skill", "bundled", "managed", "plugin", "mcp")
            assert entry["description"]
        assert by_name["undo"]["source"] == "builtin"
        assert "--all" in by_name["undo"]["argumentHint"]
        assert "name" in by_name["model"]["argumentHint"]


async def test_prompt_without_api_key_is_an_error_result(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": "explain a.txt please"})
        assert result["mode"] == "error"
        assert result["status"] == "failed"
        assert "ANTHROPIC_API_KEY" in result["error"]["message"]
        assert result["sessionId"] and result["submissionId"]
        # the turn told the transcript what happened
        assert [e["text"] for e in s.events_of("userMessage")] == ["explain a.txt please"]
        assert s.events_of("turnFinished")[-1]["status"] == "failed"


async def test_slash_dispatch_unknown_command_path_prompt_and_bang(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    existing = tmp_path / "notes.log"
    existing.write_text("x\n")
    async with lsp_session(root) as s:
        typo = await s.execute("coder.input", {"text": "/undoo"})
        assert (typo["mode"], typo["status"]) == ("error", "failed")
        assert typo["error"]["code"] == "unknown_command"
        assert "/undo" in typo["error"]["message"]

        typo2 = await s.execute("coder.input", {"text": "/sesions list"})
        assert "/sessions" in typo2["error"]["message"]

        # An existing absolute path is the start of a prompt, not a command.
        as_prompt = await s.execute("coder.input", {"text": f"{existing} why is this log empty?"})
        assert as_prompt["mode"] == "error"
        assert as_prompt["error"]["code"] != "unknown_command"
        assert "ANTHROPIC_API_KEY" in as_prompt["error"]["message"]

        # A non-existing absolute path is an unknown command.
        missing = await s.execute("coder.input", {"text": f"{tmp_path}/nope/x.log hello"})
        assert missing["error"]["code"] == "unknown_command"

        # `!` runs in the shell even with a `/` later on.
        shell = await s.execute("coder.input", {"text": "!echo a/b/c && printf '%s\\n' /help"})
        assert (shell["mode"], shell["status"], shell["exitCode"]) == ("raw", "completed", 0)
        assert shell["rawOutput"] == "a/b/c\n/help\n"
        assert shell["command"] == "echo a/b/c && printf '%s\\n' /help"


async def test_shell_command_id_is_the_same_as_bang(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        result = await s.execute("coder.shell", {"command": "cat a.txt; echo err >&2; exit 4"})
        assert result["mode"] == "raw"
        assert result["exitCode"] == 4
        assert result["rawOutput"] == "a\nerr\n"
        assert result["reply"] == result["rawOutput"]
        chunks = "".join(e["chunk"] for e in s.events_of("shellOutput"))
        assert chunks == "a\nerr\n"
        assert all(e["submissionId"] == result["submissionId"] for e in s.events_of("shellOutput"))


async def test_model_list_switch_persist_and_unknown(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        listing = await s.execute("coder.model", {})
        assert listing["mode"] == "command"
        data = listing["data"]
        assert data["kind"] == "model"
        names = [m["name"] for m in data["models"]]
        assert data["current"] == "sonnet" and data["resolved"] in names  # the default is an alias
        other = next(n for n in names if n != data["resolved"])
        assert data["current"] in listing["reply"] and other in listing["reply"]

        switched = await s.execute("coder.input", {"text": f"/model {other}"})
        assert (switched["mode"], switched["status"]) == ("command", "completed")
        changed = s.events_of("modelChanged")
        assert len(changed) == 1 and changed[0]["model"] == other
        assert changed[0]["sessionId"] == switched["sessionId"]
        saved = json.loads((root / ".coder" / "config.json").read_text())
        assert saved["model"] == other

        again = await s.execute("coder.model", {})
        assert again["data"]["current"] == other

        bad = await s.execute("coder.model", {"args": "sonet-4-5"})
        assert (bad["mode"], bad["status"]) == ("error", "failed")
        assert "claude-sonnet-4-5" in bad["error"]["message"]
        assert json.loads((root / ".coder" / "config.json").read_text())["model"] == other
        assert len(s.events_of("modelChanged")) == 1

    # A new server on the same workspace starts with the saved model.
    async with lsp_session(root) as s2:
        assert (await s2.execute("coder.model", {}))["data"]["current"] == other


async def test_permissions_show_apply_persist_and_bad_preset(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        shown = await s.execute("coder.permissions", {})
        assert shown["data"]["preset"] == "balanced"
        assert set(shown["data"]["presets"]) == {"strict", "balanced", "auto-edit", "yolo"}
        assert "balanced" in shown["reply"]

        applied = await s.execute("coder.input", {"text": "/permissions strict"})
        assert applied["status"] == "completed"
        assert json.loads((root / ".coder" / "config.json").read_text())["permissions"] == "strict"
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "strict"

        bad = await s.execute("coder.permissions", {"args": "everything"})
        assert (bad["mode"], bad["status"]) == ("error", "failed")
        assert "everything" in bad["error"]["message"] and "yolo" in bad["error"]["message"]
        assert json.loads((root / ".coder" / "config.json").read_text())["permissions"] == "strict"
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "strict"


async def test_diff_shows_stat_and_patch(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "one\ntwo\n", "b.txt": "b\n"})
    async with lsp_session(root) as s:
        clean = await s.execute("coder.diff", {})
        assert clean["status"] == "completed"
        assert clean["data"]["diff"] == "" and clean["data"]["files"] == []

        await s.execute("coder.shell", {"command": "echo three >> a.txt && echo fresh > new.txt"})
        result = await s.execute("coder.input", {"text": "/diff"})
        assert result["status"] == "completed"
        assert "a.txt |" in result["reply"]  # the stat
        assert "+three" in result["reply"]  # the patch
        assert "new.txt" in result["reply"]  # the untracked file is mentioned
        assert result["data"]["kind"] == "diff"
        assert "a.txt" in result["data"]["files"]
        assert "+three" in result["data"]["diff"] and "a.txt" in result["data"]["stat"]
        assert "b.txt" not in result["data"]["diff"]
        # /diff only reads
        status = [line for line in git(root, "status", "--porcelain").splitlines() if ".coder" not in line]
        assert status == [" M a.txt", "?? new.txt"]


async def test_diff_outside_a_git_repository_is_an_error_result(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "f.txt").write_text("x\n")
    async with lsp_session(root) as s:
        result = await s.execute("coder.diff", {})
        assert (result["mode"], result["status"]) == ("error", "failed")
        assert "not a git repository" in result["error"]["message"].lower()
