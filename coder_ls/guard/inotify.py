"""Linux inotify through ctypes, read on the event loop: which watched names changed.

The agent's shell must learn at once when a process outside the sandbox replaces or removes
an entry a pin sits on (`guard/pins.py`): the kernel then detaches the pin and the name is
writable inside. Polling would leave that window open for a whole period; a reader on the
inotify descriptor (`loop.add_reader`) runs as soon as the kernel queues the event, on the
loop's own thread: no thread, no timer.

`NameWatch` watches folders for the creation, removal or renaming of given names in them
(and for the folders themselves going away), and calls `on_change(path)` for each. An
overflowed queue, or a watch the kernel dropped, is reported as a change of the folder:
the caller must assume the worst.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import struct
from collections.abc import Callable, Mapping
from typing import Any

IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
# what a name in a watched folder may undergo; and what the folder itself may
NAME_EVENTS = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
SELF_EVENTS = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len


def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    return libc


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


class NameWatch:
    """Watches `names` (folder -> names in it); `on_change(path)` for each one that changed.

    Raises OSError when inotify is not available (the caller then does without pins)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        names: Mapping[str, frozenset[str]],
        on_change: Callable[[str], None],
    ) -> None:
        self._loop = loop
        self._on_change = on_change
        self._wds: dict[int, tuple[str, frozenset[str]]] = {}
        libc = _libc()
        self._fd = _check(libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC), "inotify_init1")
        try:
            for folder, wanted in names.items():
                mask = NAME_EVENTS | SELF_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW
                wd = _check(libc.inotify_add_watch(self._fd, os.fsencode(folder), mask), f"watch {folder}")
                self._wds[wd] = (folder, frozenset(wanted))
            loop.add_reader(self._fd, self._read)
        except BaseException:
            os.close(self._fd)
            raise
        self._open = True

    def _read(self) -> None:
        hits: list[str] = []
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                break
            except OSError:
                hits.append("(inotify)")
                break
            hits += self._parse(data)
            if len(data) < 32 * 1024:
                break
        for path in dict.fromkeys(hits):
            self._on_change(path)

    def _parse(self, data: bytes) -> list[str]:
        out: list[str] = []
        at = 0
        while at + _HEADER.size <= len(data):
            wd, mask, _cookie, size = _HEADER.unpack_from(data, at)
            raw = data[at + _HEADER.size : at + _HEADER.size + size]
            at += _HEADER.size + size
            if mask & IN_Q_OVERFLOW:
                out.append("(inotify queue overflow)")
                continue
            folder, wanted = self._wds.get(wd, ("", frozenset()))
            if not folder:
                continue
            if mask & SELF_EVENTS:
                out.append(folder)
                continue
            name = os.fsdecode(raw.rstrip(b"\0"))
            if mask & NAME_EVENTS and name in wanted:
                out.append(os.path.join(folder, name))
        return out

    def close(self) -> None:
        if not getattr(self, "_open", False):
            return
        self._open = False
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._fd)
        with contextlib.suppress(OSError):
            os.close(self._fd)
