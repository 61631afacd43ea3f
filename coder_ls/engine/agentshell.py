"""The agent's shell of one session: a `PersistentShell` in the sandbox, apart from the user's.

Started on the agent's first shell call and kept for the session: `cd`, exported
variables and functions carry from one agent call to the next in that process. It never
shares anything with the user's `!` shell (`Session.shell`): another process, its own
environment built from the server's (secrets removed), its own working directory
(starting at the workspace root). Nothing crosses in either direction; what the agent's
commands export stays in the agent's shell.

The sandbox (`sandbox_for`) is fixed for the life of the process: when the settings ask
for another one (`sandbox.mode`, `network`, `writableRoots` changed), the shell is closed
and a new one starts in the same working directory with a fresh environment. A command
the user lets run outside the sandbox (`run_outside`) gets a one-off unsandboxed shell in
the agent's working directory and the server's environment: not the agent's exports,
which a sandboxed command chose.

Under bubblewrap the workspace is writable whole and the protected paths are held by pins
(`guard/pins.py`), which a process outside can undo by replacing a pinned entry: the
shell's `PinGuard` (`engine/pinguard.py`) kills the sandbox the moment its watch sees that,
and each command checks the pins again first; the next command runs in a new shell (cwd
and exports kept). `put_away` closes the shell and removes its placeholders (before the
server itself writes a protected path); so does an idle shell (`IDLE_SECONDS` without a
command, no job of its own alive, the session not in a turn), and the next call starts it
again. Under Landlock the workspace is granted entry by entry when the shell starts, so a
new top-level entry restarts it (`_landlock_grants`).

The agent's background shells (`bash {background: true}`, `engine/bgshells.py`) are
processes of their own beside this bash, in the same sandbox, started from its cwd with its
exports; `close` ends them, a put-away or a restart of the bash does not.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from coder_ls.protocol.config import SandboxConfig

if TYPE_CHECKING:  # imported when the shell is first used: a session's first request needs none
    from coder_ls.engine.bgshells import BackgroundShells
    from coder_ls.engine.pinguard import PinGuard
    from coder_ls.engine.shell import PersistentShell, ShellResult
    from coder_ls.guard import netproxy, pins, sandbox

RESTARTED = "[the sandbox settings changed: the agent's shell was restarted; exported variables were reset]\n"
PIN_CHANGED = (
    "[{path} changed outside the sandbox, which undoes the sandbox's hold on it: the agent's shell was "
    "stopped{during}; this command runs in a new one (cwd and exported variables kept)]\n"
)
PIN_RACE = (
    "Coder: {path} was changed outside the agent's sandbox while a command of the agent was running there. "
    "The sandbox was stopped at once, but for about a millisecond that command could write {path}: "
    "if it now holds something you did not put there, that is why (check it, e.g. with git diff)."
)
# An unused shell is put away (closed, its placeholders removed) after this long.
IDLE_SECONDS = 60.0
# ... and looked at again this often while a job of its own or the session's turn goes on.
IDLE_RECHECK_SECONDS = 5.0


class AgentShell:
    def __init__(
        self,
        root: Path,
        *,
        env: Mapping[str, str] | None = None,
        busy: Callable[[], bool] | None = None,
        on_warning: Callable[[str], None] | None = None,
        private: tuple[str, ...] | None = None,
    ) -> None:
        """`busy`: whether the session is in a turn (no idle put-away then); `on_warning`:
        tells the user something they should check (a pin undone while a command ran);
        `private`: the server's own directories kept out of the writable roots (default
        `sandbox.server_dirs()`; an isolated step's shell, rooted in a worktree inside the
        server's state directory, leaves that one out: `agent/isolated.py`)."""
        self._root = Path(root).absolute()
        self._on_warning = on_warning
        self._env = env
        self._busy = busy
        self._shell: PersistentShell | None = None
        self._tmp: Path | None = None  # the sandbox's /tmp, one per session
        self._lock = asyncio.Lock()
        self._closed = False
        self._grants: tuple[int, int, object] | None = None  # Landlock: what the shell was given
        self._private: tuple[str, ...] | None = private  # `sandbox.server_dirs()`, once per session
        self._box: tuple[SandboxConfig, sandbox.Sandbox] | None = None  # the last one resolved
        self._guard: PinGuard | None = None  # the pins of the running bwrap shell
        self._killed: str | None = None  # what the watch saw, while a command ran
        self._idle: asyncio.TimerHandle | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self._proxy: netproxy.ProxyHandle | None = None  # the shell's way through the network proxy
        self._background: BackgroundShells | None = None  # made at the first `bash {background: true}`

    @property
    def cwd(self) -> Path:
        return self._shell.cwd if self._shell is not None else self._root

    @property
    def root(self) -> Path:
        return self._root

    def exports(self) -> dict[str, str] | None:
        """The environment the agent's next command starts with (for the refused-command check)."""
        return self._shell.exports() if self._shell is not None else None

    @property
    def pid(self) -> int | None:
        return self._shell.pid if self._shell is not None else None

    def sandbox_for(self, config: SandboxConfig) -> sandbox.Sandbox | None:
        """The sandbox `config` asks for on this machine (None: `off` or none available)."""
        from coder_ls.guard import lifetime, sandbox

        if config.mode == "off" or not sandbox.available():
            return None
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=lifetime.run_dir()))
        if self._private is None:  # the server's own directories: fixed for its life (2/3 of the cost)
            self._private = sandbox.server_dirs()
        box = self._box[1] if self._box is not None and self._box[0] == config else None
        if box is not None and self._tmp.is_dir() and os.path.isdir(box.cache):
            return box  # the same settings, every writable root there: the same box
        box = sandbox.resolve(config, self._root, self._tmp, private=self._private)
        # a writable root that does not exist yet is looked for again at the next command
        complete = box is not None and len(box.writable) == len(config.writable_roots)
        self._box = (config, box) if box is not None and complete else None
        return box

    @property
    def layout(self) -> pins.Layout | None:
        """The mounts of the running bwrap shell's writable roots (for one-shot sandboxes
        that need the same walls), or None."""
        return self._guard.layout if self._guard is not None else None

    def _wrap(self, argv: list[str]) -> list[str]:
        """The running shell's sandbox around `argv`: its pins laid and watched anew."""
        from coder_ls.engine.pinguard import PinGuard
        from coder_ls.guard import sandbox

        shell = self._shell
        assert shell is not None and shell.box is not None
        proxy = self._proxy_for(shell.box)
        if shell.box.backend != "bwrap" or shell.box.mode != "workspace-write":
            return sandbox.wrap(shell.box, argv, proxy=proxy)
        if self._guard is None:
            self._guard = PinGuard(self._on_pin_change)
        return sandbox.wrap(shell.box, argv, mounts=self._guard.arm(shell.box), proxy=proxy)

    def _proxy_for(self, box: sandbox.Sandbox) -> netproxy.ProxyHandle | None:
        """The shell's way through the server's network proxy when `box` has domain rules
        (bubblewrap only): one handle for the life of this object's shells, its rules kept
        current; None (and any handle given back) otherwise."""
        if box.domains is None or box.backend != "bwrap" or box.network:
            self._close_proxy()
            return None
        from coder_ls.guard import netproxy  # only when a sandbox has domain rules

        if self._proxy is None:
            self._proxy = netproxy.server_proxy().open(box.domains)
        self._proxy.rules = box.domains
        return self._proxy

    def _close_proxy(self) -> None:
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None

    def network_mark(self) -> int | None:
        """A point in the proxy's refusal log for this shell (None: no domain rules)."""
        return self._proxy.mark() if self._proxy is not None else None

    def refused_domains(self, mark: int | None) -> list[str]:
        """The domains the proxy refused this shell since `mark`, each once (a None mark: the
        shell had no way through the proxy yet, so since its first)."""
        if self._proxy is None:
            return []
        return self._proxy.refused_since(mark or 0)

    def _on_pin_change(self, path: str) -> None:
        """The watch saw a held entry change: the sandbox dies now, before anything in it can
        use the name the kernel just freed. If a command or a job of the agent's was alive,
        it had that name for the watch's latency (about a millisecond): the user is told, so
        that a write it got through in that window is not silent (docs/security.md, "Pins and
        the host")."""
        if self._shell is not None and self._guard is not None and self._guard.layout is not None:
            first = self._killed is None  # both watches may report the one change
            occupied = first and self._on_warning is not None and _occupied(self._shell.pid)  # µs: before the kill
            self._shell.kill_now()
            self._killed = self._killed or path
            if occupied and self._on_warning is not None:
                shown = os.path.relpath(path, self._root) if Path(path).is_relative_to(self._root) else path
                self._on_warning(PIN_RACE.format(path=shown))

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
        """Run `command` in the agent's shell, inside `box` (see `sandbox_for`); a git line that
        writes runs once in the git lane instead (`engine/gitlane.py`)."""
        from coder_ls.engine import gitlane
        from coder_ls.engine.redactshell import RedactingShell

        if box is not None and (lane := gitlane.route(command, self._root, self.cwd, box)) is not None:
            async with self._lock:
                if self._closed:
                    raise RuntimeError("the shell is closed")
                return await gitlane.run(
                    lane,
                    command,
                    box=box,
                    env=self._env,
                    exports=self.exports(),
                    on_output=on_output,
                    timeout=timeout,
                    max_output_bytes=max_output_bytes,
                    hide_env=hide_env,
                )
        async with self._lock:
            if self._closed:
                raise RuntimeError("the shell is closed")
            self._cancel_idle()
            note = ""
            shell = self._shell
            if shell is not None and shell.box != box:
                await self._stop(shell)
                shell, note, self._grants = None, RESTARTED, None
            if shell is None:
                shell = self._shell = RedactingShell(
                    self._root, env=self._env, box=box, cwd=self.cwd, wrap=self._wrap if box is not None else None
                )
            if box is not None and box.backend == "landlock":
                await self._landlock_grants(shell, box)
            if self._killed:  # the watch killed it since the last command
                await shell.restart()  # reaped before the next one starts
                note += PIN_CHANGED.format(path=self._killed, during="")
                self._killed = None
            elif self._guard is not None and shell.pid is not None and (path := self._guard.changed()):
                await shell.restart()  # the next bash starts with its pins laid anew
                note += PIN_CHANGED.format(path=path, during="")
            if note:
                on_output(note)
            try:
                result = await shell.run(
                    command, on_output=on_output, timeout=timeout, max_output_bytes=max_output_bytes, hide_env=hide_env
                )
            finally:
                if not self._killed and self._guard is not None and (pid := shell.pid) is not None:
                    if missing := self._guard.watch_mounts(pid):  # once a shell: its mounts are all laid now
                        shell.kill_now()
                        self._killed = missing
                killed, self._killed = self._killed, None
                self._schedule_idle()
            if killed:
                await shell.restart()  # reaped now: the next command starts a new one, pins laid anew
                after = PIN_CHANGED.format(path=killed, during=" while this command ran").replace(
                    "; this command runs in a new one", "; the next command runs in a new one"
                )
                on_output(after)
                note += after
        return msgspec.structs.replace(result, output=note + result.output) if note else result

    async def _landlock_grants(self, shell: PersistentShell, box: sandbox.Sandbox) -> None:
        """Landlock grants the workspace entry by entry around the protected paths
        (`guard/protected.py`) when the shell starts: a top-level entry made since (by the
        file tools, the user) is writable only from a shell started after it appeared. The
        top's mtime says when the entries changed; the grants are computed again only then,
        and a change restarts the shell (same cwd, its exports replayed). bubblewrap binds
        the top whole: the agent's own new entries never restart it (nor kill its jobs)."""
        from coder_ls.guard import sandbox

        st = os.stat(self._root)
        if self._grants is None or self._grants[:2] != (st.st_mtime_ns, st.st_ino):
            grants = sandbox.writable(box)
            if self._grants is not None and self._grants[2] != grants:
                await shell.restart()
            self._grants = (st.st_mtime_ns, st.st_ino, grants)

    async def run_outside(
        self,
        command: str,
        *,
        on_output: Callable[[str], None],
        timeout: float,
        max_output_bytes: int,
        hide_env: Sequence[str] = (),
    ) -> ShellResult:
        """Run `command` once, unsandboxed, in a shell of its own started in the agent's cwd."""
        from coder_ls.engine.redactshell import RedactingShell

        one = RedactingShell(self._root, env=self._env, cwd=self.cwd)
        try:
            return await one.run(
                command, on_output=on_output, timeout=timeout, max_output_bytes=max_output_bytes, hide_env=hide_env
            )
        finally:
            await one.close()

    @property
    def background(self) -> BackgroundShells:
        """The session's background shells (`engine/bgshells.py`)."""
        if self._background is None:
            from coder_ls.engine.bgshells import BackgroundShells

            self._background = BackgroundShells()
        return self._background

    async def start_background(self, command: str, *, box: sandbox.Sandbox | None, hide_env: Sequence[str] = ()) -> str:
        """Start `command` as a background shell in `box`, the sandbox a foreground command
        would run in now (`sandbox_for`), from the agent's cwd with the agent's exports
        (secrets unset); its id. Under bubblewrap its workspace is split entry by entry
        (`sandbox.layout` without a holder), as the git lane's is: it holds no pin the
        watch would have to guard, and the protected paths stay out of reach."""
        from coder_ls.engine.shell import BASH
        from coder_ls.environ import child_env
        from coder_ls.guard import sandbox

        if self._closed:
            raise RuntimeError("the shell is closed")
        forced = sandbox.forced_env(box) if box is not None else {}
        exports = self.exports() if self._shell is not None else None
        if exports is None:  # no command ran yet: the environment the first one gets
            exports = child_env(base=self._env, drop=("PWD", "OLDPWD"), set_={"TERM": "dumb", "PAGER": "cat"})
        env = child_env(hide_env, base=exports, set_=forced)
        argv = [BASH, "--noprofile", "--norc", "-c", command]
        if box is not None:
            argv = sandbox.wrap(box, argv, proxy=self._proxy_for(box))
        cwd = self.cwd if self.cwd.is_dir() else self._root
        return await self.background.start(command, argv, cwd=cwd, env=env, hide_env=hide_env)

    async def _stop(self, shell: PersistentShell) -> None:
        await shell.close()
        if self._guard is not None:
            self._guard.disarm()

    async def put_away(self) -> None:
        """Close the shell (its jobs with it) and remove its placeholders, at once; the next
        call starts it again in the same cwd with the same exports. The server calls this
        before it writes a protected path itself, so that its own write never undoes a pin
        under a living sandbox."""
        self._cancel_idle()
        if self._shell is not None:
            self._shell.kill_now()
        async with self._lock:
            await self._put_away()

    async def _put_away(self) -> None:
        if self._shell is not None:
            await self._shell.restart()
        if self._guard is not None:
            self._guard.disarm()

    def _cancel_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _schedule_idle(self, delay: float | None = None) -> None:
        self._cancel_idle()
        if self._closed or self._guard is None or self._guard.layout is None:
            return  # nothing held: nothing to put away
        wait = IDLE_SECONDS if delay is None else delay
        self._idle = asyncio.get_running_loop().call_later(wait, self._idle_due)

    def _idle_due(self) -> None:
        self._idle = None
        self._idle_task = asyncio.ensure_future(self._idle_check())

    async def _idle_check(self) -> None:
        if self._closed or self._lock.locked():
            return  # a command runs: its end schedules the next check
        if (self._busy is not None and self._busy()) or self._jobs_alive():
            self._schedule_idle(IDLE_RECHECK_SECONDS)
            return
        async with self._lock:
            await self._put_away()

    def _jobs_alive(self) -> bool:
        """Whether anything but the loop's bash lives in the sandbox (bubblewrap's own init
        aside): a background job, `setsid` or not, which an idle put-away must not kill."""
        from coder_ls.guard import lifetime

        pid = self._shell.pid if self._shell is not None else None
        if pid is None:
            return False
        live = [p for p in lifetime.descendants(pid) if not _zombie(p) and not _forwarder(p)]
        return len(live) > 2  # bwrap's init, the loop's bash

    async def close(self) -> None:
        """Kill the shell and its background jobs; remove the sandbox's /tmp and the placeholders."""
        self._closed = True
        self._cancel_idle()
        if self._background is not None:
            await self._background.close()
        if self._shell is not None:
            await self._shell.close()
        if self._guard is not None:
            self._guard.disarm()
        self._close_proxy()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def _children(pid: int) -> list[int]:
    try:
        return [
            int(c) for t in os.listdir(f"/proc/{pid}/task") for c in _read(f"/proc/{pid}/task/{t}/children").split()
        ]
    except (OSError, ValueError):
        return []


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _occupied(pid: int | None) -> bool:
    """Whether a command or a job of the agent's lives in the sandbox of the shell `pid`
    (bubblewrap): anything below the loop's bash, or beside it under the sandbox's init (an
    orphan). Read from the kernel's child lists, three processes deep, not all of /proc, so
    that it costs microseconds where a kill waits on it."""
    if pid is None:
        return False
    for init in _children(pid):
        below = _children(init)
        if len(below) > 1:
            return True
        for bash in below:
            if any(not _forwarder(c) for c in _children(bash)):
                return True
    return False


def _forwarder(pid: int) -> bool:
    """The network proxy's forwarder (`guard/netfwd.py`): part of the sandbox, not a job."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"netfwd.py" in f.read()
    except OSError:
        return False


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return True
    return data[data.rfind(b")") + 2 : data.rfind(b")") + 3] in (b"Z", b"X")
