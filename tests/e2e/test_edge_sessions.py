"""/sessions and /resume agree: every session /sessions lists can be resumed, and
/resume never accepts what /sessions hides."""

from __future__ import annotations

from pathlib import Path

from harness import init_git, lsp_session


async def test_every_listed_session_can_be_resumed(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!echo first"})  # a session with something in it
        await s.execute("coder.new", {})  # the current session: nothing in it yet
        await s.execute("coder.model", {})  # a command that adds no message
        await s.execute("coder.new", {})
        listing = await s.execute("coder.sessions", {})
        assert listing["status"] == "completed", listing
        listed = listing["data"]["sessions"]
        assert listed, listing
        for info in listed:
            resumed = await s.execute("coder.resume", {"args": info["id"]})
            assert resumed["status"] == "completed", (info, resumed)
            assert resumed["sessionId"] == info["id"]
        ids = {info["id"] for info in listed}
        for info in listed:
            assert info["messageCount"] > 0 or info["current"], info
        assert len(ids) == len(listed)
