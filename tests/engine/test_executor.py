"""The executor on a null host with a controllable agent: milliseconds, no LSP, no model."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from coder_ls.engine.agent_api import TurnContext
from coder_ls.engine.executor import Engine
from coder_ls.engine.host import NullHost
from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.events import Event, Queued, TurnFinished
from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.protocol.ops import Interrupt, Submission, UserInput

pytestmark = pytest.mark.timeout(30)


class GateAgent:
    """An agent whose turns wait for `release` (or a cancel); it can write, fail, or
    take its time cleaning up after a cancel."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started: list[str] = []
        self.a_turn_started = asyncio.Event()
        self.cleaned: list[str] = []
        self.write: Path | None = None
        self.fail_with: Exception | None = None
        self.slow_cleanup = 0.0

    async def run_turn(self, ctx: TurnContext, action: RunAgent) -> None:
        self.started.append(action.prompt)
        self.a_turn_started.set()
        if self.write is not None:
            self.write.write_text(f"written by {action.prompt}\n")
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            await asyncio.sleep(self.slow_cleanup)  # a cleanup that takes time
            self.cleaned.append(action.prompt)
            raise
        if self.fail_with is not None:
            raise self.fail_with
        ctx.session.record_message(Message(role="user", content=[TextBlock(text=action.prompt)]), ctx.submission_id)
        ctx.result.reply = f"did {action.prompt}"

    async def compact(self, ctx: TurnContext, instructions: str) -> None:
        ctx.result.reply = "compacted"


def git_repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], check=True
    )
    return path


@pytest.fixture
async def setup(tmp_path: Path):
    host = NullHost()
    agent = GateAgent()
    engine = Engine(git_repo(tmp_path / "ws"), host, {"HOME": str(tmp_path)}, agent=agent)
    yield engine, host, agent
    agent.release.set()
    await engine.shutdown()


def submit(engine: Engine, text: str, sid: str | None, n: list[int] = [0]) -> asyncio.Task:  # noqa: B006
    n[0] += 1
    op = UserInput(text=text)
    return asyncio.ensure_future(engine.submit(Submission(id=f"sub{n[0]}-{text[:8]}", session_id=sid, op=op)))


def events_of(host: NullHost, submission_id: str) -> list[Event]:
    return [e for e in host.events if e.submission_id == submission_id]


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def until_started(agent: GateAgent) -> None:
    await asyncio.wait_for(agent.a_turn_started.wait(), 10)


async def test_queue_order_positions_and_immediate_commands(setup):
    engine, host, agent = setup
    sid = (await engine.submit(Submission(id="first", session_id=None, op=UserInput(text="/help")))).session_id
    one = submit(engine, "one", sid)
    await until_started(agent)
    two, three = submit(engine, "two", sid), submit(engine, "!echo three", sid)
    await settle()
    queued = [e for e in host.events if isinstance(e, Queued)]
    assert [e.position for e in queued] == [1, 2]
    assert agent.started == ["one"]
    sessions = await asyncio.wait_for(engine.submit(Submission(id="s", session_id=sid, op=UserInput("/sessions"))), 5)
    assert sessions.status == "completed" and not one.done()
    agent.release.set()
    results = await asyncio.gather(one, two, three)
    assert [r.status for r in results] == ["completed"] * 3
    assert agent.started == ["one", "two"]
    assert results[2].raw_output == "three\n"
    for r in results:
        assert isinstance(events_of(host, r.submission_id)[-1], TurnFinished)


async def test_interrupt_cancels_running_and_queued_and_queued_never_run(setup):
    engine, host, agent = setup
    one = submit(engine, "one", None)
    await until_started(agent)
    sid = engine.sessions.current_id
    two, three = submit(engine, "two", sid), submit(engine, "/clear", sid)
    await settle()
    answer = await engine.submit(Submission(id="stop", session_id=sid, op=Interrupt()))
    assert len(answer.data.cancelled_submissions) == 3  # type: ignore[union-attr]
    results = await asyncio.gather(one, two, three)
    assert [r.status for r in results] == ["cancelled"] * 3
    assert agent.started == ["one"]
    for r in results[1:]:
        assert [type(e) for e in events_of(host, r.submission_id)] == [Queued, TurnFinished]
    # a stale cancel does nothing to a newer submission
    assert engine.interrupt_submission(results[0].submission_id) is False
    agent.release.set()
    assert (await submit(engine, "four", sid)).status == "completed"


async def test_a_second_cancel_does_not_cut_the_cleanup_short(setup):
    engine, _, agent = setup
    agent.slow_cleanup = 0.2
    one = submit(engine, "one", None)
    await until_started(agent)
    sub_id = next(iter(engine.sessions.loaded(None).active))
    assert engine.interrupt_submission(sub_id)
    await asyncio.sleep(0.05)
    engine.interrupt(None)  # again, during the cleanup
    result = await one
    assert result.status == "cancelled"
    assert agent.cleaned == ["one"]


async def test_a_failing_turn_still_finishes_its_checkpoint(setup):
    engine, host, agent = setup
    agent.write = engine.root / "a.txt"
    agent.fail_with = RuntimeError("boom")
    agent.release.set()
    result = await submit(engine, "break", None)
    assert (result.status, result.error.code) == ("failed", "internal_error")  # type: ignore[union-attr]
    last = events_of(host, result.submission_id)[-1]
    assert isinstance(last, TurnFinished) and last.status == "failed"
    assert ("end: Failed: internal error: RuntimeError: boom") in [m for _, m in host.progress]
    undo = await submit(engine, "/undo", result.session_id)
    assert undo.status == "completed" and undo.data.submission_id == result.submission_id  # type: ignore[union-attr]
    assert (engine.root / "a.txt").read_text() == "a\n"


async def test_unknown_session_is_a_result(setup):
    engine, _, _ = setup
    for bad in ["deadbeef" * 4, "../x", ""]:
        result = await submit(engine, "!true", bad or "nope nope")
        assert (result.mode, result.error.code) == ("error", "unknown_session")  # type: ignore[union-attr]


async def test_idle_sessions_beyond_the_bound_are_evicted_and_reload(setup):
    engine, _, agent = setup
    agent.release.set()
    engine.sessions.max_idle = 2
    ids = []
    for n in range(5):
        result = await submit(engine, f"turn {n}", None)
        ids.append(result.session_id)
        await submit(engine, "/new", None)
    await settle()
    assert engine.sessions.loaded_count() <= 3 + 1  # the idle bound, the current one, one being added
    again = await submit(engine, "again", ids[0])
    assert again.status == "completed"
    assert [m.text() for m in engine.sessions.loaded(ids[0]).context] == ["turn 0", "again"]
