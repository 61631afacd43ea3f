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
    from coder_ls.engine.shell import PersistentShell, ShellResult
    from coder_ls.guard import sandbox

RESTARTED = "[the sandbox settings changed: the agent's shell was restarted; exported variables were reset]\n"


class AgentShell:
    def __init__(self, root: Path, *, env: Mapping[str, str] | None = None) -> None:
        self._root = Path(root).absolute()
        self._env = env
        self._shell: PersistentShell | None = None
        self._tmp: Path | None = None  # the sandbox's /tmp, one per session
        self._lock = asyncio.Lock()
        self._closed = False
        self._grants: tuple[int, int, object] | None = None  # what the shell was given (see `run`)
        self._private: tuple[str, ...] | None = None  # `sandbox.server_dirs()`, once per session
        self._box: tuple[SandboxConfig, sandbox.Sandbox] | None = None  # the last one resolved

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
        from coder_ls.guard import sandbox

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
            note = ""
            shell = self._shell
            if shell is not None and shell.box != box:
                await shell.close()
                shell, note, self._grants = None, RESTARTED, None
            if shell is None:
                shell = self._shell = RedactingShell(self._root, env=self._env, box=box, cwd=self.cwd)
            if box is not None:
                # Both backends grant the workspace entry by entry around the protected paths
                # (`guard/protected.py`) when the shell starts: a top-level entry made since
                # (by the file tools, the user) is writable only from a shell started after it
                # appeared. The top's mtime says when the entries changed; the grants are
                # computed again only then, and a change restarts the shell (same cwd, its
                # exports replayed).
                st = os.stat(self._root)
                if self._grants is None or self._grants[:2] != (st.st_mtime_ns, st.st_ino):
                    grants = sandbox.writable(box)
                    if self._grants is not None and self._grants[2] != grants:
                        await shell.restart()
                    self._grants = (st.st_mtime_ns, st.st_ino, grants)
            if note:
                on_output(note)
            result = await shell.run(
                command, on_output=on_output, timeout=timeout, max_output_bytes=max_output_bytes, hide_env=hide_env
            )
        return msgspec.structs.replace(result, output=note + result.output) if note else result

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

    async def close(self) -> None:
        """Kill the shell and its background jobs; remove the sandbox's /tmp."""
        self._closed = True
        if self._shell is not None:
            await self._shell.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
