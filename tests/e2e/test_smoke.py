"""The server starts, lists its commands and answers /help over stdio."""

from __future__ import annotations

from harness import init_git, lsp_session


async def test_help_over_stdio(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "hello\n"})
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": "/help"})
        assert result["mode"] == "command"
        assert result["status"] == "completed"
        assert "/undo" in result["reply"]
        assert result["data"]["kind"] == "help"
