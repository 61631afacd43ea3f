"""The agent's background shells (contract section 22): a dev server, a watcher, a long build.

`bash {background: true}` starts one and answers at once with its id (`bg1`, `bg2`, ... per
session); `shell_output` reads what it printed since the last read (or since a byte offset),
capped like the bash tool's output, and its exit code once it ended; `shell_kill` ends it;
`/shells` lists them. At most `MAX_RUNNING` run at once in a session: one more is refused
with an error that says so.

Each runs `bash -c COMMAND` in the agent's sandbox (`AgentShell.start_background` builds
the command line: the same `sandbox.wrap`, the agent's cwd and exports, the secrets unset),
behind the small parent every stdio MCP server has (`mcp/reaper.py`): the process group is
its own, the kernel signals the parent when the server dies (`PR_SET_PDEATHSIG`, even a
SIGKILL) and the parent kills the whole group; bubblewrap adds `--die-with-parent` and its
PID namespace. So nothing outlives the server, the session (`close`: eviction, shutdown,
`/new`) or `shell_kill` (SIGKILL to the group). stdin is /dev/null; stdout and stderr are
one pipe, redacted as they arrive (`guard/redact.py`) and kept in memory up to
`RETAIN_BYTES` per shell (the oldest dropped first).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from coder_ls.guard.redact import Redactor, StreamRedactor

MAX_RUNNING = 8  # background shells running at once in one session
KEEP_ENDED = 16  # ended ones still listed (and readable); the oldest forgotten first
RETAIN_BYTES = 1 << 20  # output kept per shell
KILL_WAIT_SECONDS = 2.0
EOF_WAIT_SECONDS = 0.5  # after the shell ended, for the last of its output

State = Literal["running", "exited", "killed"]


class TooManyShells(Exception):
    pass


class UnknownShell(Exception):
    pass


class ShellInfo(msgspec.Struct, frozen=True):
    """One background shell as `/shells` lists it."""

    shell_id: str
    command: str
    state: State
    runtime: float  # seconds, up to now or to its end
    exit_code: int | None  # None while it runs


class ShellRead(msgspec.Struct, frozen=True):
    """What `shell_output` returns: output from byte `start` to `end` of the shell's stream."""

    info: ShellInfo
    output: str
    start: int
    end: int
    omitted: int  # bytes between `since` and `start` not shown (over the cap, or no longer kept)


def _reaper() -> str:
    from coder_ls.mcp import reaper  # standard library only: a path to run, not code we call

    return str(reaper.__file__)


class _Shell:
    """One background process group, its output and its end."""

    def __init__(self, shell_id: str, command: str, proc: asyncio.subprocess.Process, redactor: Redactor) -> None:
        self.shell_id = shell_id
        self.command = command
        self.proc = proc
        self.started = time.monotonic()
        self.ended: float | None = None
        self.killed = False
        self.data = bytearray()
        self.base = 0  # the stream offset of data[0]
        self.read_at = 0  # where the next read without `since` starts
        self._redact = StreamRedactor(redactor) if redactor else None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pump = asyncio.ensure_future(self._pump())

    @property
    def end(self) -> int:
        return self.base + len(self.data)

    def _keep(self, text: str) -> None:
        self.data += text.encode()
        if len(self.data) > RETAIN_BYTES:
            drop = len(self.data) - RETAIN_BYTES
            del self.data[:drop]
            self.base += drop

    async def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while chunk := await stream.read(65536):
            text = self._decoder.decode(chunk)
            self._keep(self._redact.feed(text) if self._redact is not None else text)

    async def _pump(self) -> None:
        """Read until the shell ended and its pipe is closed (or, when a process that left the
        group holds the pipe, `EOF_WAIT_SECONDS` after the end), then note the end."""
        reader = asyncio.ensure_future(self._read())
        try:
            await self.proc.wait()
            _reap_group(self.proc.pid)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), EOF_WAIT_SECONDS)
        finally:
            reader.cancel()
            tail = self._decoder.decode(b"", final=True)
            if self._redact is not None:
                tail = self._redact.feed(tail) + self._redact.flush()
            self._keep(tail)
            self.ended = time.monotonic()

    @property
    def running(self) -> bool:
        return self.ended is None

    def info(self) -> ShellInfo:
        code = self.proc.returncode if self.ended is not None else None
        if code is not None and code < 0:
            code = 128 - code
        state: State = "running" if self.ended is None else "killed" if self.killed else "exited"
        runtime = (self.ended or time.monotonic()) - self.started
        return ShellInfo(self.shell_id, self.command, state, round(runtime, 1), code)

    async def kill(self) -> None:
        if self.ended is None:
            self.killed = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.pump), KILL_WAIT_SECONDS)


def _reap_group(pgid: int) -> None:
    """Members of the group orphaned to us (the server is a subreaper): reaped, not zombies."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)  # what the command left running goes with it
    for _ in range(100):
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


@dataclass
class BackgroundShells:
    """A session's background shells (the agent's shell owns them: `AgentShell.background`)."""

    limit: int = MAX_RUNNING

    def __post_init__(self) -> None:
        self._shells: dict[str, _Shell] = {}
        self._count = 0
        self._closed = False

    async def start(
        self,
        command: str,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        hide_env: Sequence[str] = (),
    ) -> str:
        """Start `argv` (the sandbox's command line around `bash -c command`); its id."""
        if self._closed:
            raise RuntimeError("the session's shells are closed")
        running = sum(1 for s in self._shells.values() if s.running)
        if running >= self.limit:
            raise TooManyShells(
                f"{running} background shells are running in this session, the limit: end one with shell_kill first"
            )
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            _reaper(),
            "--parent",
            str(os.getpid()),
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
        self._count += 1
        shell_id = f"bg{self._count}"
        self._shells[shell_id] = _Shell(shell_id, command, proc, Redactor.for_names(hide_env))
        ended = [k for k, s in self._shells.items() if not s.running]
        for old in ended[: max(0, len(ended) - KEEP_ENDED)]:
            del self._shells[old]
        return shell_id

    def _get(self, shell_id: str) -> _Shell:
        shell = self._shells.get(shell_id.strip())
        if shell is None:
            known = ", ".join(self._shells) or "none"
            raise UnknownShell(f"no background shell {shell_id!r} in this session (known: {known})")
        return shell

    async def read(self, shell_id: str, *, since: int | None, max_bytes: int) -> ShellRead:
        """Output from `since` (default: where the last read ended), its newest `max_bytes`."""
        shell = self._get(shell_id)
        if not shell.running:
            await asyncio.shield(shell.pump)  # all it printed is in
        end = shell.end
        start = min(max(shell.read_at if since is None else since, 0), end)
        shown = max(start, shell.base, end - max(0, max_bytes))
        text = bytes(shell.data[shown - shell.base : end - shell.base]).decode("utf-8", "replace")
        shell.read_at = max(shell.read_at, end)
        return ShellRead(shell.info(), text.lstrip("\ufffd"), shown, end, shown - start)

    async def kill(self, shell_id: str) -> ShellInfo:
        shell = self._get(shell_id)
        await shell.kill()
        return shell.info()

    def infos(self) -> list[ShellInfo]:
        return [s.info() for s in self._shells.values()]

    async def kill_all(self) -> None:
        """Kill every running one (`/new` leaves the session: its shells end with it)."""
        await asyncio.gather(*(s.kill() for s in self._shells.values()))

    async def close(self) -> None:
        """Kill every one (the session is closed); later starts are refused."""
        self._closed = True
        await self.kill_all()
