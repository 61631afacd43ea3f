"""Running a line of the git lane (`guard/gitlane.py`): once, in a sandbox of its own.

The same bubblewrap layout as the agent's shell, plus the lane's mounts (`.git` writable,
what git executes or trusts pinned read-only), around a one-off `RedactingShell`: output
capped and redacted, timeout, cancellation and the process-group kill as in the agent's
shell. It starts in the agent shell's cwd with the server's environment (secrets removed),
the sandbox's forced variables and `GIT_EDITOR=:`, `GIT_SEQUENCE_EDITOR=:`,
`GIT_TERMINAL_PROMPT=0`; not the agent's exports, which could set `HOME`,
`XDG_CONFIG_HOME`, `GIT_*` or `PATH`, except a few inert ones (`INERT_ENV`: the author and
committer, the locale, the time zone).

After the command the shell is closed and its whole sandbox waited for (the server is a
subreaper: the sandbox's init is reaped only once every process in its PID namespace,
a hook's background job included, is gone); only then are the placeholders removed and
whatever git internal appeared moved to `.coder/quarantine/` and named in the output.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.engine.redactshell import RedactingShell
from coder_ls.engine.shell import ShellResult
from coder_ls.guard import gitlane, lifetime, pins, sandbox
from coder_ls.guard.gitlane import Lane

# Taken from the server's environment: they would point git at another repository.
REPOSITORY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "CDPATH",
)
LANE_ENV = {"GIT_EDITOR": ":", "GIT_SEQUENCE_EDITOR": ":", "GIT_TERMINAL_PROMPT": "0"}
# How long the sandbox gets to be gone after its shell was killed.
GONE_SECONDS = 2.0
CARRIES_NOTE = (
    "[git ran in a one-off sandbox (the git lane): a cd or export in this line does not carry over to the next command]"
)


def lane_env(base: Mapping[str, str] | None, exports: Mapping[str, str] | None) -> dict[str, str]:
    """The server's environment without what redirects git, the agent's inert exports, the
    lane's editors (`PersistentShell` then removes the secrets and adds the forced ones)."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in REPOSITORY_ENV}
    env.update({k: v for k, v in (exports or {}).items() if gitlane.INERT_ENV.fullmatch(k)})
    env.update(LANE_ENV)
    return env


def route(command: str, root: Path, cwd: Path, box: sandbox.Sandbox | None) -> Lane | None:
    """The lane for `command`, when the agent's box is bubblewrap's `workspace-write`."""
    if box is None or box.backend != "bwrap" or box.mode != "workspace-write":
        return None
    return gitlane.route(command, root, cwd)


class _LaneShell(RedactingShell):
    """A one-off shell that remembers its process group (the sandbox's), to wait for it."""

    pgid: int | None = None

    async def _spawn(self, start: Path) -> Any:
        job = await super()._spawn(start)
        self.pgid = job.pgid
        return job


async def run(
    lane: Lane,
    command: str,
    *,
    box: sandbox.Sandbox,
    env: Mapping[str, str] | None,
    exports: Mapping[str, str] | None,
    on_output: Callable[[str], None],
    timeout: float,
    max_output_bytes: int,
    hide_env: Sequence[str] = (),
) -> ShellResult:
    """Run `command` once in the lane; the result's cwd is the lane's start (nothing carries)."""
    environment = lane_env(env, exports)
    try:
        lock = os.open(lane.gitdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        return _failed(lane, f"could not open {lane.gitdir}: {exc}", on_output)
    try:
        await _lock(lock)
        held = await asyncio.to_thread(gitlane.prepare, lane.root, lane.gitdir, environment)
    except BaseException as exc:
        os.close(lock)  # and with it the lock
        if isinstance(exc, OSError):  # the server cannot write .git itself: git could not either
            return _failed(lane, f"could not prepare {lane.gitdir}: {exc}", on_output)
        raise
    # The agent shell's layout (the top writable whole, pins, placeholders held for this run:
    # a lane may be the session's first command), then the lane's own mounts over `.git`.
    holder = _holder()
    layout = sandbox.layout(box, holder)

    def wrap(argv: list[str]) -> list[str]:
        return sandbox.wrap(box, argv, extra_args=held.args, mounts=layout if holder is not None else None)

    shell = _LaneShell(Path(lane.root), env=environment, box=box, cwd=Path(lane.cwd), wrap=wrap)
    try:
        result = await shell.run(
            command, on_output=on_output, timeout=timeout, max_output_bytes=max_output_bytes, hide_env=hide_env
        )
    finally:  # shielded: a second cancel must not leave the placeholders half handled
        moved, gone = await asyncio.shield(asyncio.ensure_future(_finish(shell, held, lock)))
        if holder is not None and layout.placeholders:
            holder.release(layout.placeholders)
    notes: list[str] = []
    if moved:
        notes.append("[git lane: git internals that appeared during the run were moved out: " + ", ".join(moved) + "]")
    if not gone:
        notes.append("[git lane: the sandbox did not end in time; its placeholders stay until the next git call]")
    if lane.carries:
        notes.append(CARRIES_NOTE)
    output = result.output
    if notes:
        text = ("\n" if output and not output.endswith("\n") else "") + "\n".join(notes) + "\n"
        on_output(text)
        output += text
    return msgspec.structs.replace(result, output=output, cwd=lane.cwd)


def _holder() -> pins.Placeholders | None:
    """The server's placeholder registry (shared with the agent shells), or None when the run
    directory cannot hold it: the layout is then split, as Landlock's is."""
    try:
        return pins.registry(lifetime.run_dir() / pins.RECORD)
    except OSError:
        return None


def _failed(lane: Lane, why: str, on_output: Callable[[str], None]) -> ShellResult:
    text = f"[git lane: {why}]\n"
    on_output(text)
    return ShellResult(output=text, exit_code=1, truncated=False, timed_out=False, cwd=lane.cwd)


async def _lock(fd: int) -> None:
    """One lane at a time on a repository, across sessions and servers (`flock` on the git
    dir): a lane must not remove the placeholders another one holds."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            await asyncio.sleep(0.02)


async def _finish(shell: _LaneShell, held: gitlane.Held, lock: int) -> tuple[list[str], bool]:
    """Close the shell, wait for its sandbox to be gone, release what the run held, unlock."""
    try:
        await shell.close()
        gone = await _gone(shell.pgid)
        return await asyncio.to_thread(gitlane.release, held, gone=gone), gone
    finally:
        os.close(lock)


async def _gone(pgid: int | None) -> bool:
    """Wait until no process of the sandbox's group is left (its init last: the kernel ends
    every other process of the PID namespace first), reaping what was orphaned to us."""
    if pgid is None:
        return True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GONE_SECONDS
    while True:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-pgid, os.WNOHANG)[0]:  # noqa: ASYNC222 (WNOHANG: never waits)
                pass
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.005)
