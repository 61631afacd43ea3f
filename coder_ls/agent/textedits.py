"""Minimal LSP-style text edits between two texts, and applying them.

Positions are 0-based lines and UTF-16 code units, as LSP counts them. Lines end
at `\\r\\n`, `\\r` or `\\n` (and nothing else: not at form feeds or U+2028, which
`str.splitlines` would split on).
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import re
from collections.abc import Iterable, Sequence

from coder_ls.protocol.edits import TextEdit

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# Past this many lines on each side of the changed middle, diffing line by line
# costs more than it saves: the middle becomes one edit.
MAX_DIFF_LINES = 5000


def split_lines_keepends(text: str) -> list[str]:
    """The lines of `text` with their line breaks (LSP rules). "" gives []."""
    lines: list[str] = []
    start = 0
    for m in _LINE_BREAK.finditer(text):
        lines.append(text[start : m.end()])
        start = m.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their line breaks (a final break adds no line)."""
    return [_LINE_BREAK.sub("", line) for line in split_lines_keepends(text)]


def utf16_len(text: str) -> int:
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


class _LineIndex:
    """Maps code-point offsets of a text to LSP positions and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for m in _LINE_BREAK.finditer(text):
            self.starts.append(m.end())

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, utf16_len(self.text[self.starts[line] : offset])

    def offset(self, line: int, character: int) -> int:
        if line < 0 or character < 0:
            raise ValueError(f"negative position {line}:{character}")
        if line >= len(self.starts):
            if line == len(self.starts) and character == 0:
                return len(self.text)  # one past the last line: the end of the text
            raise ValueError(f"line {line} is past the end of the text")
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        units = 0
        i = start
        while i < end and units < character:
            units += 2 if ord(self.text[i]) > 0xFFFF else 1
            i += 1
        if units != character and i == end:
            raise ValueError(f"character {character} is past the end of line {line}")
        if units != character:
            raise ValueError(f"position {line}:{character} splits a surrogate pair")
        return i


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    n = min(len(a), len(b)) - limit
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _region_edit(index: _LineIndex, start: int, old_part: str, new_part: str) -> TextEdit | None:
    """One edit replacing `old_part` (at code-point offset `start` of the old text)."""
    if old_part == new_part:
        return None
    pre = _common_prefix(old_part, new_part)
    # Never split a CRLF pair: back off if the prefix ends between \r and \n.
    if pre and old_part[pre - 1] == "\r" and old_part[pre : pre + 1] == "\n":
        pre -= 1
    suf = _common_suffix(old_part, new_part, pre)
    cut = len(old_part) - suf
    if suf and old_part[cut] == "\n" and old_part[cut - 1 : cut] == "\r":
        suf -= 1
    old_mid_end = len(old_part) - suf
    new_mid = new_part[pre : len(new_part) - suf]
    start_line, start_char = index.position(start + pre)
    end_line, end_char = index.position(start + old_mid_end)
    return TextEdit(start_line, start_char, end_line, end_char, new_mid)


def minimal_edits(old: str, new: str) -> tuple[TextEdit, ...]:
    """Small edits that turn `old` into `new` (applied together, against `old`)."""
    if old == new:
        return ()
    index = _LineIndex(old)
    a = split_lines_keepends(old)
    b = split_lines_keepends(new)
    # Trim the lines both share at the start and the end: the diff runs on the middle.
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_mid = a[head : len(a) - tail]
    b_mid = b[head : len(b) - tail]
    line_offsets = [0]
    for line in a:
        line_offsets.append(line_offsets[-1] + len(line))

    def region(i1: int, i2: int, j1: int, j2: int) -> TextEdit | None:
        start = line_offsets[head + i1]
        return _region_edit(index, start, "".join(a_mid[i1:i2]), "".join(b_mid[j1:j2]))

    if len(a_mid) > MAX_DIFF_LINES or len(b_mid) > MAX_DIFF_LINES:
        edit = region(0, len(a_mid), 0, len(b_mid))
        return (edit,) if edit else ()
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    edits: list[TextEdit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edit = region(i1, i2, j1, j2)
        if edit is not None:
            edits.append(edit)
    return tuple(edits)


def apply_edits(old: str, edits: Iterable[TextEdit]) -> str:
    """Apply LSP edits (all against `old`, none overlapping) and return the new text."""
    index = _LineIndex(old)
    spans: list[tuple[int, int, int, str]] = []
    for n, e in enumerate(edits):
        start = index.offset(e.start_line, e.start_character)
        end = index.offset(e.end_line, e.end_character)
        if end < start:
            raise ValueError(f"edit {n} ends before it starts")
        spans.append((start, end, n, e.new_text))
    spans.sort()
    for (_, prev_end, _, _), (start, _, _, _) in itertools.pairwise(spans):
        if start < prev_end:
            raise ValueError("edits overlap")
    out: list[str] = []
    pos = 0
    for start, end, _, text in spans:
        out.append(old[pos:start])
        out.append(text)
        pos = end
    out.append(old[pos:])
    return "".join(out)


def edits_summary(edits: Sequence[TextEdit]) -> str:
    """A short human description: "2 edits (lines 3-5, 10)"."""
    if not edits:
        return "no changes"
    ranges = []
    for e in edits[:5]:
        a, b = e.start_line + 1, e.end_line + 1
        ranges.append(str(a) if a == b else f"{a}-{b}")
    more = ", ..." if len(edits) > 5 else ""
    noun = "edit" if len(edits) == 1 else "edits"
    return f"{len(edits)} {noun} (lines {', '.join(ranges)}{more})"
