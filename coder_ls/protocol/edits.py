"""File edits as the engine describes them; the LSP edge turns them into a WorkspaceEdit."""

from __future__ import annotations

from typing import Literal

import msgspec


class TextEdit(msgspec.Struct, frozen=True):
    """Replace [start, end) (0-based line, UTF-16 character) with `new_text`."""

    start_line: int
    start_character: int
    end_line: int
    end_character: int
    new_text: str


class FileChange(msgspec.Struct, frozen=True):
    """One file's change. `path` is absolute.

    kind "create": a new file with `new_text` (edits empty).
    kind "edit": `edits` against `base_text` (the text the edits were computed from:
    the open buffer when the document is open, else the file on disk); `new_text` is
    the whole result, used when the client has no applyEdit.
    """

    path: str
    kind: Literal["create", "edit"]
    new_text: str
    edits: tuple[TextEdit, ...] = ()
    base_version: int | None = None  # the open document's version the edits target


class EditRequest(msgspec.Struct, frozen=True):
    label: str
    changes: tuple[FileChange, ...]
    # The workspace root the changes must stay in: the edge checks, before it hands the edit
    # to the editor and after the editor answers, that no folder on the way has become a link
    # leading out, and its own disk write (`fsutil.write_atomic`) is bounded by it.
    root: str
    # The edit is the approval question: the editor shows it for review (a change
    # annotation with needsConfirmation) and the user accepts or unchecks its parts.
    needs_confirmation: bool = False
    # How long the user may take to answer (a review): then the question is withdrawn.
    timeout_seconds: float | None = None


class EditOutcome(msgspec.Struct, frozen=True):
    applied: bool
    reason: str | None = None  # why not, when the client said so
    written_to_disk: bool = False  # the server wrote every file itself (not open, or no applyEdit)
    timed_out: bool = False  # not answered within `timeout_seconds`: withdrawn, not applied
    failed: bool = False  # not the user's answer: it could not be written (e.g. a link leading out)


class Finding(msgspec.Struct, frozen=True):
    """One finding of `/review`, published as a diagnostic (source `coder`). `path` is
    absolute; lines are 1-based and inclusive."""

    path: str
    line: int
    message: str
    severity: Literal["error", "warning", "information", "hint"] = "warning"
    end_line: int | None = None
