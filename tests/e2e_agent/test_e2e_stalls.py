"""A model request that stalls, and retries while compacting, over LSP against the strict
fake: the progress says what is happening instead of "Thinking" for minutes, the wait is
bounded by the `requestTimeoutSeconds` setting, and the retry's reason says what failed."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_server import hang, reply, status_error


def progress_of(session: Any, token: str) -> list[str]:
    return [m for r in session.client.progress_reports.get(token, []) if (m := getattr(r, "message", None))]


pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_a_stalled_stream_is_reported_then_given_up_and_retried(agent) -> None:
    a = await agent(requestTimeoutSeconds=3)
    a.fake.push(hang(after_events=2), reply("Recovered."))
    result = await a.s.execute("coder.input", {"text": "hello"}, token="stall-1")
    assert result["status"] == "completed" and result["reply"] == "Recovered.", result
    messages = progress_of(a.s, "stall-1")
    waiting = [m for m in messages if m.startswith("Waiting for the model: no response for")]
    assert waiting and "given up after 3 s" in waiting[0], messages
    (retry,) = [m for m in messages if m.startswith("Retrying in")]
    # the reason says what happened, not "Connection to Anthropic failed (url): "
    assert "timed out" in retry and "no response" in retry, retry
    assert len(a.fake.message_requests) == 2


async def test_compact_reports_its_retries(agent) -> None:
    a = await agent()
    a.fake.push(reply("The answer is PELICAN."))
    assert (await a.turn("remember PELICAN"))["status"] == "completed"
    a.fake.push(status_error(529, retry_after=0.2), reply("- the keyword is PELICAN"))
    result = await a.s.execute("coder.input", {"text": "/compact"}, token="compact-1")
    assert result["status"] == "completed", result
    messages = progress_of(a.s, "compact-1")
    retries = [m for m in messages if m.startswith("Retrying in")]
    assert retries and "overloaded" in retries[0], messages
