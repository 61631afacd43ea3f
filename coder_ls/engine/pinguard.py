"""The pins of the agent's running sandboxed shell: its layout, its placeholders, its watches.

bubblewrap binds each writable root whole and holds the protected paths with read-only
mounts over it (`guard/pins.py`). A mount sits on one directory entry, and the kernel
detaches it when a process outside the sandbox replaces or removes that entry (an editor's
atomic save, `git checkout`, `git clean`): the name is then writable inside. So, for the
life of one shell:

- `arm` makes the layout (the placeholders it needs taken from the server's registry), then
  watches the folders that hold its entries (`guard/inotify.py`), then checks that nothing
  changed in between; a change seen by the watch calls `on_change` at once (the agent's
  shell kills the sandbox's process group there), and `changed` says so before each
  command, with one `lstat` a held entry besides;
- `watch_mounts`, once the shell's first command is done (bubblewrap has laid every mount
  by then), checks the sandbox's own mount table and keeps it open: the kernel wakes a
  poller of `/proc/<pid>/mountinfo` whenever a mount of that namespace comes or goes, so a
  pin detached by any route (renamed away and back, an inode number used again, a network
  filesystem's revalidation), which the names and identities could miss, calls
  `on_change` too, at no cost per command;
- `disarm` stops watching and gives the placeholders back (removed when no other shell of
  this server uses them).

Without inotify there is no watch: `arm` returns None and the shell is split entry by entry
as under Landlock (nothing created at a root's top), which a host-side change cannot undo.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
from collections.abc import Callable

from coder_ls.guard import lifetime, pins, sandbox
from coder_ls.guard.inotify import NameWatch

ARM_ATTEMPTS = 3  # a layout changed under us this many times in a row: split instead


class PinGuard:
    def __init__(self, on_change: Callable[[str], None]) -> None:
        self._on_change = on_change
        self.layout: pins.Layout | None = None
        self._watch: NameWatch | None = None
        self._mounts: _MountWatch | None = None
        self.fired: str | None = None  # what the watch saw change since `arm`

    def _fire(self, path: str) -> None:
        if self.fired is None:
            self.fired = path
        self._on_change(path)

    def arm(self, box: sandbox.Sandbox) -> pins.Layout | None:
        """A watched layout for a shell about to start in `box`, in place of the last one
        (whose placeholders are given back after the new layout took its own: no churn)."""
        old = self.layout
        self._close_watch()
        self.layout = None
        try:
            return self._arm(box)
        finally:
            if old is not None:
                self._release(old)

    def _arm(self, box: sandbox.Sandbox) -> pins.Layout | None:
        try:
            holder = pins.registry(lifetime.run_dir() / pins.RECORD)
            loop = asyncio.get_running_loop()
        except (OSError, RuntimeError):
            return None
        for _ in range(ARM_ATTEMPTS):
            layout = sandbox.layout(box, holder)
            try:
                watch = NameWatch(loop, layout.watched(), self._fire)
            except OSError:
                holder.release(layout.placeholders)
                return None
            if layout.changed() is None:
                self.layout, self._watch, self.fired = layout, watch, None
                return layout
            watch.close()
            holder.release(layout.placeholders)
        return None

    def changed(self) -> str | None:
        """What changed since `arm` (seen by a watch, or found now by identity), or None."""
        if self.layout is None:
            return None
        return self.fired or self.layout.changed()

    def watch_mounts(self, pid: int) -> str | None:
        """Watch the mount table of the sandbox bubblewrap `pid` made (once per shell, after
        its first command); a held entry it lacks already, or None."""
        if self.layout is None or (self._mounts is not None and self._mounts.pid == pid):
            return None
        self._close_mounts()
        try:
            watch = _MountWatch(asyncio.get_running_loop(), pid, self._mount_event)
        except (OSError, ValueError, RuntimeError):
            return None  # no /proc, or the sandbox is gone: the other two checks remain
        self._mounts = watch
        return self.layout.detached(watch.table)

    def _mount_event(self) -> None:
        watch, layout = self._mounts, self.layout
        if watch is None or layout is None:
            return
        table = watch.read()
        if table is not None and (path := layout.detached(table)):
            self._fire(path)

    def disarm(self) -> None:
        """Stop watching; give the placeholders back."""
        layout, self.layout = self.layout, None
        self._close_watch()
        if layout is not None:
            self._release(layout)

    def _close_watch(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()
        self._close_mounts()

    def _close_mounts(self) -> None:
        mounts, self._mounts = self._mounts, None
        if mounts is not None:
            mounts.close()

    @staticmethod
    def _release(layout: pins.Layout) -> None:
        if layout.placeholders:
            with contextlib.suppress(OSError):
                pins.registry(lifetime.run_dir() / pins.RECORD).release(layout.placeholders)


class _MountWatch:
    """`/proc/<init>/mountinfo` of a sandbox, polled: the kernel marks it (EPOLLPRI) when a
    mount of that namespace comes or goes. The open file holds the namespace, so its end
    (the sandbox killed) never reads as a change."""

    def __init__(self, loop: asyncio.AbstractEventLoop, pid: int, on_event: Callable[[], None]) -> None:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            init = int(f.read().split()[0])  # bubblewrap's child lives in the sandbox
        self.pid = pid
        self._loop = loop
        self._fd = os.open(f"/proc/{init}/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
        self._poll = select.epoll()
        try:
            self.table = self._read()
            self._poll.register(self._fd, select.EPOLLPRI | select.EPOLLERR)
            loop.add_reader(self._poll.fileno(), self._ready, on_event)
        except BaseException:
            self.close()
            raise

    def _read(self) -> bytes:
        os.lseek(self._fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(self._fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)

    def read(self) -> bytes | None:
        try:
            return self._read()
        except OSError:
            return None

    def _ready(self, on_event: Callable[[], None]) -> None:
        # The kernel's poll of mountinfo reports a change once, to whichever poll asks first:
        # the loop's own epoll, looking through ours, may have taken it. So any wake-up is
        # a change to look at (the table is read and checked: cheap, and idempotent).
        self._poll.poll(0)
        on_event()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._poll.fileno())
        self._poll.close()
        with contextlib.suppress(OSError):
            os.close(self._fd)
