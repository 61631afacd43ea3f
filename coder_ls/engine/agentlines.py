"""Lines a submission wrote, for the "Coder: Revert agent change" code action.

A submission recorded in the checkpoints (an agent turn, a `!cmd`) changed a file from
`before` to `after`. The hunks of that change whose written lines are still in the file,
unchanged and in one piece, can be put back one by one: each becomes an edit replacing
those lines with what was there before. Hunks the user has since edited are left alone
(reverting them would lose the user's typing); deletions offer nothing (no line to point
at). Pure functions here; `Checkpoints.submission_texts` supplies the texts.
"""

from __future__ import annotations

import difflib

import msgspec

MAX_LINES = 20_000  # larger files get no revert actions (a diff per code-action request)


class RevertHunk(msgspec.Struct, frozen=True):
    """Replace lines [start_line, end_line) of the current text with `old_text`."""

    start_line: int
    end_line: int
    old_text: str
    submission_id: str


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _after_to_current(after: list[str], current: list[str]) -> dict[int, int]:
    """after line index -> current line index, for the lines both hold unchanged."""
    mapping: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, after, current, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            mapping[block.a + k] = block.b + k
    return mapping


def revert_hunks(
    before: str, after: str, current: str, first_line: int, last_line: int, submission_id: str
) -> list[RevertHunk]:
    """The hunks of `before -> after` still intact in `current` that touch current lines
    `first_line..last_line` (inclusive, 0-based)."""
    b, a, c = _lines(before), _lines(after), _lines(current)
    if max(len(b), len(a), len(c)) > MAX_LINES:
        return []
    to_current = _after_to_current(a, c) if a != c else {i: i for i in range(len(a))}
    out: list[RevertHunk] = []
    matcher = difflib.SequenceMatcher(None, b, a, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or j1 == j2:
            continue
        mapped = [to_current.get(j) for j in range(j1, j2)]
        if any(m is None for m in mapped):
            continue  # the user changed some of these lines since
        start = mapped[0]
        assert start is not None
        if mapped != list(range(start, start + (j2 - j1))):
            continue  # no longer in one piece
        end = start + (j2 - j1)
        if end - 1 < first_line or start > last_line:
            continue
        old = "".join(b[i1:i2])
        if end == len(c) and c and not c[-1].endswith("\n") and old.endswith("\n"):
            old = old[:-1]  # the file's last line has no newline: keep it that way
        out.append(RevertHunk(start, end, old, submission_id))
    return out
