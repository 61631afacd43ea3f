"""Processes: background jobs of `!cmd` do not outlive the server, however they detach
(`nohup`, `setsid`, a disowned subshell), after shutdown+exit and after a closed stdin."""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path

import pytest
from harness import init_git, lsp_session, server_process

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")


def _sleepers(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline[:1] == [b"sleep"] and cmdline[1:2] == [marker.encode()] and state != "Z":
            found.append(int(entry))
    return found


def _commands(base: int) -> dict[str, str]:
    return {
        f"{base}.1": f"nohup sleep {base}.1 >/dev/null 2>&1 &",
        f"{base}.2": f"setsid sleep {base}.2 >/dev/null 2>&1 &",
        f"{base}.3": f"(sleep {base}.3 >/dev/null 2>&1 &); disown",
        f"{base}.4": f"setsid -f sh -c 'sleep {base}.4 >/dev/null 2>&1 &'",
    }


async def _start_jobs(s, base: int) -> list[str]:
    markers = _commands(base)
    for command in markers.values():
        result = await s.execute("coder.shell", {"command": command})
        assert result["status"] == "completed", result
    for marker in markers:
        for _ in range(100):
            if _sleepers(marker):
                break
            await asyncio.sleep(0.02)
        assert _sleepers(marker), f"{marker} did not start"
    return list(markers)


async def _gone(markers: list[str], seconds: float = 5.0) -> list[str]:
    left: list[str] = []
    for _ in range(int(seconds / 0.05)):
        left = [m for m in markers if _sleepers(m)]
        if not left:
            return []
        await asyncio.sleep(0.05)
    return left


@pytest.fixture
def cleanup():
    markers: list[str] = []
    yield markers
    for m in markers:
        for pid in _sleepers(m):
            os.kill(pid, 9)


async def test_background_jobs_die_with_shutdown_and_exit(tmp_path, cleanup):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    base = random.randint(100000, 900000)
    async with lsp_session(root) as s:
        cleanup.extend(await _start_jobs(s, base))
        proc = server_process(s)
    # lsp_session's exit sends shutdown + exit and waits for the server
    assert proc.returncode is not None
    assert await _gone(cleanup) == []


async def test_background_jobs_die_when_stdin_closes(tmp_path, cleanup):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    base = random.randint(100000, 900000)
    async with lsp_session(root) as s:
        cleanup.extend(await _start_jobs(s, base))
        proc = server_process(s)
        assert proc.stdin is not None
        proc.stdin.close()  # the editor went away without shutdown/exit
        await asyncio.wait_for(proc.wait(), 15)
        assert await _gone(cleanup) == []


async def test_exports_are_in_no_file_and_the_run_dir_is_private_and_removed(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        await s.execute("coder.shell", {"command": "export SECRETISH=value-4417"})
        await s.execute("coder.shell", {"command": "true"})
        pid = server_process(s).pid
        runs = [p / f"coder-ls-{os.getuid()}-{pid}" for p in _run_parents(root)]
        for run in runs:
            if run.is_dir():
                assert run.stat().st_mode & 0o777 == 0o700
                for f in run.rglob("*"):
                    assert not f.is_file() or b"value-4417" not in f.read_bytes(), f
    assert not any(run.exists() for run in runs)


def _run_parents(root: Path) -> list[Path]:
    """Where the server may keep it: the runtime dir, else the state dir the harness gives it."""
    out = [Path(p) for p in (os.environ.get("XDG_RUNTIME_DIR") or "",) if p]
    return [*out, root.parent / f".xdg-state-{root.name}" / "coder" / "run"]
