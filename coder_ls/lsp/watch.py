"""Watch the command and skill folders and tell the client when the catalog changes."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
from pathlib import Path

from coder_ls.engine.executor import Engine

log = logging.getLogger(__name__)


def _watch_roots(dirs: list[Path], home: Path) -> list[Path]:
    """The folders themselves when they exist, else their parent (`.coder`, `.claude`,
    `~/.config/coder`) so that a folder created later is seen. Never the parent `~/.claude`
    itself: it holds the other tool's whole history, too much to watch recursively."""
    roots: list[Path] = []
    for d in dirs:
        candidates = (d,) if d.parent == home / ".claude" else (d, d.parent)
        for candidate in candidates:
            if candidate.is_dir():
                if candidate not in roots:
                    roots.append(candidate)
                break
    return roots


async def watch_commands(engine: Engine, stop: asyncio.Event) -> None:
    dirs = engine.command_watch_dirs()
    roots = _watch_roots(dirs, Path(engine.env.get("HOME") or "/nonexistent"))
    if not roots:
        return
    # Imported in a thread (it takes tens of ms) so requests right after start-up don't wait.
    module = await asyncio.to_thread(importlib.import_module, "watchfiles")
    awatch = module.awatch

    wanted = [str(d) for d in dirs]

    def only_commands(change: object, path: str) -> bool:
        # a new skill folder counts too: a SKILL.md written into it at once can come before
        # the watch on the folder is in place, and its own event is then never seen
        return any(path.startswith(w) for w in wanted) and (path.endswith(".md") or os.path.dirname(path) in wanted)

    def refresh() -> None:
        if engine.refresh_commands():
            engine.announce_commands_changed()

    try:
        # A change is announced 10 ms after the events stop (`step`; 50 by default, the
        # most of the 50 ms goal of benchmarks/README.md `corpus_change`), 100 at most
        # while they go on; what a slow writer adds later the second refresh sees.
        async for _ in awatch(
            *roots, watch_filter=only_commands, stop_event=stop, recursive=True, debounce=100, step=10
        ):
            refresh()
            await asyncio.sleep(0.4)  # and once more: what was written right after the event
            refresh()
    except (OSError, RuntimeError) as exc:  # a folder vanished, or the watcher is unavailable
        log.info("not watching prompt commands: %s", exc)


def start(engine: Engine) -> tuple[asyncio.Task[None], asyncio.Event]:
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(watch_commands(engine, stop))
    return task, stop


async def stop_watch(handle: tuple[asyncio.Task[None], asyncio.Event] | None) -> None:
    if handle is None:
        return
    task, stop = handle
    stop.set()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
