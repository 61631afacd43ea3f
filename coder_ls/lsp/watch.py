"""Watch the prompt-command folders and tell the client when the catalog changes."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from pathlib import Path

from coder_ls.engine.executor import Engine

log = logging.getLogger(__name__)


def _watch_roots(dirs: list[Path]) -> list[Path]:
    """The folders themselves when they exist, else their nearest existing parent (bounded)."""
    roots: list[Path] = []
    for d in dirs:
        for candidate in (d, d.parent):
            if candidate.is_dir():
                roots.append(candidate)
                break
    return roots


async def watch_commands(engine: Engine, stop: asyncio.Event) -> None:
    dirs = engine.command_watch_dirs()
    roots = _watch_roots(dirs)
    if not roots:
        return
    # Imported in a thread (it takes tens of ms) so requests right after start-up don't wait.
    module = await asyncio.to_thread(importlib.import_module, "watchfiles")
    awatch = module.awatch

    wanted = [str(d) for d in dirs]

    def only_commands(change: object, path: str) -> bool:
        return path.endswith(".md") and any(path.startswith(w) for w in wanted)

    try:
        async for _ in awatch(*roots, watch_filter=only_commands, stop_event=stop, recursive=True, debounce=200):
            if engine.refresh_commands():
                engine.announce_commands_changed()
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
