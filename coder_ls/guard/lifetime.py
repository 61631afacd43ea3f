"""Process lifetime: nothing the server starts outlives it.

At the start of serving the server becomes a child subreaper (Linux
`PR_SET_CHILD_SUBREAPER`), so a background job that detaches (`nohup`,
`setsid`, `disown`, a double fork) is re-parented to the server instead of
PID 1. On shutdown, exit and a closed stdin `sweep` kills every descendant
(found by walking `/proc`), by process group first, and reaps them.

The shells keep their state files (saved cwd and `export -p` dumps, which may
hold values the user exported, and which the user's next `!cmd` sources outside
the sandbox) under one private 0700 directory per server, `coder-ls-<uid>-<pid>`,
in `$XDG_RUNTIME_DIR` when it is a private directory of ours, else in the user's
state directory: never in `/dev/shm` or `/tmp`, which a sandboxed command may be
able to write (Landlock grants `/dev/shm`). `sweep` removes it; directories left
by servers that died without sweeping are removed by `remove_stale_run_dirs` at
start, and so are the placeholders such a server left in a workspace (`guard/pins.py`
records them there). `on_signals` makes SIGTERM, SIGHUP and SIGINT sweep too.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from coder_ls.guard.trust import state_dir

_RUN_DIR = re.compile(r"^coder-ls-(\d+)-(\d+)$")


def run_parent() -> Path:
    """Where the per-server state directories go: `$XDG_RUNTIME_DIR` (a tmpfs) when it is
    a private directory of ours, else `<state dir>/run` (created 0700). Never a directory
    the sandbox can write, nor one other users share."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and _private(Path(runtime)):
        return Path(runtime)
    path = state_dir(os.environ) / "run"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    return path


def _private(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def run_dir() -> Path:
    """This server's private state directory (created 0700 on first use)."""
    parent = run_parent()
    if not _private(parent):
        raise PermissionError(f"{parent} is not a private directory of ours")
    path = parent / f"coder-ls-{os.getuid()}-{os.getpid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    if not _private(path):  # somebody else made it: do not use it
        raise PermissionError(f"{path} is not a private directory of ours")
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_run_dirs() -> int:
    """Remove the state directories of our servers that are gone; how many were removed."""
    # /dev/shm and the temp directory: where earlier versions kept them.
    parents = {Path("/dev/shm"), Path(tempfile.gettempdir())}
    with contextlib.suppress(OSError):  # no state dir (a read-only home): the shell says so later
        parents.add(run_parent())
    removed = 0
    for parent in parents:
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                m = _RUN_DIR.match(entry.name)
                if not m or int(m.group(1)) != os.getuid() or int(m.group(2)) == os.getpid():
                    continue
                if not _alive(int(m.group(2))) and _private(Path(entry.path)):
                    _remove_placeholders(Path(entry.path))
                    shutil.rmtree(entry.path, ignore_errors=True)
                    removed += 1
    return removed


def _parents() -> dict[int, int]:
    """pid -> ppid of every process in /proc."""
    result: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            fields = data[data.rfind(b")") + 2 :].split()
            if len(fields) > 1:
                result[int(entry.name)] = int(fields[1])
    return result


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of `pid` (default: us), parents before children."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        p = todo.pop(0)
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants(rounds: int = 20) -> int:
    """SIGKILL every descendant (their process groups first) and reap them; how many were killed."""
    own_group = os.getpgrp()
    killed: set[int] = set()
    for _ in range(rounds):
        pids = descendants()
        live = [p for p in pids if p not in killed or _alive(p)]
        if not live:
            break
        for p in live:
            with contextlib.suppress(OSError):
                pgid = os.getpgid(p)
                if pgid != own_group:
                    os.killpg(pgid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
            killed.add(p)
        time.sleep(0.01)
        _reap()
    _reap()
    return len(killed)


def sweep() -> None:
    """At the end of serving: kill every descendant and remove our state directory."""
    kill_descendants()
    path = run_parent() / f"coder-ls-{os.getuid()}-{os.getpid()}"
    if _private(path):
        _remove_placeholders(path)
        shutil.rmtree(path, ignore_errors=True)


def _remove_placeholders(run: Path) -> None:
    """The empty folders a server made in a workspace to hold absent protected names
    (`guard/pins.py`), which it recorded in its run directory: removed with it."""
    from coder_ls.guard import pins  # only when there is a run directory to clean

    pins.remove_recorded(run / pins.RECORD)


SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def on_signals(cleanup: Callable[[], None] = sweep) -> None:
    """SIGTERM, SIGHUP and SIGINT end the server the way `exit` does: `cleanup` (every
    descendant killed, `setsid`/`nohup` jobs included, the state directory removed), then
    the signal's own default action, so the exit status still says which signal it was."""

    def handler(signum: int, frame: FrameType | None) -> None:
        for sig in SIGNALS:  # a second signal during the sweep does not cut it short
            signal.signal(sig, signal.SIG_IGN)
        try:
            cleanup()
        finally:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for sig in SIGNALS:
        signal.signal(sig, handler)
    # A file-size limit (RLIMIT_FSIZE) reached by a write must be EFBIG on that write (the
    # session log goes on in a new segment), not SIGXFSZ killing the server. Children get
    # the default back (subprocess's restore_signals).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
