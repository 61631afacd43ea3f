"""The race of issue 36 item 1, shared by the LSP and ACP tests: the agent's sandboxed shell
leaves a background job that replaces the folder `sub/d` with a link out of the workspace
while an edit of `sub/d/pwn.txt` waits for the editor, who answers once the swap happened."""

from __future__ import annotations

import asyncio
from pathlib import Path

SWAP_AFTER = 3.0  # seconds: the job swaps the folder while the edit waits for the editor


def swap_job(outside: Path) -> str:
    """The agent's bash line: a background job that replaces `sub/d` with a link to `outside`."""
    return f"(sleep {SWAP_AFTER}; rm -rf sub/d; ln -s {outside} sub/d) >/dev/null 2>&1 &"


def real_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def swapped(path: Path) -> bool:
    return path.is_symlink()


async def until_swapped(link: Path, timeout: float = 15.0) -> None:
    """The editor taking its time: it answers once the background job swapped the folder."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not swapped(link):
        assert loop.time() < deadline, "the background job never swapped the folder"
        await asyncio.sleep(0.05)
