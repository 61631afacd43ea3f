"""A running submission: its tasks, its events, its progress."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from coder_ls.protocol.events import Event

if TYPE_CHECKING:
    from coder_ls.engine.session import Session

T = TypeVar("T")


class SubmissionState:
    """Every long action a submission starts is a task registered here, so that an
    interrupt reaches all of them and the request answers only when all have ended."""

    def __init__(self, submission_id: str, session: Session) -> None:
        self.id = submission_id
        self.session = session
        self.tasks: set[asyncio.Task[Any]] = set()
        self.cancelled = False
        self.progress_message = ""

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

    def cancel(self) -> None:
        self.cancelled = True
        for task in list(self.tasks):
            task.cancel()

    async def drain(self) -> None:
        """Wait until every task this submission started has ended."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


def stamp(event: Event, session_id: str, submission_id: str, seq: int) -> Event:
    return msgspec.structs.replace(event, session_id=session_id, submission_id=submission_id, seq=seq)
