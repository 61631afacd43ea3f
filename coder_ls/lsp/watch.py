"""Watch the command and skill folders and tell the client when the catalog changes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

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


def _open(roots: list[Path]) -> Any:
    """The inotify watches on `roots`, set up in a worker thread: importing watchfiles (and
    anyio) takes tens of ms and watching 1,000 skill folders about 30 more, which on the
    event loop (as `awatch` does it) held up the first requests after start-up."""
    from watchfiles._rust_notify import RustNotify

    return RustNotify([str(r) for r in roots], False, False, 300, True, False)


async def watch_commands(engine: Engine, stop: asyncio.Event) -> None:
    dirs = engine.command_watch_dirs()
    roots = _watch_roots(dirs, Path(engine.env.get("HOME") or "/nonexistent"))
    if not roots:
        return
    wanted = [str(d) for d in dirs]

    def only_commands(path: str) -> bool:
        # a new skill folder counts too: a SKILL.md written into it at once can come before
        # the watch on the folder is in place, and its own event is then never seen
        return any(path.startswith(w) for w in wanted) and (path.endswith(".md") or os.path.dirname(path) in wanted)

    def refresh() -> None:
        if engine.refresh_commands():
            engine.announce_commands_changed()

    try:
        notify = await asyncio.to_thread(_open, roots)
    except (OSError, RuntimeError, ImportError) as exc:  # a folder vanished, or no watcher here
        log.info("not watching prompt commands: %s", exc)
        return
    try:
        refresh()  # what changed before the watches were in place is announced too
        while not stop.is_set():
            # A change is announced 10 ms after the events stop (`step`; 50 by default, the
            # most of the 50 ms goal of benchmarks/README.md `corpus_change`), 100 at most
            # while they go on; what a slow writer adds later the second refresh sees.
            # `stop` is read by the watching thread (`is_set`), so a stop ends the wait.
            raw = await asyncio.to_thread(notify.watch, 100, 10, 5000, stop)
            if raw in ("stop", "signal"):
                return
            if raw == "timeout" or not any(only_commands(path) for _, path in raw):
                continue
            refresh()
            await asyncio.sleep(0.4)  # and once more: what was written right after the event
            refresh()
    except asyncio.CancelledError:
        stop.set()  # the watching thread returns at its next step
        raise
    except (OSError, RuntimeError) as exc:  # a folder vanished, or the watcher failed
        log.info("not watching prompt commands: %s", exc)
    finally:
        notify.close()


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
