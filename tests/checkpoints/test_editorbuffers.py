"""Which of a submission's paths the user typed in, from the editor's didChange/didSave texts."""

from __future__ import annotations

import time
from pathlib import Path

from coder_ls.history.editorbuffers import EditorBuffers
from coder_ls.history.undofs import Change, Entry, blob_id


def change(path: str, after: str | None) -> Change:
    return Change(
        path, Entry("100644", blob_id(b"before\n")), None if after is None else Entry("100644", blob_id(after.encode()))
    )


def test_conflicts_only_for_buffers_changed_since_that_differ(tmp_path: Path) -> None:
    buffers = EditorBuffers()
    buffers.note(tmp_path, tmp_path / "old.txt", "typed before the submission\n")
    time.sleep(0.01)
    since = time.time()
    buffers.note(tmp_path, tmp_path / "typed.txt", "the user's text\n")
    buffers.note(tmp_path, tmp_path / "same.txt", "agent\n")  # follows what the submission left
    buffers.note(tmp_path, tmp_path / "deleted.txt", "still open and edited\n")
    buffers.note(tmp_path, tmp_path / "closed.txt", None)
    buffers.note(tmp_path, tmp_path.parent / "outside.txt", "x\n")
    changes = [change(p, "agent\n") for p in ("old.txt", "typed.txt", "same.txt", "closed.txt", "other.txt")]
    changes.append(change("deleted.txt", None))
    assert buffers.conflicts(changes, since) == {"typed.txt", "deleted.txt"}
