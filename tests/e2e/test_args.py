"""Protocol misuse in executeCommand arguments: JSON-RPC InvalidParams naming the key."""

from __future__ import annotations

import pytest
from harness import JsonRpcException, init_git, lsp_session

INVALID_PARAMS = -32602


async def _invalid(s, command: str, raw_args: list) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await s.execute(command, raw_args=raw_args)
    assert caught.value.code == INVALID_PARAMS, caught.value
    return str(caught.value)


async def test_bad_arguments_are_invalid_params_naming_the_key(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        message = await _invalid(s, "coder.input", ["/help"])
        assert "object" in message

        message = await _invalid(s, "coder.input", [{"text": "/help", "colour": "red"}])
        assert "colour" in message

        message = await _invalid(s, "coder.input", [{"text": 42}])
        assert "text" in message

        message = await _invalid(s, "coder.input", [{}])
        assert "text" in message

        message = await _invalid(s, "coder.shell", [{"command": ["ls", "-l"]}])
        assert "command" in message

        message = await _invalid(s, "coder.help", [{"args": 3}])
        assert "args" in message

        message = await _invalid(s, "coder.undo", [{"args": "--all", "force": True}])
        assert "force" in message

        message = await _invalid(s, "coder.interrupt", [{"sessionId": 7}])
        assert "sessionId" in message

        # an empty agentId names no subagent: an error, never an interrupt of the session
        message = await _invalid(s, "coder.interrupt", [{"agentId": " "}])
        assert "agentId" in message

        message = await _invalid(s, "coder.input", [{"text": "/help"}, {"text": "/help"}])
        assert "one argument" in message or "2" in message

        message = await _invalid(s, "coder.listCommands", [[]])
        assert "object" in message

        # Nothing ran, and the server still answers.
        assert not s.events
        ok = await s.execute("coder.input", {"text": "/help"})
        assert ok["status"] == "completed"
        plain = await s.execute("coder.help")  # no argument at all is fine
        assert plain["status"] == "completed"
