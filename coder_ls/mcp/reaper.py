"""Run as a script (`python -I reaper.py [--parent PID] CMD ARGS...`) in front of every stdio
MCP server and every background shell (`engine/bgshells.py`).

The SDK starts the server in a new session (its own process group), which keeps a
Ctrl-C or the editor's signals away from it, but also means nothing kills it when our
server dies without closing it (SIGKILL, OOM): a server that does not exit on the EOF of
its stdin, or its children (`npx` starts `node`, which may start more), would be left
behind. This small parent closes that gap: it asks the kernel for a signal when our
server dies (`PR_SET_PDEATHSIG`), starts the MCP server in its own process group, hands
it its stdin and stdout untouched, and when that signal comes, or when the MCP server
exits, kills the whole group. Stdlib only, no package import: it starts in ~15 ms.
"""

from __future__ import annotations

import os
import signal
import sys


def _kill_group(*_: object) -> None:
    os.killpg(0, signal.SIGKILL)  # the group is ours alone (start_new_session)


def main(argv: list[str]) -> int:
    parent = os.getppid()
    if argv[:1] == ["--parent"] and len(argv) > 1 and argv[1].isdigit():
        # the pid of the server that started us: had it died before the signal was asked
        # for (Python's start-up takes tens of milliseconds), getppid() would already name
        # the process we were handed to, and the check below would pass
        parent, argv = int(argv[1]), argv[2:]
    if not argv:
        print("reaper: no command", file=sys.stderr)
        return 2
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _kill_group)
    if os.getppid() != parent:  # our server died before the signal was asked for
        _kill_group()
    if os.getpgrp() != os.getpid():
        os.setpgid(0, 0)
    pid = os.fork()
    if pid == 0:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            print(f"cannot run {argv[0]!r}: {exc.strerror}", file=sys.stderr)
            os._exit(127)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            status = 0
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(0, signal.SIGTERM)  # what the server left running goes with it
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
