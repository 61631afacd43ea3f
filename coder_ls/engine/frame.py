"""The submission frame: one object per submission, from its arrival to its answer.

Whatever a submission does (an agent turn, a shell command, a slash command, compaction,
`/undo`, later skills and subagents), the frame alone owns what they all share:

- its place in the session's line (`queue.py`): a `queued {position}` event at once, and
  nothing of it starts before the submissions ahead of it have finished;
- its work-done progress: `begin` when it starts, `end` (`Done`, `Cancelled`,
  `Failed: ...`) when it is over;
- its checkpoint: a snapshot before the first task that may change files, finished after
  on every exit path (done, failed, cancelled, cancelled again), and the answer waits for it;
- its cancellation: an interrupt cancels the tasks it runs, never the frame itself, so
  the cleanup cannot be cut short;
- its last event, `turnFinished {status}`, for every kind of submission.

The work itself comes as small `Task` objects (`tasks.py`) that only do their job.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from coder_ls.engine.results import ResultBuilder
from coder_ls.engine.submission import SubmissionState
from coder_ls.protocol.events import ErrorEvent, Notice, Queued, TurnFinished
from coder_ls.protocol.results import CommandResult
from coder_ls.store.faults import StorageFault

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine
    from coder_ls.engine.session import Session

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class TaskContext:
    """What a task gets: the engine's services, its submission, the result it fills."""

    engine: Engine
    sub: SubmissionState
    result: ResultBuilder

    @property
    def session(self) -> Session:
        return self.sub.session


class Task(Protocol):
    """One piece of a submission's work. `title` is the progress message it starts with
    ("" for instant work: no progress); `needs_checkpoint` when it may change files."""

    @property
    def title(self) -> str: ...

    @property
    def needs_checkpoint(self) -> bool: ...

    async def run(self, ctx: TaskContext) -> None: ...


Planner = Callable[[TaskContext], Coroutine[Any, Any, list[Task]]]


async def until_done(aw: Awaitable[T]) -> T:
    """Await `aw` to its end even if we are cancelled meanwhile (then re-raise the cancel)."""
    task = asyncio.ensure_future(aw)
    interrupted = False
    while True:
        try:
            value = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():
                raise
            interrupted = True
    if interrupted:
        raise asyncio.CancelledError
    return value


class Frame:
    def __init__(self, engine: Engine, sub: SubmissionState, result: ResultBuilder, plan: Planner) -> None:
        self.engine, self.sub, self.result, self.plan = engine, sub, result, plan
        self.ctx = TaskContext(engine, sub, result)
        self.cancelled = False  # a cancel reached the work (not only the cleanup)
        self.progress_began = False

    async def run(self) -> CommandResult:
        sub, session = self.sub, self.sub.session
        try:
            if sub.queued:
                position = session.queue.enter(sub)
                if position:
                    sub.emit(Queued(position=position))
                await sub.admitted
            if sub.cancelled:
                self.cancelled = True  # cancelled in the line: it never runs
            else:
                await self._run()
        finally:
            if sub.queued:
                session.queue.leave(sub)
            self._close()
        return self.result.build()

    async def _run(self) -> None:
        tasks = await self._step(self.plan(self.ctx))
        if not tasks:
            return
        title = next((t.title for t in tasks if t.title), "")
        if title:
            await self.engine.host.begin_progress(self.sub.id, "coder", title)
            self.progress_began = True
        before: str | None = None
        if any(t.needs_checkpoint for t in tasks) and not self.sub.cancelled:
            before = await until_done(self._snapshot())
        try:
            if self.sub.cancelled:
                self.cancelled = True
            else:
                await self._step(self._run_tasks(tasks))
        finally:
            if before is not None:
                await until_done(self._finish(before))

    async def _run_tasks(self, tasks: list[Task]) -> None:
        for n, task in enumerate(tasks):
            if n and task.title:
                self.sub.report(task.title)
            await task.run(self.ctx)
            if self.result.status == "failed":
                return

    async def _step(self, coro: Coroutine[Any, Any, T]) -> T | None:
        """Run `coro` as the submission's cancellable work; wait for all it started."""
        work = self.sub.spawn(coro)
        await until_done(asyncio.wait({work}))
        await until_done(self.sub.drain())
        if work.cancelled() or self.sub.cancelled:
            self.cancelled = True
            return None
        failure = work.exception()
        if isinstance(failure, StorageFault):  # a full disk, a file-size limit: its own code, what was kept
            log.warning("submission %s: %s", self.sub.id, failure)
            self.result.fail(failure.code, failure.message, mode=self.result.mode)
            self.sub.emit(ErrorEvent(message=failure.message))
            return None
        if failure is not None:
            log.error("submission %s failed", self.sub.id, exc_info=failure)
            message = f"internal error: {type(failure).__name__}: {failure}"
            self.result.fail("internal_error", message, mode=self.result.mode)
            self.sub.emit(ErrorEvent(message=message))
            return None
        return work.result()

    async def _snapshot(self) -> str | None:
        try:
            return await self.engine.checkpoints.snapshot(self.sub.id, self.sub.session.id)
        except Exception as exc:  # a broken snapshot must not stop the user's command
            log.warning("checkpoint snapshot failed: %s", exc)
            self.sub.emit(Notice(message=f"/undo will not cover this submission: snapshot failed ({exc})"))
            return None

    async def _finish(self, before: str) -> None:
        try:
            await self.engine.checkpoints.finish(self.sub.id, before)
        except Exception as exc:
            log.warning("checkpoint finish failed: %s", exc)
            self.sub.emit(Notice(message=f"/undo will not cover this submission: checkpoint failed ({exc})"))

    def _close(self) -> None:
        """Status, progress end, `turnFinished` (the last event), and the session forgets it."""
        sub, b = self.sub, self.result
        fault = sub.session.flush_index()
        if fault is not None and b.status != "failed":
            b.fail(fault.code, fault.message, mode=b.mode)
            sub.emit(ErrorEvent(message=fault.message))
        if self.cancelled:
            b.status = "cancelled"
        if self.progress_began:
            if b.status == "cancelled":
                message = "Cancelled"
            elif b.status == "failed":
                message = f"Failed: {b.error.message}" if b.error else "Failed"
            else:
                message = "Done"
            self.engine.host.end_progress(sub.id, message)
        finished = TurnFinished(status=b.status)
        target = self.engine.sessions.loaded(b.session_id) if b.session_id != sub.session.id else None
        if target is not None:
            target.emit(finished, sub.id)  # /new, /resume: where the client now looks
        else:
            sub.emit(finished)
        sub.session.active.pop(sub.id, None)
        sub.session.sync()
        sub.finished.set()
