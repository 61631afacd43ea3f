"""The pins of the agent's running sandboxed shell: its layout, its placeholders, its watch.

bubblewrap binds each writable root whole and holds the protected paths with read-only
mounts over it (`guard/pins.py`). A mount sits on one directory entry, and the kernel
detaches it when a process outside the sandbox replaces or removes that entry (an editor's
atomic save, `git checkout`, `git clean`): the name is then writable inside. So, for the
life of one shell:

- `arm` makes the layout (the placeholders it needs taken from the server's registry), then
  watches the folders that hold its entries (`guard/inotify.py`), then checks that nothing
  changed in between; a change seen by the watch calls `on_change` at once (the agent's
  shell kills the sandbox's process group there), and `changed` says so before each command,
  with one `lstat` a held entry besides;
- `disarm` stops watching and gives the placeholders back (removed when no other shell of
  this server uses them).

Without inotify there is no watch: `arm` returns None and the shell is split entry by entry
as under Landlock (nothing created at a root's top), which a host-side change cannot undo.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from coder_ls.guard import lifetime, pins, sandbox
from coder_ls.guard.inotify import NameWatch

ARM_ATTEMPTS = 3  # a layout changed under us this many times in a row: split instead


class PinGuard:
    def __init__(self, on_change: Callable[[str], None]) -> None:
        self._on_change = on_change
        self.layout: pins.Layout | None = None
        self._watch: NameWatch | None = None
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

    def changed(self, pid: int | None = None) -> str | None:
        """What changed since `arm`, or None: seen by the watch, or found now, by identity
        and, when `pid` (the sandbox's bubblewrap) is given, by the mounts still in place in
        the sandbox itself."""
        if self.layout is None:
            return None
        if found := self.fired or self.layout.changed():
            return found
        mountinfo = _mountinfo(pid) if pid is not None else None
        return self.layout.detached(mountinfo) if mountinfo is not None else None

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

    @staticmethod
    def _release(layout: pins.Layout) -> None:
        if layout.placeholders:
            with contextlib.suppress(OSError):
                pins.registry(lifetime.run_dir() / pins.RECORD).release(layout.placeholders)


def _mountinfo(pid: int) -> bytes | None:
    """The mount table of the sandbox bubblewrap `pid` made (its first child lives in it)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            children = f.read().split()
        if not children:
            return None
        with open(f"/proc/{int(children[0])}/mountinfo", "rb") as f:
            return f.read()
    except (OSError, ValueError):
        return None
