"""A persistent shell per session, built from one short-lived bash per command.

Each `run` starts `/bin/bash` in a new session (so a new process group) that
sources the session's saved exports, `cd`s to the saved cwd, installs an EXIT
trap that writes `export -p` and `pwd` back to a private state directory, and
`eval`s the command. Killing the command is then one `killpg` of that group, and
the cwd and exported variables survive `exit`, crashes of the command and kills
(a killed command simply leaves the previous state in place).

Output (stdout and stderr on one pipe, so interleaved as produced) is decoded
incrementally and streamed through `on_output`; past `max_output_bytes` it is
counted and dropped while the pipe keeps being drained. Background jobs that
still hold the pipe when the command's bash has exited are left running (their
output is discarded) and are killed by `close`; so are redirected ones when the
process is a subreaper (`become_subreaper`), which also makes a killed group
vanish at once instead of leaving zombies for PID 1 to reap.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ctypes
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from coder_ls.engine import lifetime, sandbox
from coder_ls.engine.config import UnreadableFile, read_regular_file
from coder_ls.engine.environ import child_env, secret_names
from coder_ls.engine.shellstate import clean_state, exported
from coder_ls.protocol.config import SandboxConfig

BASH = "/bin/bash"
# After the command's bash exits, how long to wait for the pipe to reach EOF.
EOF_GRACE_SECONDS = 0.2
# On timeout: how long SIGTERM gets before the group is SIGKILLed.
TERM_GRACE_SECONDS = 0.1
# After SIGKILL: how long to wait for the bash to be reaped.
REAP_WAIT_SECONDS = 1.0
_PR_SET_CHILD_SUBREAPER = 36
_FORCED_ENV = {"TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
_DROPPED_ENV = ("PWD", "OLDPWD")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ShellResult(msgspec.Struct, frozen=True):
    output: str  # stdout+stderr interleaved as they came, capped
    exit_code: int | None  # None when the command timed out
    truncated: bool
    timed_out: bool
    cwd: str  # the cwd the next command will start in


def _script(out_dir: Path, hide: Sequence[str], force: Mapping[str, str]) -> str:
    """The bash program that wraps every command.

    $1 = the file holding the command (read, then removed: a command of any size
    passes, where an argument is capped at 128 KiB), $2 = cwd, $3 = exports file.
    `hide` names are unset after the exports are loaded (secrets); `force`
    variables are set for this command only and restored before the state is saved.
    """
    env_next = shlex.quote(str(out_dir / "env.next"))
    cwd_next = shlex.quote(str(out_dir / "cwd.next"))
    names = " ".join(n for n in hide if _NAME.match(n))
    save, restore = [], []
    for i, (key, value) in enumerate(force.items()):
        if not _NAME.match(key):
            continue
        save.append(f"__coder_s{i}=${{{key}-__coder_unset__}}; export {key}={shlex.quote(value)}")
        restore.append(
            f'if [ "$__coder_s{i}" = __coder_unset__ ]; then unset {key}; else export {key}="$__coder_s{i}"; fi'
        )
    trap = (
        "__coder_rc=$?; "
        + "; ".join([*restore, ""])
        + "builtin export -p >| "
        + env_next
        + " 2>/dev/null; builtin pwd >| "
        + cwd_next
        + ' 2>/dev/null; builtin exit "$__coder_rc"'
    )
    return "\n".join(
        [
            '__coder_cmd=$(< "$1"); rm -f -- "$1"; __coder_cwd=$2; __coder_env=$3; set --',
            'if [ -n "$__coder_env" ]; then . "$__coder_env" >/dev/null 2>&1; fi',
            f"unset -v {names} 2>/dev/null" if names else ":",
            *save,
            "__coder_old=${OLDPWD-}",
            'builtin cd -- "$__coder_cwd" >/dev/null 2>&1 && OLDPWD=$__coder_old',
            "unset __coder_old __coder_cwd __coder_env",
            "trap " + shlex.quote(trap) + " EXIT",
            'eval "$__coder_cmd"',
        ]
    )


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


class _Proto(asyncio.SubprocessProtocol):
    def __init__(self, loop: asyncio.AbstractEventLoop, capture: _Capture) -> None:
        self.capture = capture
        self.exited: asyncio.Future[None] = loop.create_future()
        self.eof: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.capture.feed(data.encode() if isinstance(data, str) else data)

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
    """One started command: its transport, protocol and process group."""

    def __init__(self, transport: asyncio.SubprocessTransport, proto: _Proto) -> None:
        self.transport = transport
        self.proto = proto
        self.pgid = transport.get_pid()

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
                return
            await asyncio.sleep(0.001)  # SIGKILLed members are about to die; no event to await


class PersistentShell:
    """A bash whose cwd and exported variables persist across `run` calls."""

    def __init__(self, root: Path, *, env: Mapping[str, str] | None = None) -> None:
        """`env` is the base environment (default: ours) before the first command."""
        self._root = Path(root).absolute()
        self._root_real = self._root.resolve()
        self._base_env = child_env(base=env, drop=_DROPPED_ENV, set_=_FORCED_ENV)
        self._cwd = self._root
        self._state_dir: Path | None = None
        self._last_out: Path | None = None  # where the last command wrote its state
        self._sandbox_tmp: Path | None = None
        self._env_file: Path | None = None  # the exports of the last command that finished
        self._generation = 0
        self._lock = asyncio.Lock()
        self._current: _Job | None = None
        self._lingering: list[_Job] = []
        self._closed = False

    @property
    def cwd(self) -> Path:
        return self._cwd

    @property
    def root(self) -> Path:
        return self._root

    def exports(self) -> dict[str, str] | None:
        """The environment the next command starts with (read-only, for the refused-command
        check); None when the saved state cannot be read."""
        if self._env_file is None:
            return dict(self._base_env)
        try:
            return exported(self._env_file.read_text(encoding="utf-8", errors="surrogateescape"))
        except OSError:
            return None

    def _inside(self, path: Path) -> bool:
        real = path.resolve()
        return real == self._root_real or self._root_real in real.parents

    def _ensure_state_dir(self) -> Path:
        if self._state_dir is None:
            self._state_dir = Path(tempfile.mkdtemp(prefix="shell-", dir=lifetime.run_dir()))
        return self._state_dir

    def sandbox_for(self, config: SandboxConfig) -> sandbox.Sandbox | None:
        """The sandbox `config` asks for on this machine (None: `off` or none available)."""
        if config.mode == "off" or not sandbox.available():
            return None
        if self._sandbox_tmp is None:
            self._sandbox_tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=lifetime.run_dir()))
        return sandbox.resolve(config, self._root, self._sandbox_tmp)

    def _start_dir(self) -> tuple[Path, str | None]:
        """Where the next command starts; a note when the saved cwd vanished."""
        if self._cwd.is_dir():
            return self._cwd, None
        if not self._root.is_dir():
            raise FileNotFoundError(f"the workspace root {self._root} does not exist")
        gone = self._cwd
        self._cwd = next((p for p in gone.parents if p.is_dir() and self._inside(p)), self._root)
        return self._cwd, f"[cwd reset to {self._cwd}: {gone} no longer exists]"

    def _keep_if_alive(self, job: _Job) -> None:
        """Track a finished command whose background jobs may still run, until they end.

        Known alive: they hold the output pipe or, as a subreaper, we still have
        children in the group. `close` kills what is tracked.
        """
        if job.proto.eof.done() and job.reap_orphans():
            job.transport.close()
        elif job not in self._lingering:
            self._lingering.append(job)

    def _drop_finished_lingering(self) -> None:
        for job in list(self._lingering):
            self._lingering.remove(job)
            self._keep_if_alive(job)

    async def _spawn(
        self, command: str, capture: _Capture, start: Path, hide: Sequence[str], sb: sandbox.Sandbox | None
    ) -> _Job:
        state_dir = self._ensure_state_dir()
        # A sandboxed command writes its state (and reads its command) in a folder of its
        # own: what it can write, the user's unsandboxed shell must not source unchecked.
        out_dir = self._box_dir(state_dir) if sb is not None else state_dir
        self._last_out = out_dir
        for name in ("env.next", "cwd.next"):
            with contextlib.suppress(FileNotFoundError):
                (state_dir / name).unlink()
        self._generation += 1
        cmd_file = out_dir / f"cmd.{self._generation}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(cmd_file, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(command)
        script = _script(out_dir, secret_names(hide), sandbox.forced_env(sb) if sb else {})
        # Once a state file exists it is the whole environment (so `unset` sticks).
        env = {} if self._env_file else self._base_env
        argv = [BASH, "--noprofile", "--norc", "-c", script, "bash", str(cmd_file), str(start)]
        env_in = self._env_file
        if env_in is not None and out_dir != state_dir:  # the state dir is not visible in the sandbox
            shutil.copyfile(env_in, out_dir / "env.in", follow_symlinks=False)
            env_in = out_dir / "env.in"
        argv.append(str(env_in or ""))
        if sb is not None:
            argv = sandbox.wrap(sb, argv, extra_writable=[str(out_dir)])
        loop = asyncio.get_running_loop()
        transport, proto = await loop.subprocess_exec(
            lambda: _Proto(loop, capture),
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=start,
            env=env,
            start_new_session=True,
        )
        return _Job(transport, proto)

    def _box_dir(self, state_dir: Path) -> Path:
        """The sandboxed commands' folder, emptied (whatever a command left there, links
        included, goes; the folder itself is not writable from inside)."""
        box = state_dir / "box"
        if box.is_symlink() or (box.exists() and not box.is_dir()):
            box.unlink()
        if box.is_dir():
            shutil.rmtree(box)
        box.mkdir(mode=0o700)
        return box

    def _adopt_state(self) -> str | None:
        """Take the state the command's EXIT trap wrote; a note if cwd was reset. A
        sandboxed command's state is taken only as `export -p` output, dangerous
        variables dropped (`shellstate.clean_state`)."""
        assert self._state_dir is not None
        out = self._last_out or self._state_dir
        boxed = out != self._state_dir
        env_next, cwd_next = out / "env.next", out / "cwd.next"
        try:
            cwd_data = read_regular_file(cwd_next, 4096, follow_symlinks=False)
            env_data = read_regular_file(env_next, 16 * 1024 * 1024, follow_symlinks=False) if boxed else b""
        except UnreadableFile:
            return None  # a link, a FIFO, too large: not the state our trap writes; keep the old one
        if cwd_data is None or env_data is None:
            return None  # the command replaced or removed our trap: keep the old state
        text = cwd_data.decode("utf-8", errors="surrogateescape")
        env_text = env_data.decode("utf-8", errors="surrogateescape") if boxed else None
        if not boxed and not env_next.exists():
            return None
        # A fresh name each time: renaming over a file makes ext4 flush it (slow).
        self._generation += 1
        env_file = self._state_dir / f"env.{self._generation}"
        if env_text is not None:
            cleaned = clean_state(env_text)
            if cleaned is None:
                return "[the command's shell state was not taken: it is not what `export -p` writes]"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with os.fdopen(os.open(env_file, flags, 0o600), "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(cleaned[0])
        else:
            os.rename(env_next, env_file)
        if self._env_file is not None:
            with contextlib.suppress(FileNotFoundError):
                self._env_file.unlink()
        self._env_file = env_file
        new_cwd = Path(text[:-1] if text.endswith("\n") else text)
        if new_cwd.is_absolute() and self._inside(new_cwd):
            self._cwd = new_cwd
            return None
        self._cwd = self._root
        return f"[cwd reset to the workspace root: {new_cwd} is outside the workspace]"

    async def run(
        self,
        command: str,
        *,
        on_output: Callable[[str], None],
        timeout: float,
        max_output_bytes: int,
        hide_env: Sequence[str] = (),
        box: sandbox.Sandbox | None = None,
    ) -> ShellResult:
        """Run `command`; calls are serialized. Cancelling kills the command's group.

        `hide_env`: names (besides the API keys) unset for the command (`secrets.envNames`).
        `box`: run inside this sandbox (see `sandbox_for`).
        """
        async with self._lock:
            if self._closed:
                raise RuntimeError("the shell is closed")
            self._drop_finished_lingering()
            capture = _Capture(max_output_bytes, on_output)
            start, note = self._start_dir()
            if note:
                capture.note(note)
            job = await self._spawn(command, capture, start, hide_env, box)
            self._current = job
            timed_out = False
            try:
                try:
                    async with asyncio.timeout(timeout):
                        await asyncio.shield(job.proto.exited)  # a cancel must not cancel it
                except TimeoutError:
                    timed_out = True
                    _killpg(job.pgid, signal.SIGTERM)
                    await job.wait_exited(TERM_GRACE_SECONDS)
                    await job.stop()
                if not job.proto.eof.done():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(job.proto.eof), EOF_GRACE_SECONDS)
            except BaseException:
                capture.detached = True
                await job.stop()
                job.transport.close()
                raise
            finally:
                self._current = None
            returncode = job.transport.get_returncode()
            exit_code: int | None = None
            reset: str | None = None
            if not timed_out and returncode is not None:
                exit_code = returncode if returncode >= 0 else 128 - returncode
                reset = self._adopt_state()
            capture.finish()
            if reset:
                capture.note(reset)
            capture.detached = True  # later output of background jobs is dropped
            if self._closed:
                job.transport.close()
            else:
                self._keep_if_alive(job)
            return ShellResult(
                output=capture.text,
                exit_code=exit_code,
                truncated=capture.truncated,
                timed_out=timed_out,
                cwd=str(self._cwd),
            )

    async def close(self) -> None:
        """Kill the running command and every background job; forget the state."""
        self._closed = True
        jobs = [*self._lingering, *([self._current] if self._current else [])]
        self._lingering.clear()
        for job in jobs:
            job.kill()
        for job in jobs:
            await job.stop()
            job.transport.close()
        for path in (self._state_dir, self._sandbox_tmp):
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)
