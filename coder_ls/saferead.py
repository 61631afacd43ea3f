"""The one reader for files whose path comes from the workspace or the model.

The workspace is hostile input: a path may name a FIFO (an `open` that waits for a writer
forever), a device (`/dev/zero` never ends, `/dev/tty` blocks), a directory, or a sparse
file of many gigabytes that costs nothing on disk. So every such read:

- opens with `O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC` (and `O_NOFOLLOW` when the
  caller refuses a link at the path): the open itself never waits;
- asks `fstat` on the open descriptor (not the path, which may be swapped meanwhile) and
  refuses anything but a regular file with a clear `UnreadableFile`;
- reads in chunks and stops at a byte cap (`read_regular_file`), or once it has the lines
  it was asked for (`read_line_range`): a 2 GB file read for five lines reads one chunk.

These functions block on the disk; async callers run them in a worker thread
(`asyncio.to_thread`), so a slow disk never holds the event loop.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

CHUNK = 64 * 1024
DEFAULT_MAX_BYTES = 1024 * 1024


class UnreadableFile(Exception):
    """A file that exists but cannot be used (the message says why)."""


class TooLarge(UnreadableFile):
    """A regular file over the reader's byte cap (never read past it)."""


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path, *, follow_symlinks: bool = True) -> tuple[int, os.stat_result] | None:
    """A blocking-mode descriptor of the regular file at `path` and its `fstat`; None when
    nothing is there. Anything else (a FIFO, a device, a directory, a link when
    `follow_symlinks` is false, an open error) raises `UnreadableFile`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            return None
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise UnreadableFile("is a symbolic link: not followed") from None
        raise UnreadableFile(f"cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(f"{_describe(info.st_mode)}, not a regular file: not read")
        os.set_blocking(fd, True)  # a regular file: reads are plain disk reads from here
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, *, follow_symlinks: bool = True) -> bytes | None:
    """The bytes of the regular file at `path` (None when it does not exist), at most
    `max_bytes`: a larger file raises `UnreadableFile` (it is never read past the cap)."""
    opened = open_regular(path, follow_symlinks=follow_symlinks)
    if opened is None:
        return None
    fd, info = opened
    try:
        if info.st_size > max_bytes:
            raise TooLarge(f"too large ({info.st_size} bytes, at most {max_bytes}): not read")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(CHUNK, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew after the fstat
            raise TooLarge(f"too large (more than {max_bytes} bytes): not read")
        return b"".join(chunks)
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class LineRange:
    """Lines `first`.. of a file, as read by `read_line_range`."""

    lines: list[bytes]  # without their line ending; each cut at `max_line_bytes`
    first: int  # 1-based number of lines[0]
    size: int  # the file's size in bytes (fstat)
    total: int | None  # how many lines the file has, when the read reached its end
    binary: bool  # a NUL byte in the first chunk


def read_line_range(
    path: Path,
    first: int,
    count: int,
    *,
    max_scan_bytes: int,
    max_line_bytes: int = 64 * 1024,
    count_to_end: bool = False,
) -> LineRange | None:
    """Lines `first`..`first+count-1` (1-based, split on `\\n`, a `\\r` before it dropped)
    of the regular file at `path`, streamed: reading stops once they are read (with
    `count_to_end`, at the end of the file, to count its lines) and never goes past
    `max_scan_bytes`. Memory is the lines kept (each cut at `max_line_bytes`) plus one
    chunk, whatever the file's size. None: no file there."""
    opened = open_regular(path)
    if opened is None:
        return None
    fd, info = opened
    last = first + count - 1
    kept: list[bytes] = []
    current = bytearray()  # the kept part of line `line_no`, when it is in range
    tail = 0  # bytes seen since the last newline
    line_no = 1
    scanned = 0
    binary = reached_end = False
    try:
        while scanned < max_scan_bytes:
            chunk = os.read(fd, min(CHUNK, max_scan_bytes - scanned))
            if not chunk:
                reached_end = True
                break
            if scanned == 0 and b"\x00" in chunk[:8192]:
                binary = True
                break
            scanned += len(chunk)
            start = 0
            while start <= len(chunk):
                nl = chunk.find(b"\n", start)
                end = len(chunk) if nl < 0 else nl
                if first <= line_no <= last and len(current) < max_line_bytes:
                    current += chunk[start : min(end, start + max_line_bytes - len(current))]
                tail += end - start
                if nl < 0:
                    break
                if first <= line_no <= last:
                    kept.append(bytes(current).removesuffix(b"\r"))
                current.clear()
                tail = 0
                line_no += 1
                start = nl + 1
            if line_no > last and not count_to_end:
                break
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    total: int | None = None
    if reached_end:
        total = line_no if tail else line_no - 1  # an unterminated last line counts
        if tail and first <= line_no <= last:
            kept.append(bytes(current).removesuffix(b"\r"))
    return LineRange(kept, first, info.st_size, total, binary)


def read_text_or_none(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, *, follow_symlinks: bool = True) -> str | None:
    """The text (UTF-8, bad bytes replaced) of the regular file at `path`, or None when
    there is none or it cannot be used (a FIFO, a device, over `max_bytes`): for files
    that are optional hints (ignore rules, git's pointers, the user's selection)."""
    try:
        data = read_regular_file(path, max_bytes, follow_symlinks=follow_symlinks)
    except UnreadableFile:
        return None
    return None if data is None else data.decode("utf-8", errors="replace")
