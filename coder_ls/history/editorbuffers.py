"""What the editor did to its buffers, as far as `/undo` needs to know.

The LSP edge reports each didChange/didSave with the buffer's whole text. `/undo` keeps a path
of the submission when its buffer changed after the submission began and no longer holds what
the submission left there: the user typed in it. A buffer that follows the disk (the agent's own
edits applied through the editor, a reload) matches and does not block the undo.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from coder_ls.history.undofs import SYMLINK, Change, blob_id

MAX_BUFFERS = 4096


class _Note(NamedTuple):
    at: float  # wall-clock time of the change
    text: str | None  # the buffer's text (hashed only when an undo asks); None: the buffer is gone


class EditorBuffers:
    def __init__(self) -> None:
        self._notes: dict[str, _Note] = {}  # workspace-relative path -> last change

    def note(self, root: Path, path: Path, text: str | None) -> None:
        try:
            rel = os.path.relpath(os.path.abspath(path), root)
        except ValueError:
            return
        if rel.startswith("..") or os.path.isabs(rel):
            return
        rel = rel.replace(os.sep, "/")
        self._notes.pop(rel, None)
        self._notes[rel] = _Note(time.time(), text)
        while len(self._notes) > MAX_BUFFERS:
            del self._notes[next(iter(self._notes))]

    def conflicts(self, changes: Sequence[Change], since: float) -> set[str]:
        """The paths among `changes` whose buffer changed from `since` on and differs from what
        the submission left on disk."""
        out: set[str] = set()
        for change in changes:
            note = self._notes.get(change.path)
            if note is None or note.at < since or note.text is None:
                continue
            after = change.after
            left = after.oid if after is not None and after.mode != SYMLINK else None
            if blob_id(note.text.encode("utf-8", "surrogateescape")) != left:
                out.add(change.path)
        return out
