"""A persistent shell: one bash process, started on first use and kept between commands.

The user's `!` shell and the agent's shell (`engine/agentshell.py`) are two instances,
never one: separate processes, separate environments. The agent's runs in the sandbox
(`box`, fixed for the life of the process: `sandbox.wrap` around the bash), the user's
does not.

The bash runs a loop (`_LOOP`) that reads each request from its stdin (a pipe only we
write): a nonce, a directory to `cd` to first (empty: stay), the names to unset (secrets),
a prelude (the exports to restore after a restart), the command. It `eval`s the command
in the shell itself, so `cd`, exported variables and functions carry over to the next
command in that process and in no file. The command's stdin is /dev/null; stdout and
stderr go to one pipe, interleaved as produced. After the command, the loop writes an end
marker to the same pipe: NUL, the nonce, \x01, then NUL-terminated the exit code, `$PWD`
and `export -p`. The EXIT trap writes the same (the code marked `x`) when a command ends
the shell (`exit`, `set -e`). Output is decoded incrementally and streamed through `on_output`; past
`max_output_bytes` it is counted and dropped while the pipe keeps being drained.

The shell's own process group is the command's: a timeout, a cancel or `close` kills the
whole group (the shell, the command, its background jobs) and the next command starts a
new shell in the last working directory, with the exports the last finished command left
(kept in memory, replayed as the prelude). A command that kills its shell (`kill -9 $$`,
`exec`) is the same: the state of the last command that finished stays. So is one that
closes the marker's fd 9 or points it elsewhere: the loop sees that fd 9 is no longer a pipe
and ends the shell with the command's exit code (not a wait for the timeout). Background jobs
left by a shell that died are killed by `close`; as a subreaper (`become_subreaper`) a
killed group also vanishes at once instead of leaving zombies for PID 1 to reap.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ctypes
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from coder_ls.engine.shellstate import exported
from coder_ls.environ import child_env, secret_names
from coder_ls.guard import sandbox

BASH = "/bin/bash"
# After the shell died, how long to wait for the pipe to reach EOF.
EOF_GRACE_SECONDS = 0.2
# On timeout: how long SIGTERM gets before the group is SIGKILLed.
TERM_GRACE_SECONDS = 0.1
# After SIGKILL: how long to wait for the bash to be reaped.
REAP_WAIT_SECONDS = 1.0
_PR_SET_CHILD_SUBREAPER = 36
_FORCED_ENV = {"TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
_DROPPED_ENV = ("PWD", "OLDPWD")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _end(flag: str) -> str:
    """The loop's words that write the end marker; `flag` is `x` when the shell is ending.
    A literal, not a variable: a command that made a variable of ours readonly would
    otherwise change every exit code after it."""
    return (
        rf"""builtin printf '\0%s\1{flag}%s\0%s\0' "$__coder_n" "$__coder_rc" "$PWD" >&9; """
        r"""builtin export -p >&9; builtin printf '\0' >&9"""
    )


# fd 9 is the output pipe; the loop's own stdout and stderr are /dev/null. So only the
# command (inside the eval) and the marker reach the pipe: an `exec >file` in a command
# cannot hide the marker, and what a command leaves behind that acts on the loop's own words
# (an ERR or DEBUG trap, an IFS without a space) prints nothing into later results. The loop
# splits no word (IFS is the command's), tests with `[[` (a keyword, which no function can
# replace) and calls every builtin through `builtin` (a function named `read` or `eval`
# cannot replace those).
_LOOP = "\n".join(
    [
        "exec 9>&1 >/dev/null 2>&1",
        "trap " + shlex.quote("__coder_rc=$?; " + _end("x")) + " EXIT",
        "while IFS= builtin read -r -d '' __coder_n && IFS= builtin read -r -d '' __coder_d"
        " && IFS= builtin read -r -d '' __coder_h && IFS= builtin read -r -d '' __coder_p"
        " && IFS= builtin read -r -d '' __coder_c; do",
        '  if [[ -n $__coder_h ]]; then builtin eval "builtin unset -v $__coder_h"; fi',
        '  if [[ -n $__coder_p ]]; then builtin eval "$__coder_p"; fi',
        '  if [[ -n $__coder_d ]]; then builtin cd -- "$__coder_d"; fi',
        "  builtin unset -v __coder_d __coder_h __coder_p",
        '  builtin eval "$__coder_c" </dev/null >&9 2>&9',
        "  __coder_rc=$?; builtin set +eux",
        # fd 9 closed or pointed elsewhere by the command: no marker can be written, so the
        # shell ends with the command's code, as a command that ends its shell does (and
        # without its EXIT trap, which would write our marker into the command's file)
        '  [[ -p /dev/fd/9 ]] || { builtin trap - EXIT; builtin exit "$__coder_rc"; }',
        "  " + _end(""),
        "done",
    ]
)


class ShellResult(msgspec.Struct, frozen=True):
    output: str  # stdout+stderr interleaved as they came, capped
    exit_code: int | None  # None when the command timed out
    truncated: bool
    timed_out: bool
    cwd: str  # the cwd the next command will start in


def _utf8_cut(data: bytes, limit: int) -> int:
    """The largest cut <= limit that does not split a UTF-8 sequence inside `data`."""
    cut = min(limit, len(data))
    floor = max(0, cut - 3)
    while floor < cut < len(data) and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut


def become_subreaper(on: bool = True) -> bool:
    """Adopt this process's orphaned descendants (Linux `PR_SET_CHILD_SUBREAPER`).

    Optional, once at server start. Without it, a killed command's grandchildren are
    reaped by PID 1, and some container inits do that only every few seconds, so
    `killpg(pgid, 0)` keeps finding their zombies. With it, the shell reaps them
    itself and a killed group is gone at once. Returns False where unsupported.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _Capture:
    """Decodes, streams and caps one command's output."""

    def __init__(self, limit: int, on_output: Callable[[str], None]) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._on_output = on_output
        self._limit = max(0, limit)
        self._parts: list[str] = []
        self._kept = 0
        self.omitted = 0
        self.truncated = False
        self.detached = False

    def _emit(self, text: str) -> None:
        if text:
            self._parts.append(text)
            self._on_output(text)

    def feed(self, data: bytes) -> None:
        if self.detached or not data:
            return
        if self.truncated:
            self.omitted += len(data)
            return
        room = self._limit - self._kept
        if len(data) <= room:
            self._kept += len(data)
            self._emit(self._decoder.decode(data))
            return
        cut = _utf8_cut(data, room)
        self._emit(self._decoder.decode(data[:cut]))
        pending = len(self._decoder.getstate()[0])
        self._decoder.reset()
        self.omitted += len(data) - cut + pending
        self._kept = self._limit
        self.truncated = True

    def note(self, text: str) -> None:
        """Append a line of our own (not counted against the cap)."""
        sep = "" if not self._parts or self._parts[-1].endswith("\n") else "\n"
        self._emit(f"{sep}{text}\n")

    def finish(self) -> None:
        """Flush the decoder, or append the truncation marker."""
        if self.truncated:
            self.note(f"[output truncated: {self.omitted} bytes omitted]")
        else:
            self._emit(self._decoder.decode(b"", final=True))

    @property
    def text(self) -> str:
        return "".join(self._parts)


