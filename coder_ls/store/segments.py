"""A session log in segments, and the lock that gives it one writer.

Segments: `<id>.jsonl` holds the header and the first entries; when a write fails with
EFBIG (the file-size limit, `RLIMIT_FSIZE`) the writer cuts the partial line and goes on
in `<id>.jsonl.1`, then `.2`, ... Continuation segments hold entries only; a reader joins
every segment in order (`read_segments`), so `/resume` sees the whole session. Only the
names ending in `.jsonl` are sessions (`list_log_ids`), so a segment is never listed.

Closed segments are gzipped: the writer also moves on when a segment passes
`SEGMENT_BYTES` and compresses the one it closed in a thread of its own
(`compress_segment`: `.gz.tmp`, fsync, rename, then the plain file goes), so a long
session's log costs a fraction of its text on disk and `/resume` still reads all of it.
Segment 0 (the header) stays plain. A crash mid-compression leaves the plain segment,
which readers prefer.

The lock: `<id>.lock`, held with `flock` by the one server that writes the log, for as
long as it has the session loaded. A second server that finds it taken does not append
(`SessionManager` opens a fork instead). `flock` belongs to the open file: a server
killed with SIGKILL leaves the file but not the lock, so a stale lock never blocks.
The file itself stays (unlinking a lock file races with the next locker).
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)

TAIL_CHUNK = 64 * 1024
SEGMENT_BYTES = 4 * 1024 * 1024  # a segment past this is closed and compressed


def segment_path(first: Path, n: int) -> Path:
    return first if n == 0 else first.with_name(f"{first.name}.{n}")


def segment_paths(first: Path) -> list[Path]:
    """Every segment of the log whose first segment is `first`, in order (a closed one
    as `<name>.gz` once compressed)."""
    out = [first]
    while True:
        nxt = segment_path(first, len(out))
        if not nxt.exists():
            nxt = _gz(nxt)
            if not nxt.exists():
                return out
        out.append(nxt)


def _gz(path: Path) -> Path:
    return path.with_name(path.name + ".gz")


def _read(path: Path) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def read_segments(first: Path) -> bytes:
    """The bytes of every segment, joined. A segment before the last ends at its last
    newline (the writer cuts a partial line before it moves on; a crash could not)."""
    parts: list[bytes] = []
    paths = segment_paths(first)
    for n, path in enumerate(paths):
        try:
            data = _read(path)
        except FileNotFoundError:
            if n == 0:
                raise
            try:  # compressed in the meantime
                data = _read(_gz(path))
            except FileNotFoundError:
                break
        if n < len(paths) - 1 and data and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]
        parts.append(data)
    return b"".join(parts)


def total_size(first: Path) -> int:
    """Bytes of text in every segment (what the index records as the log's size): a
    compressed segment counts what it holds (the gzip trailer's size)."""
    return sum(text_size(p) for p in segment_paths(first))


def text_size(segment: Path) -> int:
    """Bytes of text in one segment, compressed or not."""
    if not segment.name.endswith(".gz"):
        return os.stat(segment).st_size
    with open(segment, "rb") as f:
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")


def compress_in_background(path: Path) -> threading.Thread:
    """Compress a closed segment in a thread (the writer joins it when it closes)."""

    def run() -> None:
        try:
            compress_segment(path)
        except OSError as exc:  # a full disk: the plain segment stays, readers use it
            log.warning("could not compress %s: %s", path, exc)
            with contextlib.suppress(OSError):
                os.unlink(path.with_name(path.name + ".gz.tmp"))

    thread = threading.Thread(target=run, name=f"gzip {path.name}", daemon=True)
    thread.start()
    return thread


def compress_segment(path: Path) -> None:
    """Replace a closed segment with its gzip (durable before the plain file goes)."""
    tmp = path.with_name(path.name + ".gz.tmp")
    with open(path, "rb") as src:
        data = gzip.compress(src.read(), compresslevel=6, mtime=0)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, _gz(path))
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    os.unlink(path)


def lock_path(first: Path) -> Path:
    return first.with_name(first.name.removesuffix(".jsonl") + ".lock")


def try_lock(first: Path) -> int | None:
    """The descriptor holding the session's lock, or None when another process holds it."""
    fd = os.open(lock_path(first), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def committed_size(path: Path) -> int:
    """Length of the file up to and including its last newline."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        pos = end
        while pos > 0:
            start = max(0, pos - TAIL_CHUNK)
            f.seek(start)
            chunk = f.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                return start + nl + 1
            pos = start
        return 0
