"""Configuration layers: bad files and options never stop the server; one clear message; live changes."""

from __future__ import annotations

import asyncio

from e2e_support import error_messages, write_json
from harness import init_git, lsp_session, trust_workspace_config
from lsprotocol import types


async def _settle(s) -> None:
    """A round trip, so that notifications sent before it have arrived."""
    await s.execute("coder.help", {})


async def test_config_file_that_is_not_json(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    config = root / ".coder" / "config.json"
    config.parent.mkdir()
    config.write_text('{"model": "claude-opus-4-1", oops')
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": "!echo alive"})
        assert result["rawOutput"] == "alive\n"
        await s.execute("coder.permissions", {})
        await s.execute("coder.sessions", {})
        errors = error_messages(s)
        assert len(errors) == 1
        assert str(config) in errors[0]
        assert [m.type for m in s.client.messages].count(types.MessageType.Error) == 1
        # everything else is the default
        assert (await s.execute("coder.model", {}))["data"]["current"] == "sonnet"
        # and the broken file is never overwritten by a command that saves
        await s.execute("coder.permissions", {"args": "strict"})
        assert config.read_text() == '{"model": "claude-opus-4-1", oops'
        assert len(error_messages(s)) == 1


async def test_ill_typed_key_names_the_key_and_the_default_applies(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    config = root / ".coder" / "config.json"
    write_json(config, {"shell": {"timeoutSeconds": "x", "maxOutputBytes": 8}, "permissions": "strict"})
    async with lsp_session(root) as s:
        await _settle(s)
        errors = error_messages(s)
        assert len(errors) == 1
        assert "shell.timeoutSeconds" in errors[0]
        assert str(config) in errors[0]
        # the good keys of the same file still apply
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "strict"
        capped = await s.execute("coder.input", {"text": "!sleep 0.3; echo 0123456789abcdef"})
        assert capped["status"] == "completed"  # the default timeout, not "x"
        assert capped["rawOutput"].startswith("01234567\n[output truncated")


async def test_bad_initialization_options_fall_back_with_one_message(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    options = {"permissions": "everything", "shell": {"maxOutputBytes": -5}, "timezone": "Mars/Olympus"}
    async with lsp_session(root, init_options=options) as s:
        await _settle(s)
        errors = error_messages(s)
        assert len(errors) == 1
        assert "initializationOptions" in errors[0]
        for key in ("permissions", "shell.maxOutputBytes", "timezone"):
            assert key in errors[0]
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "balanced"
        out = await s.execute("coder.input", {"text": "!seq 1 50"})
        assert "truncated" not in out["rawOutput"] and out["rawOutput"].endswith("50\n")
        assert (await s.execute("coder.sessions", {}))["data"]["timezone"] == "Asia/Shanghai"


async def test_did_change_configuration_changes_behaviour(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        before = await s.execute("coder.input", {"text": "!seq 1 100"})
        assert "truncated" not in before["rawOutput"]

        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"shell": {"maxOutputBytes": 6}}})
        )
        after = await s.execute("coder.input", {"text": "!seq 1 100"})
        assert after["rawOutput"].startswith("1\n2\n3\n[output truncated")

        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"shell": {"maxOutputBytes": "lots"}}})
        )
        await _settle(s)
        errors = error_messages(s)
        assert len(errors) == 1 and "shell.maxOutputBytes" in errors[0]
        back = await s.execute("coder.input", {"text": "!seq 1 100"})
        assert "truncated" not in back["rawOutput"]

        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
        )
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "yolo"


async def test_layers_user_file_then_workspace_then_init_options(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    user = tmp_path / f".xdg-{root.name}" / "coder" / "config.json"  # the harness's XDG_CONFIG_HOME
    write_json(user, {"permissions": "strict", "timezone": "Europe/Paris", "shell": {"maxOutputBytes": 4}})
    write_json(root / ".coder" / "config.json", {"permissions": "auto-edit"})
    trust_workspace_config(root)  # the user ran /trust: the file may widen the user's preset
    async with lsp_session(root, init_options={"shell": {"maxOutputBytes": 12}}) as s:
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "auto-edit"
        assert (await s.execute("coder.sessions", {}))["data"]["timezone"] == "Europe/Paris"
        out = await s.execute("coder.input", {"text": "!printf 'abcdefghijklmnopqrstuvwxyz'"})
        assert out["rawOutput"].startswith("abcdefghijkl\n[output truncated")
        await asyncio.sleep(0)
        assert error_messages(s) == []
