"""Run one hook command: its JSON on stdin, a timeout, output capped, Cancel kills it.

The command runs as Claude Code runs it (`bash -c`, in the workspace root, with
`CLAUDE_PROJECT_DIR` and, for a plugin's, `CLAUDE_PLUGIN_ROOT`), in its own process
group, with the scrubbed environment (`coder_ls/environ.py`: no API key, no listed secret).
Its stdin is a pipe holding the event's JSON and then closed (never the LSP stream). The
loop never waits on it: asyncio's subprocess transport reads it. A timeout or a cancel
kills the whole group (a hook's children too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

import msgspec

from coder_ls.environ import child_env
from coder_ls.hooks.settings import HookSpec

MAX_OUTPUT = 64 * 1024  # bytes kept of each of stdout and stderr


class HookRun(msgspec.Struct, frozen=True):
    """What one hook did. `exit_code` None: it did not finish (timed out, not started)."""

    spec: HookSpec
    exit_code: int | None
    stdout: str
    stderr: str
    ms: int
    timed_out: bool = False
    error: str = ""  # why it could not run or finish

    @property
    def failed(self) -> bool:
        return self.exit_code is None or self.exit_code not in (0, 2)


async def _read_capped(stream: asyncio.StreamReader | None, cap: int) -> bytes:
    if stream is None:
        return b""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < cap:
            kept += chunk[: cap - len(kept)]
    return bytes(kept)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _text(data: bytes, cap: int) -> str:
    text = data.decode("utf-8", errors="replace")
    return text + "\n[output truncated]" if len(data) >= cap else text


async def run_hook(
    spec: HookSpec, payload: bytes, root: Path, secrets: Iterable[str] = (), *, cap: int = MAX_OUTPUT
) -> HookRun:
    extra = {"CLAUDE_PROJECT_DIR": str(root)}
    if spec.plugin_root:
        extra["CLAUDE_PLUGIN_ROOT"] = spec.plugin_root
    start = time.monotonic()

    def ms() -> int:
        return int((time.monotonic() - start) * 1000)

    try:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            spec.command,
            cwd=str(root),
            env=child_env(secrets, set_=extra),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(spec, None, "", "", ms(), error=f"could not start: {exc}")

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(payload)
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.close()  # a hook that reads to EOF gets it

    async def run() -> tuple[bytes, bytes, int]:
        _, out, err = await asyncio.gather(feed(), _read_capped(proc.stdout, cap), _read_capped(proc.stderr, cap))
        return out, err, await proc.wait()

    try:
        out, err, code = await asyncio.wait_for(run(), spec.timeout)
    except TimeoutError:
        _kill_group(proc)
        await proc.wait()
        return HookRun(spec, None, "", "", ms(), timed_out=True, error=f"timed out after {spec.timeout:g}s")
    except asyncio.CancelledError:
        _kill_group(proc)  # Cancel: the hook and everything it started stop now
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
        raise
    finally:
        if proc.returncode is None:
            _kill_group(proc)
    return HookRun(spec, code, _text(out, cap), _text(err, cap), ms())
