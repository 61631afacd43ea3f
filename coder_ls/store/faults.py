"""What the store says when the disk says no: typed faults with a result code.

The session log is the truth and the index is derived, so a fault names what was kept:

- `DiskFull` (`disk_full`): no space (ENOSPC, EDQUOT, SQLite's "database or disk is
  full"). When the log append failed, the entry was not kept and everything before it
  was; when only the index failed, the log kept everything and the index catches up
  from it (`SessionIndex.reindex`) at the next submission or start.
- `LogTooLarge` (`log_too_large`): a log segment reached the file-size limit (EFBIG,
  `RLIMIT_FSIZE`) and even a fresh segment cannot take the entry.

The engine turns a `StorageFault` into a failed result with its code (`engine/frame.py`);
anything else stays an `internal_error`.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

_FULL = {errno.ENOSPC, errno.EDQUOT}
_SQLITE_FULL = 13  # SQLITE_FULL: also what SQLite reports for EFBIG


class StorageFault(Exception):
    code = "storage_failed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class DiskFull(StorageFault):
    code = "disk_full"


class LogTooLarge(StorageFault):
    code = "log_too_large"


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in _FULL
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL or "disk is full" in str(exc)
    return False


def is_too_large(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.EFBIG


def raise_fault(exc: OSError, path: Path, kept: str) -> None:
    """A full disk or a file-size limit as a `StorageFault` saying what was kept."""
    if is_disk_full(exc):
        message = f"The disk is full ({exc.strerror}): {kept} in the session log {path}. Free some space to go on."
        raise DiskFull(message) from exc
    if is_too_large(exc):
        raise LogTooLarge(
            f"The session log reached the file-size limit ({exc.strerror}) even in a new segment: {kept} "
            f"in {path}. Start a new session with /new."
        ) from exc
