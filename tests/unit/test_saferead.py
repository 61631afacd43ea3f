"""The one regular-file reader (`coder_ls/saferead.py`): what it refuses, where it stops,
and that a streamed line range gives the lines a whole read would."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coder_ls.saferead import TooLarge, UnreadableFile, read_line_range, read_regular_file


def test_non_regular_files_are_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "fifo")  # no writer: a blocking open would wait forever
    (tmp_path / "link").symlink_to("/dev/zero")
    for path, what in [(tmp_path / "fifo", "FIFO"), (tmp_path / "link", "character device"), (tmp_path, "directory")]:
        with pytest.raises(UnreadableFile, match=what):
            read_regular_file(path)
        with pytest.raises(UnreadableFile, match=what):
            read_line_range(path, 1, 5, max_scan_bytes=1 << 20)


def test_missing_is_none_and_a_link_can_be_refused(tmp_path):
    assert read_regular_file(tmp_path / "nope") is None
    assert read_regular_file(tmp_path / "nope" / "deeper") is None
    (tmp_path / "real").write_text("x")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert read_regular_file(tmp_path / "alias") == b"x"
    with pytest.raises(UnreadableFile, match="symbolic link"):
        read_regular_file(tmp_path / "alias", follow_symlinks=False)


def test_the_byte_cap_is_never_passed(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"a" * 1001)
    with pytest.raises(TooLarge):
        read_regular_file(big, 1000)
    assert read_regular_file(big, 1001) == b"a" * 1001


def test_a_line_range_stops_reading_and_cuts_long_lines(tmp_path):
    huge = tmp_path / "huge"
    with huge.open("wb") as f:
        f.write(b"one\ntwo\n" + b"x" * 300_000 + b"\nfour\n")
        f.truncate(1 << 40)  # a terabyte of holes after the text
    got = read_line_range(huge, 2, 2, max_scan_bytes=1 << 30, max_line_bytes=100)
    assert got is not None
    assert got.lines == [b"two", b"x" * 100] and got.total is None and got.size == 1 << 40
    capped = read_line_range(huge, 10, 1, max_scan_bytes=1 << 20)
    assert capped is not None and capped.lines == [] and capped.total is None


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab\n\r", max_size=60),
    first=st.integers(1, 12),
    count=st.integers(1, 12),
)
def test_a_streamed_range_matches_splitting_the_whole_file(text: str, first: int, count: int) -> None:
    data = text.replace("\r", "\r\n").encode()  # \r only before \n: the LSP splits a lone \r too
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f"
        path.write_bytes(data)
        got = read_line_range(path, first, count, max_scan_bytes=1 << 20, count_to_end=True)
    lines = data.decode().replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert got is not None
    assert [b.decode() for b in got.lines] == lines[first - 1 : first - 1 + count]
    assert got.total == len(lines)


def test_a_scripted_provider_file_that_is_a_fifo_is_a_config_error(tmp_path):
    from coder_ls.llm.base import ProviderError
    from coder_ls.llm.scripted import ScriptedProvider

    os.mkfifo(tmp_path / "script.json")
    with pytest.raises(ProviderError, match="FIFO"):
        ScriptedProvider.from_file(tmp_path / "script.json")
    with pytest.raises(ProviderError, match="No such file"):
        ScriptedProvider.from_file(tmp_path / "missing.json")
