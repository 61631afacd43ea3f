"""A submission while it is known to its session: queued, running, or finishing."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from coder_ls.protocol.args import InputOrigin
from coder_ls.protocol.events import Event

if TYPE_CHECKING:
    from coder_ls.engine.session import Session

T = TypeVar("T")


class SubmissionState:
    """Every piece of work a submission starts is a task registered here, so that an
    interrupt reaches all of them and the request answers only when all have ended.

    `cancel()` acts once: a second cancel (another path, an impatient user) must not cut
    short the cleanup the first one started. `admitted` resolves when the submission may
    start (at once, or when the ones queued before it are done) or when it is cancelled."""

    def __init__(self, submission_id: str, session: Session, *, queued: bool = True) -> None:
        self.id = submission_id
        self.session = session
        self.queued = queued  # waits behind the session's running submission (else: immediate)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.cancelled = False
        self.progress_message = ""
        self.origin: InputOrigin = "typed"  # who sent the input (contract section 18), set when it is planned
        self.admitted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.finished = asyncio.Event()  # set by the frame once everything, cleanup included, is over

    def emit(self, event: Event) -> None:
        self.session.emit(event, self.id)

    def report(self, message: str) -> None:
        self.progress_message = message
        self.session.host.report_progress(self.id, message)

    def spawn(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        if self.cancelled:
            task.cancel()
        return task

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` as a registered task and wait for it."""
        return await self.spawn(coro)

    def admit(self) -> None:
        if not self.admitted.done():
            self.admitted.set_result(None)

    def cancel(self) -> bool:
        """Cancel everything this submission runs; False when it was cancelled already."""
        if self.cancelled:
            return False
        self.cancelled = True
        self.admit()  # a queued submission wakes up, sees it was cancelled, and never runs
        for task in list(self.tasks):
            task.cancel()
        return True

    async def drain(self) -> None:
        """Wait until every task this submission started has ended."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


def stamp(event: Event, session_id: str, submission_id: str, seq: int) -> Event:
    return msgspec.structs.replace(event, session_id=session_id, submission_id=submission_id, seq=seq)
