"""Small helpers shared by the end-to-end tests (processes, git, progress)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from lsprotocol import types


def pids_matching(marker: str) -> list[int]:
    """Pids of processes whose command line contains `marker` (pgrep never lists itself)."""
    run = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return [int(p) for p in run.stdout.split()]


async def wait_until_gone(marker: str, timeout: float = 5.0) -> list[int]:
    """Wait for every process matching `marker` to be gone; the survivors if any."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        left = pids_matching(marker)
        if not left or asyncio.get_running_loop().time() > deadline:
            return left
        await asyncio.sleep(0.05)


async def wait_running(marker: str, timeout: float = 10.0) -> list[int]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = pids_matching(marker)
        if found:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no process matching {marker!r} started")
        await asyncio.sleep(0.02)


def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def progress_kinds(values: list[Any]) -> list[str]:
    return [getattr(v, "kind", None) for v in values]


def begin_tokens(s: Any) -> list[Any]:
    """Tokens on which a `begin` arrived."""
    return [t for t, values in s.client.progress_reports.items() if "begin" in progress_kinds(values)]


def end_message(s: Any, token: Any) -> str | None:
    for v in s.client.progress_reports.get(token, []):
        if isinstance(v, types.WorkDoneProgressEnd):
            return v.message
    return None


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def error_messages(s: Any) -> list[str]:
    return [m.message for m in s.client.messages if m.type == types.MessageType.Error]
