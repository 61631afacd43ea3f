"""The server's output to the client: one write for what goes out together (`BatchedWriter`)."""

from __future__ import annotations

import asyncio
import logging
import select
import threading
from typing import BinaryIO

log = logging.getLogger(__name__)

__all__ = ["BatchedWriter"]


class BatchedWriter:
    """stdout for pygls: notifications wait up to `HOLD` seconds for company, so the events
    and progress of one agent step (a few turns of the event loop apart) go out in one
    write and wake the client once; whatever the client waits on (a response, a request of
    ours) is written at once, with what is pending before it, in order (`urgent`).
    Outside the event loop's thread (a log record from a worker thread), or with no loop
    running (start-up, shutdown), a message is written at once, after what is pending."""

    HOLD = 0.002

    def __init__(self, stdout: BinaryIO) -> None:
        self._stdout = stdout
        self._pending: list[bytes] = []
        self._lock = threading.Lock()
        self._broken = False
        self._timer: asyncio.TimerHandle | None = None

    def write(self, data: bytes, *, urgent: bool = False) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            if self._broken:  # the client is gone: nothing more reaches it
                return
            self._pending.append(data)
            if loop is not None and not urgent:
                if self._timer is None:
                    self._timer = loop.call_later(self.HOLD, self.flush)
                return
        self.flush()

    def flush(self) -> None:
        with self._lock:
            # A timer still set fires later and finds nothing to write: not cancelled here,
            # as this may be another thread than the loop's.
            self._timer = None
            if not self._pending or self._broken:
                self._pending.clear()
                return
            data = b"".join(self._pending)
            self._pending.clear()
            try:
                self._write_all(data)
                self._stdout.flush()
            except (BrokenPipeError, ConnectionResetError, ValueError):  # the client is gone
                self._broken = True
        # Said outside the lock: a log record may come back here (`window/logMessage`), and
        # is dropped then, the writer being broken. The read loop ends at EOF.
        if self._broken:
            log.error("the connection to the client is lost: shutting down")

    def _write_all(self, data: bytes) -> None:
        """Every byte: with PYTHONUNBUFFERED=1 stdout is a raw FileIO, whose write to a pipe
        returns what went through before a signal interrupted it (a 340 KB reply was cut at
        131,011 bytes, the next message glued on, the client stuck); None on a pipe someone
        made non-blocking, when it is full."""
        view = memoryview(data)
        while view:
            written = self._stdout.write(view)
            if written is None:  # full, non-blocking: wait until it can take more
                select.select([], [self._stdout.fileno()], [], 1.0)
                continue
            view = view[written:]

    def close(self) -> None:
        self.flush()
        self._stdout.close()
