"""`!git clean -fdx` in the workspace keeps the session logs and the checkpoints: the user
can still list and resume the session and undo the last change."""

from __future__ import annotations

from pathlib import Path

from harness import init_git, lsp_session


async def test_sessions_and_undo_survive_git_clean_fdx(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "alpha\n", ".gitignore": "build/\n"})
    async with lsp_session(root) as s:
        first = await s.execute("coder.input", {"text": "!echo changed > a.txt"})
        assert first["status"] == "completed", first
        session_id = first["sessionId"]
        (root / "build").mkdir()
        (root / "build" / "out.o").write_text("obj")
        clean = await s.execute("coder.input", {"text": "!git clean -fdx"})
        assert clean["status"] == "completed", clean
        assert not (root / "build").exists(), "git clean -x really cleaned"
        logs = list((root / ".coder" / "sessions").glob("*.jsonl"))
        assert logs, "the session log was wiped"
        listed = await s.execute("coder.sessions", {})
        assert session_id in [x["id"] for x in listed["data"]["sessions"]], listed
        undo = await s.execute("coder.undo", {})
        assert undo["status"] == "completed", undo
        assert "a.txt" in undo["data"]["restored"], undo
        assert (root / "a.txt").read_text() == "alpha\n"
    async with lsp_session(root) as s2:
        resumed = await s2.execute("coder.resume", {"args": session_id})
        assert resumed["status"] == "completed", resumed
    status = __import__("subprocess").run(
        ["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout
    assert ".coder/sessions" not in status and ".coder/checkpoints" not in status, status
