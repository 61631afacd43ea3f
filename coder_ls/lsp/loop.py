"""The server's event loop, run until the client leaves, with a bounded end.

`asyncio.run` cancels every task left when the read loop ends and then waits for all of
them, however long: one task that does not end when cancelled keeps the process alive
with nobody at the other end of the pipe (seen in CI: a server left behind by an editor
that quit during a turn, `asyncio.run`'s `_cancel_all_tasks` waiting forever). Here the
tasks get `grace` seconds to end after their cancellation; the ones that did not are
named in the log and left, and the process goes on to exit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)

GRACE_SECONDS = 5.0


def run_until_client_leaves(main: Coroutine[Any, Any, None], grace: float = GRACE_SECONDS) -> None:
    """Run `main` on a new loop, then end its other tasks within `grace` seconds and close it.
    Exceptions of `main` propagate (after the loop is closed), as with `asyncio.run`."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    finally:
        try:
            _end_tasks(loop, grace)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(_bounded(loop.shutdown_default_executor(), grace))
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _end_tasks(loop: asyncio.AbstractEventLoop, grace: float) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    loop.run_until_complete(asyncio.wait(tasks, timeout=grace))
    stuck = [t for t in tasks if not t.done()]
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            log.warning("a task ended with an error at exit: %r", task.exception())
    if stuck:
        names = ", ".join(t.get_name() for t in stuck[:5])
        log.warning("%d task(s) did not end within %.0f s of their cancellation (%s): exiting without them",
                    len(stuck), grace, names)  # fmt: skip


async def _bounded(awaitable: Any, grace: float) -> None:
    try:
        await asyncio.wait_for(awaitable, grace)
    except TimeoutError:
        log.warning("the default executor's threads did not end within %.0f s: exiting without them", grace)
