"""Line diffs and how a line position moves through one.

Both the agent's writes and the user's typing reach `AgentLines` as "the text was this, it is
now that". A keystroke changes one line of a long file, so the common head and tail are cut
first (string compares, in C) and `difflib` only sees the middle.

A position is a line boundary (0..len). Where an insertion sits right at it, the boundary can
move before the inserted lines ("outer": the range grows to hold them, as when the agent
writes next to its own lines) or after them ("inner": the range keeps its own lines only, as
when the user adds a line above the agent's).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Literal, NamedTuple

Side = Literal["outer", "inner"]


class Op(NamedTuple):
    """`difflib` opcode: old lines [i1, i2) became new lines [j1, j2)."""

    tag: str
    i1: int
    i2: int
    j1: int
    j2: int


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def opcodes(old: list[str], new: list[str]) -> list[Op]:
    """The opcodes of old -> new (equal blocks included), head and tail cut before difflib."""
    limit = min(len(old), len(new))
    head = _common(lambda k: old[:k] == new[:k], limit)
    tail = _common(lambda k: old[len(old) - k :] == new[len(new) - k :], limit - head)
    mid_old, mid_new = old[head : len(old) - tail], new[head : len(new) - tail]
    out: list[Op] = [Op("equal", 0, head, 0, head)] if head else []
    if mid_old or mid_new:
        matcher = difflib.SequenceMatcher(None, mid_old, mid_new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            out.append(Op(tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        out.append(Op("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return out


_ODD_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _odd(text: str) -> bool:
    """Whether `text` holds a line break `splitlines` knows other than "\n" (`in`: memchr fast)."""
    return any(c in text for c in _ODD_BREAKS)


def text_opcodes(old: str, new: str) -> list[Op]:
    """`opcodes(lines(old), lines(new))` for a small change to a long text, without splitting
    it: the common head and tail are found on the text (binary searches of string compares),
    cut back to whole lines, and counted; only the middle is split and diffed."""
    if _odd(old) or _odd(new):
        return opcodes(lines(old), lines(new))  # line breaks other than "\n": the slow, exact way
    limit = min(len(old), len(new))
    same = _common(lambda k: old[:k] == new[:k], limit)
    cut = old.rfind("\n", 0, same) + 1  # whole lines before it are the same in both
    back = _common(lambda k: old[len(old) - k :] == new[len(new) - k :], limit - cut)
    start = len(old) - back
    nl = old.find("\n", start)  # the common tail from the line after the first newline in it
    if back == 0 or nl < 0:
        a_end, b_end = len(old), len(new)
    else:
        a_end, b_end = nl + 1, len(new) - (len(old) - nl - 1)
    head, tail = old.count("\n", 0, cut), old.count("\n", a_end) + (0 if old.endswith("\n") or not old else 1)
    if a_end == len(old):
        tail = 0
    mid = opcodes(lines(old[cut:a_end]), lines(new[cut:b_end]))
    total_old, total_new = head + len(lines(old[cut:a_end])) + tail, head + len(lines(new[cut:b_end])) + tail
    out: list[Op] = [Op("equal", 0, head, 0, head)] if head else []
    out += [Op(o.tag, o.i1 + head, o.i2 + head, o.j1 + head, o.j2 + head) for o in mid]
    if tail:
        out.append(Op("equal", total_old - tail, total_old, total_new - tail, total_new))
    return out


def _common(same: Callable[[int], bool], limit: int) -> int:
    """The largest k <= limit with same(k) (same is monotone): a binary search of list
    compares, each a C loop, instead of a Python loop over every line."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if same(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def changed(ops: list[Op]) -> list[Op]:
    return [o for o in ops if o.tag != "equal"]


def shift(ops: list[Op], start: int, end: int) -> tuple[int, int]:
    """(start, end) of a range moved through `ops` the "inner" way: a range wholly before or
    after every change moves by arithmetic (most ranges, at each keystroke), others map."""
    edits = changed(ops)
    if not edits or end <= edits[0].i1:
        return start, end
    if start >= edits[-1].i2:
        delta = ops[-1].j2 - ops[-1].i2
        return start + delta, end + delta
    new_start = map_start(ops, start, "inner")
    return new_start, max(new_start, map_end(ops, end, "inner"))


def map_start(ops: list[Op], x: int, side: Side) -> int:
    """Where the boundary `x` (a range's first line) lands in the new text."""
    found: list[int] = []
    for o in ops:
        if o.i1 == o.i2 == x and o.tag != "equal":  # an insertion right at x
            found.append(o.j1 if side == "outer" else o.j2)
        elif o.i1 <= x < o.i2:
            found.append(o.j1 + x - o.i1 if o.tag == "equal" else o.j1)
    if not found:
        return ops[-1].j2 if ops else x
    return min(found) if side == "outer" else max(found)


def map_end(ops: list[Op], x: int, side: Side) -> int:
    """Where the boundary `x` (a range's end, exclusive) lands in the new text."""
    found: list[int] = []
    for o in ops:
        if o.i1 == o.i2 == x and o.tag != "equal":
            found.append(o.j2 if side == "outer" else o.j1)
        elif o.i1 < x <= o.i2:
            found.append(o.j1 + x - o.i1 if o.tag == "equal" else o.j2)
    if not found:
        return 0 if x == 0 else x
    return max(found) if side == "outer" else min(found)


def touches(op: Op, start: int, end: int) -> bool:
    """Whether a change lands inside the range [start, end) (an insertion strictly inside;
    a change of a zero-length range's neighbourhood: at it)."""
    if op.i1 == op.i2:
        return start < op.i1 < end or start == end == op.i1
    if start == end:
        return op.i1 <= start <= op.i2
    return op.i1 < end and start < op.i2


def unified(old: list[str], new: list[str], name: str) -> list[tuple[int, int, list[str]]]:
    """The hunks of a unified diff (one line of context): (first new line, new line count,
    the hunk's lines with its `@@` header)."""
    out: list[tuple[int, int, list[str]]] = []
    body = list(difflib.unified_diff(old, new, f"a/{name}", f"b/{name}", n=1, lineterm=""))
    current: list[str] | None = None
    for line in body[2:]:
        if line.startswith("@@"):
            plus = line.split()[2][1:]
            first, _, count = plus.partition(",")
            start = int(first) - 1 if count != "0" else int(first)
            current = [line]
            out.append((max(start, 0), int(count) if count else 1, current))
        elif current is not None:
            current.append(line.rstrip("\r\n"))
    return out