class _Command:
    """One command's share of the output stream: everything before its end marker, then
    the three fields after it (exit code, `$PWD`, `export -p`)."""

    def __init__(self, nonce: str, capture: _Capture, loop: asyncio.AbstractEventLoop) -> None:
        self._marker = b"\0" + nonce.encode() + b"\1"
        self._capture = capture
        self._held = b""  # the end of the last chunk, when it may begin the marker
        self._tail: bytearray | None = None
        self.done: asyncio.Future[tuple[bytes, bytes, bytes]] = loop.create_future()

    def feed(self, data: bytes) -> None:
        if self._tail is not None:
            self._tail += data
            self._check_tail()
            return
        data = self._held + data if self._held else data
        at = data.find(self._marker)
        if at >= 0:
            self._capture.feed(data[:at])
            self._held = b""
            self._tail = bytearray(data[at + len(self._marker) :])
            self._check_tail()
            return
        keep = len(data)
        for i in range(max(0, len(data) - len(self._marker) + 1), len(data)):
            if data[i] == 0 and self._marker.startswith(data[i:]):
                keep = i
                break
        self._held = data[keep:]
        self._capture.feed(data[:keep])

    def flush(self) -> None:
        """The shell is gone: what was held back was output after all."""
        if self._tail is None and self._held:
            self._capture.feed(self._held)
            self._held = b""

    def _check_tail(self) -> None:
        assert self._tail is not None
        if not self.done.done() and self._tail.count(b"\0") >= 3:
            rc, pwd, env = bytes(self._tail).split(b"\0", 3)[:3]
            self.done.set_result((rc, pwd, env))


