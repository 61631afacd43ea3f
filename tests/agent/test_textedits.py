from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coder_ls.agent.textedits import apply_edits, minimal_edits, split_lines, utf16_len
from coder_ls.protocol.edits import TextEdit


def apply_utf16(old: str, edits: tuple[TextEdit, ...]) -> str:
    """An independent applier: positions resolved on UTF-16 encoded lines."""
    lines = re.split(r"(\r\n|\r|\n)", old)
    starts = [0]  # UTF-16 offsets of each line start
    units = 0
    for i, part in enumerate(lines):
        units += len(part.encode("utf-16-le")) // 2
        if i % 2 == 1:
            starts.append(units)
    data = old.encode("utf-16-le")

    def off(line: int, ch: int) -> int:
        return (starts[line] + ch) * 2

    for e in sorted(edits, key=lambda e: (e.start_line, e.start_character), reverse=True):
        a, b = off(e.start_line, e.start_character), off(e.end_line, e.end_character)
        data = data[:a] + e.new_text.encode("utf-16-le") + data[b:]
    return data.decode("utf-16-le")


PIECES = ["a", "b", "xy", " ", "\n", "\r\n", "\r", "😀", "é", "\t", "def f():", "\u2028", "\x0c"]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(texts, texts)
def test_minimal_edits_round_trip(old: str, new: str) -> None:
    edits = minimal_edits(old, new)
    assert apply_edits(old, edits) == new
    assert apply_utf16(old, edits) == new


@settings(max_examples=200, deadline=None)
@given(texts, texts, texts)
def test_minimal_edits_on_shared_context(prefix: str, middle: str, suffix: str) -> None:
    old = prefix + "\nline one\nline two\n" + suffix
    new = prefix + "\nline one\n" + middle + "line two\n" + suffix
    assert apply_utf16(old, minimal_edits(old, new)) == new


def test_small_change_gives_small_edit() -> None:
    old = "".join(f"line {i}\n" for i in range(100))
    new = old.replace("line 50\n", "line fifty\n")
    edits = minimal_edits(old, new)
    assert edits == (TextEdit(50, 5, 50, 7, "fifty"),)


def test_emoji_positions_are_utf16() -> None:
    edits = minimal_edits("😀😀x\n", "😀😀y\n")
    assert edits == (TextEdit(0, 4, 0, 5, "y"),)
    assert utf16_len("😀") == 2


def test_crlf_pair_is_never_split() -> None:
    old, new = "a\r\nb\r\n", "a\nb\r\n"
    edits = minimal_edits(old, new)
    assert edits == (TextEdit(0, 1, 1, 0, "\n"),)


@pytest.mark.parametrize(
    ("old", "new"),
    [("", ""), ("", "x\n"), ("x\n", ""), ("no newline", "no newline\n"), ("a\nb", "a\nb\nc")],
)
def test_edge_cases(old: str, new: str) -> None:
    assert apply_edits(old, minimal_edits(old, new)) == new
    assert minimal_edits(old, old) == ()


def test_apply_edits_rejects_bad_positions() -> None:
    with pytest.raises(ValueError):
        apply_edits("ab", [TextEdit(0, 5, 0, 6, "x")])
    with pytest.raises(ValueError):
        apply_edits("😀", [TextEdit(0, 1, 0, 1, "x")])  # inside a surrogate pair
    with pytest.raises(ValueError):
        apply_edits("abcd", [TextEdit(0, 0, 0, 3, "x"), TextEdit(0, 2, 0, 4, "y")])


def test_split_lines_uses_lsp_breaks_only() -> None:
    assert split_lines("a\x0cb\r\nc\rd\n") == ["a\x0cb", "c", "d"]
    assert split_lines("") == []
