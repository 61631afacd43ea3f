"""`/undo` history shipped in a clone: `.coder/checkpoints/` (the private snapshot
repository and `records.json`) is an ordinary folder a repository can commit. Its records
are not this user's submissions: `/undo` never restores from them (it would write the
repository's chosen "before" content over the user's files). Real server, real client."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import full_caps, init_git, lsp_session


async def test_a_shipped_undo_history_is_not_undone(tmp_path: Path) -> None:
    # the attacker's machine: a submission whose "before" is the content they want
    forge = init_git(tmp_path / "forge", {"a.txt": "EVIL\n"})
    async with lsp_session(forge, caps=full_caps()) as s:
        result = await s.execute("coder.input", {"text": "!printf 'a\\n' > a.txt"})
        assert result["status"] == "completed", result
    assert (forge / ".coder" / "checkpoints" / "records.json").exists()
    # the clone the user opens: the same files, with that history in .coder/checkpoints
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    shutil.copytree(forge / ".coder" / "checkpoints", root / ".coder" / "checkpoints")
    async with lsp_session(root, caps=full_caps()) as s:
        result = await s.execute("coder.input", {"text": "/undo"})
        assert result["status"] == "completed" and "Nothing to undo" in result["reply"], result
        assert (root / "a.txt").read_text() == "a\n"
        # the user's own submission is undone as before
        await s.execute("coder.input", {"text": "!printf 'b\\n' > a.txt"})
        result = await s.execute("coder.input", {"text": "/undo"})
        assert (root / "a.txt").read_text() == "a\n", result
        result = await s.execute("coder.input", {"text": "/undo"})
        assert "Nothing to undo" in result["reply"] and (root / "a.txt").read_text() == "a\n", result