class _Proto(asyncio.SubprocessProtocol):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.command: _Command | None = None  # output outside a command (background jobs) is dropped
        self.exited: asyncio.Future[None] = loop.create_future()
        self.eof: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if self.command is not None:
            self.command.feed(data.encode() if isinstance(data, str) else data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.eof.done():
            self.eof.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        for fut in (self.exited, self.eof):
            if not fut.done():
                fut.set_result(None)


class _Job:
    """The running bash: its transport, protocol and process group."""

    def __init__(self, transport: asyncio.SubprocessTransport, proto: _Proto) -> None:
        self.transport = transport
        self.proto = proto
        self.pgid = transport.get_pid()

    @property
    def alive(self) -> bool:
        return not self.proto.exited.done()

    def send(self, fields: Sequence[str]) -> None:
        pipe = self.transport.get_pipe_transport(0)
        assert isinstance(pipe, asyncio.WriteTransport)
        pipe.write(b"".join(f.encode("utf-8", "surrogateescape").replace(b"\0", b"") + b"\0" for f in fields))

    def kill(self) -> None:
        _killpg(self.pgid, signal.SIGKILL)

    async def wait_exited(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.proto.exited), seconds)

    def reap_orphans(self) -> bool:
        """Reap members of the group that were orphaned to us; True if none is left.

        Only does something when this process is a subreaper (`become_subreaper`);
        it never touches the bash itself, which asyncio's child watcher reaps.
        """
        if not self.proto.exited.done():
            return False
        while True:
            try:
                pid, _ = os.waitpid(-self.pgid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return False

    async def stop(self) -> None:
        """SIGKILL the whole group and wait (briefly) until it has been reaped."""
        self.kill()
        await self.wait_exited(REAP_WAIT_SECONDS)
        for _ in range(int(REAP_WAIT_SECONDS / 0.001)):
            if self.reap_orphans():
                break
            await asyncio.sleep(0.001)  # SIGKILLed members are about to die; no event to await
        self.transport.close()


class PersistentShell:
    """A bash whose cwd, exported variables and functions persist across `run` calls.

    `env`: the base environment (default: ours, secrets removed) of the first bash.
    `box`: the sandbox every command of this shell runs in (None: none).
    `cwd`: where the first command starts (default: `root`).
    `wrap`: builds the sandbox's command line around the bash each time one starts (the
    agent's shell lays out its pins then; the git lane adds its own mounts); default
    `sandbox.wrap(box, ...)`.
    """

    def __init__(
        self,
        root: Path,
        *,
        env: Mapping[str, str] | None = None,
        box: sandbox.Sandbox | None = None,
        cwd: Path | None = None,
        wrap: Callable[[list[str]], list[str]] | None = None,
    ) -> None:
        self._root = Path(root).absolute()
        self._root_real = self._root.resolve()
        forced = {**_FORCED_ENV, **(sandbox.forced_env(box) if box is not None else {})}
        self._base_env = child_env(base=env, drop=_DROPPED_ENV, set_=forced)
        self.box = box
        self._wrap = wrap
        self._kill_spawning = False  # `kill_now` came while a bash was being started
        self._cwd = cwd if cwd is not None and self._inside(cwd) else self._root
        self._move = False  # the next command first `cd`s to `_cwd` (it was reset)
        self._exports: bytes | None = None  # `export -p` after the last command that finished
        self._exports_read: tuple[bytes, dict[str, str] | None] | None = None  # read once per dump
        self._lock = asyncio.Lock()
        self._job: _Job | None = None
        self._lingering: list[_Job] = []  # dead shells whose background jobs may still run
        self._closed = False

    @property
    def cwd(self) -> Path:
        return self._cwd

    @property
    def root(self) -> Path:
        return self._root

    @property
    def pid(self) -> int | None:
        """The running bash's pid (its process group), or None before the first command."""
        return self._job.pgid if self._job is not None and self._job.alive else None

    def exports(self) -> dict[str, str] | None:
        """The environment the next command starts with (read-only, for the refused-command check at each
        step): the `export -p` the last command left (each dump read once), else the start's; None: unreadable."""
        if self._exports is None:
            return dict(self._base_env)
        if self._exports_read is None or self._exports_read[0] != self._exports:
            self._exports_read = (self._exports, exported(self._exports.decode("utf-8", "surrogateescape")))
        return None if (found := self._exports_read[1]) is None else dict(found)

    def _inside(self, path: Path) -> bool:
        real = path.resolve()
        return real == self._root_real or self._root_real in real.parents

    def _start_dir(self) -> tuple[Path, str | None]:
        """Where the next command starts; a note when the saved cwd vanished."""
        if self._cwd.is_dir():
            return self._cwd, None
        if not self._root.is_dir():
            raise FileNotFoundError(f"the workspace root {self._root} does not exist")
        gone = self._cwd
        self._cwd = next((p for p in gone.parents if p.is_dir() and self._inside(p)), self._root)
        self._move = True
        return self._cwd, f"[cwd reset to {self._cwd}: {gone} no longer exists]"

    async def _spawn(self, start: Path) -> _Job:
        argv = [BASH, "--noprofile", "--norc", "-c", _LOOP, "coder-shell"]
        self._kill_spawning = False
        if self.box is not None:
            argv = self._wrap(argv) if self._wrap is not None else sandbox.wrap(self.box, argv)
        loop = asyncio.get_running_loop()
        transport, proto = await loop.subprocess_exec(
            lambda: _Proto(loop),
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=start,
            # After a restart the replayed exports are the whole environment (`unset` sticks).
            env={} if self._exports is not None else self._base_env,
            start_new_session=True,
        )
        job = _Job(transport, proto)
        if self._kill_spawning:  # told to die while it was starting
            job.kill()
        return job

    def _forget(self, job: _Job) -> None:
        """A shell that has exited: keep its group while background jobs may still run."""
        if self._job is job:
            self._job = None
        if job.proto.eof.done() and job.reap_orphans():
            job.transport.close()
        elif job not in self._lingering:
            self._lingering.append(job)

    def _adopt(self, rc: bytes, pwd: bytes, env: bytes) -> tuple[int | None, str | None]:
        """The exit code and state the end marker carries; a note if the cwd was reset."""
        try:
            code: int | None = int(rc.removeprefix(b"x"))
        except ValueError:
            code = None
        self._exports = env
        new_cwd = Path(pwd.decode("utf-8", "surrogateescape"))
        if new_cwd.is_absolute() and self._inside(new_cwd):
            self._cwd = new_cwd
            return code, None
        self._cwd, self._move = self._root, True
        return code, f"[cwd reset to the workspace root: {new_cwd} is outside the workspace]"

    async def run(
        self,
        command: str,
        *,
        on_output: Callable[[str], None],
        timeout: float,
        max_output_bytes: int,
        hide_env: Sequence[str] = (),
    ) -> ShellResult:
        """Run `command`; calls are serialized. Cancelling kills the shell's group.

        `hide_env`: names (besides the API keys) unset for the command and after it
        (`secrets.envNames`).
        """
        async with self._lock:
            if self._closed:
                raise RuntimeError("the shell is closed")
            for old in list(self._lingering):
                self._lingering.remove(old)
                self._forget(old)
            capture = _Capture(max_output_bytes, on_output)
            start, note = self._start_dir()
            if note:
                capture.note(note)
            job, prelude = self._job, ""
            if job is None or not job.alive:
                if job is not None:
                    self._forget(job)
                job = self._job = await self._spawn(start)
                prelude = (self._exports or b"").decode("utf-8", "surrogateescape")
                self._move = False
            loop = asyncio.get_running_loop()
            nonce = os.urandom(12).hex()
            cmd = job.proto.command = _Command(nonce, capture, loop)
            hidden = " ".join(n for n in secret_names(hide_env) if _NAME.match(n))
            job.send([nonce, str(self._cwd) if self._move else "", hidden, prelude, command])
            self._move = False
            timed_out = False
            try:
                try:
                    async with asyncio.timeout(timeout):
                        await asyncio.wait((cmd.done, job.proto.exited), return_when=asyncio.FIRST_COMPLETED)
                except TimeoutError:
                    timed_out = True
                    _killpg(job.pgid, signal.SIGTERM)
                    await job.wait_exited(TERM_GRACE_SECONDS)
                    await job.stop()
                if not cmd.done.done() and not job.proto.eof.done():
                    with contextlib.suppress(TimeoutError):  # the shell died: drain what it wrote
                        await asyncio.wait_for(asyncio.shield(job.proto.eof), EOF_GRACE_SECONDS)
            except BaseException:
                capture.detached = True
                await job.stop()
                self._forget(job)
                raise
            finally:
                job.proto.command = None
            exit_code: int | None = None
            reset: str | None = None
            if cmd.done.done() and not timed_out:
                exit_code, reset = self._adopt(*cmd.done.result())
                if cmd.done.result()[0].startswith(b"x"):  # from the EXIT trap: the shell is ending
                    await job.wait_exited(REAP_WAIT_SECONDS)
            elif not timed_out:
                cmd.flush()
                returncode = job.transport.get_returncode()
                if returncode is not None:
                    exit_code = returncode if returncode >= 0 else 128 - returncode
            if not job.alive:
                self._forget(job)
            capture.finish()
            if reset:
                capture.note(reset)
            capture.detached = True
            return ShellResult(
                output=capture.text,
                exit_code=exit_code,
                truncated=capture.truncated,
                timed_out=timed_out,
                cwd=str(self._cwd),
            )

    def kill_now(self) -> None:
        """SIGKILL the running bash's group at once, from a callback (no waiting): a running
        command ends as after a crash, and the next one starts a new bash. A bash being
        started right now is killed as soon as it exists."""
        self._kill_spawning = True
        if self._job is not None and self._job.alive:
            self._job.kill()

    async def restart(self) -> None:
        """End the bash (its group with it); the next command starts a new one in the same
        cwd with the exports of the last command that finished, as after a crash."""
        async with self._lock:
            job, self._job = self._job, None
            if job is not None:
                await job.stop()

    async def close(self) -> None:
        """Kill the running command, the shell and every background job."""
        self._closed = True
        jobs = [*self._lingering, *([self._job] if self._job else [])]
        self._lingering.clear()
        self._job = None
        for job in jobs:
            job.kill()
        for job in jobs:
            await job.stop()
