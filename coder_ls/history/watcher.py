"""Which paths of the workspace changed, as they change: inotify, read in a thread.

`/undo`'s snapshots use it to update only what changed instead of scanning the workspace
before and after every submission. Folders are watched one by one (inotify is not recursive),
skipping `.git`, `.coder` and the folders the workspace ignores (`node_modules`, `target/`...,
listed by git when the watch starts); a folder created later is watched as it appears and
reported whole. Watchers are asynchronous, so `barrier()` writes a sentinel file in a watched
folder of `.coder/` and waits until its event has been read: every event of a change made
before the barrier (on the same kernel queue) has been read by then.

`take()` hands over the changed paths since the last call, or None when the record is not
trustworthy: the kernel queue overflowed, a watch could not be added (inotify limits:
`/proc/sys/fs/inotify/max_user_watches`), a watched folder moved. The caller then scans the
workspace once, and the watcher keeps going (`take()` again returns paths) unless it is broken.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import itertools
import logging
import os
import select
import struct
import threading
from collections.abc import Callable
from pathlib import Path

from coder_ls.saferead import read_text_or_none

log = logging.getLogger(__name__)

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK
)  # fmt: skip
_EVENT = struct.Struct("iIII")
SENTINEL_PREFIX = "barrier-"


def ignored_folder_names(gitignore: Path) -> frozenset[str]:
    """Folder names the workspace's top `.gitignore` ignores wherever they are (`node_modules/`,
    `target`, `.venv/`...): folders that appear later under such a name are not watched. Only
    plain names count, and none at all when the file re-includes anything (`!pattern`)."""
    text = read_text_or_none(gitignore)  # a FIFO or a device there is no ignore file
    if text is None:
        return frozenset()
    lines = text.splitlines()
    rules = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if any(rule.startswith("!") for rule in rules):
        return frozenset()
    plain = (rule.rstrip("/") for rule in rules)
    return frozenset(n for n in plain if n and "/" not in n and not any(c in n for c in "*?[\\"))


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or None, use_errno=True)
        libc.inotify_init1  # noqa: B018 - raises when absent
    except (OSError, AttributeError):
        return None
    return libc


class TreeWatcher:
    """Watch `root` (minus the folders `skip` says no to) and collect the changed paths."""

    def __init__(
        self,
        root: Path,
        sentinel_dir: Path,
        skip: Callable[[str], bool],
        skip_new: Callable[[str], bool] | None = None,
    ) -> None:
        self.root = root
        self.sentinel_dir = sentinel_dir
        self._skip = skip
        self._skip_new = skip_new or skip  # for folders that appear while watching
        self._libc = _libc()
        self._fd = -1
        self._wake_r, self._wake_w = -1, -1
        self._wds: dict[int, str] = {}  # watch descriptor -> folder relative to root ("" = root)
        self._sentinel_wd = -1
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._trusted = True  # False: something was missed since the last take()
        self.broken = False  # the watcher cannot go on (or never started): always scan
        self._seen = threading.Condition(self._lock)
        self._sentinels: set[str] = set()
        self._names = itertools.count()
        self._thread: threading.Thread | None = None
        self.watches = 0

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> bool:
        """Watch the tree now (the caller scans after this); False when inotify is unavailable."""
        if self._libc is None:
            self.broken = True
            return False
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            self.broken = True
            return False
        self._fd = fd
        self.sentinel_dir.mkdir(parents=True, exist_ok=True)
        self._sentinel_wd = self._add(str(self.sentinel_dir), IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW)
        self._watch_tree("")
        if self._sentinel_wd < 0 or not self._trusted:
            self.close()
            self.broken = True
            return False
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._run, name="coder-watch", daemon=True)
        self._thread.start()
        return True

    def close(self) -> None:
        self.broken = True
        if self._wake_w >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"x")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        for fd in (self._fd, self._wake_r, self._wake_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fd = self._wake_r = self._wake_w = -1
        with self._lock:
            self._seen.notify_all()

    # -- what callers use ---------------------------------------------------------------------
    def take(self) -> set[str] | None:
        """The paths changed since the last call (relative, '/'-separated; folders stand for
        everything under them), or None when they are not known: scan instead."""
        with self._lock:
            dirty, trusted = self._dirty, self._trusted and not self.broken
            self._dirty, self._trusted = set(), True
        return dirty if trusted else None

    def barrier(self, timeout: float = 1.0) -> bool:
        """Wait until every change made before this call has been read. False on timeout."""
        if self.broken:
            return False
        name = f"{SENTINEL_PREFIX}{os.getpid()}-{next(self._names)}"
        path = self.sentinel_dir / name
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            os.close(fd)
        except OSError:
            return False
        try:
            with self._lock:
                ok = self._seen.wait_for(lambda: name in self._sentinels or self.broken, timeout)
                self._sentinels.discard(name)
                return ok and not self.broken
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    # -- inside -------------------------------------------------------------------------------
    def _add(self, path: str, mask: int = _MASK) -> int:
        assert self._libc is not None
        wd = int(self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask))
        if wd < 0:
            err = ctypes.get_errno()
            if err not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES):
                log.info("watching %s failed: %s; falling back to scanning", path, os.strerror(err))
                with self._lock:
                    self._trusted = False  # ENOSPC (max_user_watches), ENOMEM...
                    self.broken = self.broken or err == errno.ENOSPC
        return wd

    def _watch_tree(self, rel: str, new: bool = False) -> None:
        """Watch `rel` and every folder under it that is not skipped."""
        skip = self._skip_new if new else self._skip
        stack = [rel]
        while stack and not self.broken:
            folder = stack.pop()
            path = os.path.join(self.root, folder) if folder else str(self.root)
            wd = self._add(path)
            if wd < 0:
                continue
            self._wds[wd] = folder
            self.watches = len(self._wds)
            try:
                with os.scandir(path) as it:
                    for entry in it:
                        if entry.is_dir(follow_symlinks=False):
                            sub = f"{folder}/{entry.name}" if folder else entry.name
                            if not skip(sub):
                                stack.append(sub)
            except OSError:
                continue

    def _forget_tree(self, rel: str) -> None:
        prefix = rel + "/"
        for wd, folder in list(self._wds.items()):
            if folder == rel or folder.startswith(prefix):
                del self._wds[wd]
                assert self._libc is not None
                self._libc.inotify_rm_watch(self._fd, wd)

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        while not self.broken:
            try:
                ready = poller.poll()
                if any(fd == self._wake_r for fd, _ in ready):
                    return
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                continue
            except OSError as exc:
                log.info("file watcher stopped: %s", exc)
                with self._lock:
                    self.broken = True
                    self._seen.notify_all()
                return
            self._handle(data)

    def _handle(self, data: bytes) -> None:
        dirty: list[str] = []
        sentinels: list[str] = []
        overflow = False
        pos = 0
        while pos + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
            name = os.fsdecode(data[pos + _EVENT.size : pos + _EVENT.size + length].rstrip(b"\0"))
            pos += _EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                overflow = True
                continue
            if wd == self._sentinel_wd:
                if name.startswith(SENTINEL_PREFIX):
                    sentinels.append(name)
                continue
            folder = self._wds.get(wd)
            if folder is None:
                continue
            if mask & IN_IGNORED:
                self._wds.pop(wd, None)
                continue
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                if folder == "":
                    overflow = True  # the workspace itself went away or moved
                continue  # its parent reports it by name
            rel = f"{folder}/{name}" if folder else name
            if not name or (folder == "" and name in (".git", ".coder")) or name == ".git":
                continue
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO) and not self._skip_new(rel):
                    self._watch_tree(rel, new=True)
                elif mask & IN_MOVED_FROM:
                    self._forget_tree(rel)
            dirty.append(rel)  # an ignored folder too: git lists what is tracked under it
        with self._lock:
            self._dirty.update(dirty)
            if overflow:
                self._trusted = False
            if sentinels:
                self._sentinels.update(sentinels)
                self._seen.notify_all()
