"""A session log in segments, and the lock that gives it one writer.

Segments: `<id>.jsonl` holds the header and the first entries; when a write fails with
EFBIG (the file-size limit, `RLIMIT_FSIZE`) the writer cuts the partial line and goes on
in `<id>.jsonl.1`, then `.2`, ... Continuation segments hold entries only; a reader joins
every segment in order (`read_segments`), so `/resume` sees the whole session. Only the
names ending in `.jsonl` are sessions (`list_log_ids`), so a segment is never listed.

The lock: `<id>.lock`, held with `flock` by the one server that writes the log, for as
long as it has the session loaded. A second server that finds it taken does not append
(`SessionManager` opens a fork instead). `flock` belongs to the open file: a server
killed with SIGKILL leaves the file but not the lock, so a stale lock never blocks.
The file itself stays (unlinking a lock file races with the next locker).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def segment_path(first: Path, n: int) -> Path:
    return first if n == 0 else first.with_name(f"{first.name}.{n}")


def segment_paths(first: Path) -> list[Path]:
    """Every segment of the log whose first segment is `first`, in order."""
    out = [first]
    while True:
        nxt = segment_path(first, len(out))
        if not nxt.exists():
            return out
        out.append(nxt)


def read_segments(first: Path) -> bytes:
    """The bytes of every segment, joined. A segment before the last ends at its last
    newline (the writer cuts a partial line before it moves on; a crash could not)."""
    parts: list[bytes] = []
    paths = segment_paths(first)
    for n, path in enumerate(paths):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            if n == 0:
                raise
            break
        if n < len(paths) - 1 and data and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]
        parts.append(data)
    return b"".join(parts)


def total_size(first: Path) -> int:
    """Bytes in every segment (what the index records as the log's size)."""
    return sum(os.stat(p).st_size for p in segment_paths(first))


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
