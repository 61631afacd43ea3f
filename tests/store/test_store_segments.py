"""Log segments: a long session's closed segments are compressed and still read back;
one writer per log (the lock); a file-size limit moves the writer to a new segment."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.store.index import SessionIndex
from coder_ls.store.log import LogBusy, MessageEntry, SessionLog, list_log_ids, read_log
from coder_ls.store.segments import total_size


def user(text: str) -> MessageEntry:
    return MessageEntry(message=Message(role="user", content=[TextBlock(text=text)]))


def texts(root: Path, sid: str) -> list[str]:
    return [m.text() for m in read_log(root / ".coder" / "sessions" / f"{sid}.jsonl").context]


def test_closed_segments_are_compressed_and_read_back_in_order(tmp_path: Path) -> None:
    sent = [f"message {n}: " + "lorem ipsum dolor sit amet " * 40 for n in range(300)]
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.segment_bytes = 16 * 1024
        for text in sent[:200]:
            log.append(user(text))
        size = log.size
    names = sorted(p.name for p in (tmp_path / ".coder" / "sessions").iterdir())
    gz = [n for n in names if n.endswith(".gz")]
    assert "s.jsonl" in names and len(gz) >= 3, names  # segment 0 plain, closed ones compressed
    assert not [n for n in names if n.endswith(".tmp")]
    on_disk = sum((tmp_path / ".coder" / "sessions" / n).stat().st_size for n in names if n.startswith("s.jsonl"))
    assert on_disk < size / 4  # repetitive text: compressed well
    assert total_size(tmp_path / ".coder" / "sessions" / "s.jsonl") == size
    assert texts(tmp_path, "s") == sent[:200]

    with SessionLog.open(tmp_path, "s") as log:  # appends after the last segment
        assert log.size == size
        for text in sent[200:]:
            log.append(user(text))
    assert texts(tmp_path, "s") == sent
    assert list_log_ids(tmp_path) == ["s"]


def test_the_index_does_not_see_a_compressed_log_as_behind(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.segment_bytes = 4096
        for n in range(100):
            log.append(user(f"text {n} " * 30))
    with SessionIndex(tmp_path) as index:
        assert index.get("s") is not None and index.get("s").message_count == 100  # type: ignore[union-attr]
        assert index.refresh_from_logs().indexed == 0


def test_one_writer_per_log(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w"):
        with pytest.raises(LogBusy):
            SessionLog.open(tmp_path, "s")
        with pytest.raises(LogBusy):  # not even through another descriptor of this process
            SessionLog.open(tmp_path, "s")
    with SessionLog.open(tmp_path, "s") as log:
        log.append(user("after the first writer closed"))
    assert texts(tmp_path, "s") == ["after the first writer closed"]


def test_efbig_moves_to_a_new_segment_and_cuts_the_partial_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import coder_ls.store.segments as segmod

    real_write = os.write
    limit = {"bytes": 10**9}

    def limited(fd: int, data: object) -> int:
        view = memoryview(data)  # type: ignore[arg-type]
        room = limit["bytes"] - os.fstat(fd).st_size
        if room <= 0:
            raise OSError(errno.EFBIG, "File too large")
        return real_write(fd, view[:room])

    monkeypatch.setattr(segmod.os, "write", limited)
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(user("first"))
        limit["bytes"] = log.size + 30  # the next line does not fit: a partial write, then EFBIG
        log.append(user("second, long enough not to fit in thirty bytes"))
        log.append(user("third"))
        assert log.segments == 3  # the limit is per file: each line past it opened a segment
    sessions = tmp_path / ".coder" / "sessions"
    assert all(p.read_bytes().endswith(b"\n") for p in sessions.glob("s.jsonl*"))  # no partial line kept
    assert texts(tmp_path, "s") == ["first", "second, long enough not to fit in thirty bytes", "third"]
