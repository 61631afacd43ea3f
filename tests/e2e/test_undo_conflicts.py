"""`/undo` reverts a path only while it still holds what the submission left there.

A path changed since (on disk after the submission, or in the editor while it ran) is kept and
listed in `data.conflicts` (and in the reply); the other paths of the submission are reverted.
"""

from __future__ import annotations

import asyncio

from harness import init_git, lsp_session
from lsprotocol import types

FILES = {"a.txt": "alpha\n", "b.txt": "bravo\n", "c.txt": "charlie\n"}


async def test_paths_changed_on_disk_after_the_submission_are_kept(tmp_path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    async with lsp_session(root) as s:
        await s.execute(
            "coder.input",
            {"text": "!echo agent > a.txt; echo agent > b.txt; rm c.txt; echo n > new.txt; echo m > made.txt"},
        )
        (root / "a.txt").write_text("user edit after\n")  # modified since
        (root / "c.txt").write_text("user recreated\n")  # deleted by the submission, recreated since
        (root / "made.txt").write_text("user kept working on it\n")  # created by it, changed since
        result = await s.execute("coder.undo", {})
        assert result["status"] == "completed"
        data = result["data"]
        assert data["conflicts"] == ["a.txt", "c.txt", "made.txt"]
        assert data["restored"] == ["b.txt"] and data["removed"] == ["new.txt"]
        for path in data["conflicts"]:
            assert path in result["reply"]
    assert (root / "a.txt").read_text() == "user edit after\n"
    assert (root / "b.txt").read_text() == "bravo\n"
    assert (root / "c.txt").read_text() == "user recreated\n"
    assert (root / "made.txt").read_text() == "user kept working on it\n"
    assert not (root / "new.txt").exists()


async def test_a_file_deleted_since_is_not_recreated(tmp_path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!echo agent > a.txt; echo agent > b.txt"})
        (root / "a.txt").unlink()
        result = await s.execute("coder.undo", {})
        assert result["data"]["conflicts"] == ["a.txt"]
        assert result["data"]["restored"] == ["b.txt"]
    assert not (root / "a.txt").exists()


def _change(s, uri: str, version: int, text: str) -> None:
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def test_a_buffer_edited_while_the_submission_ran_is_kept(tmp_path) -> None:
    root = init_git(tmp_path / "ws", FILES)
    async with lsp_session(root) as s:
        uri_a = s.open("a.txt", "alpha\n")
        uri_b = s.open("b.txt", "bravo\n")
        marker = tmp_path / "started"
        _, done = s.start(
            "coder.input",
            {"text": f"!touch {marker}; sleep 1; echo agent > a.txt; echo agent > b.txt; echo agent > c.txt"},
        )
        await s.wait_for(marker.exists)
        _change(s, uri_a, 2, "alpha, typed by the user\n")  # the user types in a.txt meanwhile
        await asyncio.sleep(1.2)
        _change(s, uri_b, 2, "agent\n")  # b.txt's buffer follows the disk (e.g. an editor reload)
        result = await done
        assert result["status"] == "completed"
        undo = await s.execute("coder.undo", {})
        assert undo["data"]["conflicts"] == ["a.txt"]
        assert undo["data"]["restored"] == ["b.txt", "c.txt"]
        assert "a.txt" in undo["reply"]
    assert (root / "a.txt").read_text() == "agent\n"
    assert (root / "b.txt").read_text() == "bravo\n"
    assert (root / "c.txt").read_text() == "charlie\n"
