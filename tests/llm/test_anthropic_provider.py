"""The real Anthropic SDK, through AnthropicProvider, against the fake Messages API."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from anthropic_server import FakeAnthropicServer, drop, hang, reply, status_error

from coder_ls.llm.anthropic_provider import AnthropicProvider
from coder_ls.llm.base import (
    ProviderError,
    ProviderRequest,
    Restart,
    Retrying,
    Stop,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCallDelta,
    ToolCallDone,
    ToolSpec,
    Usage,
)
from coder_ls.protocol.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

PROMPT = 0.15  # "at once": typically a few ms; headroom for a loaded CI machine

TOOLS = [
    ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {"type": "string"}}}),
]


def make_request(**overrides: Any) -> ProviderRequest:
    fields: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "system": "You are a coding agent.",
        "messages": [Message("user", [TextBlock("hi")])],
        "tools": TOOLS,
        "max_tokens": 4096,
        "thinking": "off",
    }
    fields.update(overrides)
    return ProviderRequest(**fields)


def make_provider(server: FakeAnthropicServer, **kwargs: Any) -> AnthropicProvider:
    kwargs.setdefault("base_delay", 0.05)
    kwargs.setdefault("max_delay", 0.2)
    return AnthropicProvider(api_key="sk-test", base_url=server.url, **kwargs)


async def collect(provider: AnthropicProvider, request: ProviderRequest | None = None) -> list[StreamItem]:
    items: list[StreamItem] = []
    try:
        async for item in provider.stream(request or make_request()):
            items.append(item)
    finally:
        await provider.aclose()
    return items


def text_of(items: list[StreamItem]) -> str:
    return "".join(i.text for i in items if isinstance(i, TextDelta))


async def test_text_streaming(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(reply(["Hello", ", ", "world"]))
    items = await collect(make_provider(fake_anthropic))
    assert [i for i in items if isinstance(i, TextDelta)] == [
        TextDelta("Hello"),
        TextDelta(", "),
        TextDelta("world"),
    ]
    assert isinstance(items[-2], Usage)
    assert items[-1] == Stop(reason="end_turn")
    body = fake_anthropic.message_requests[0].body
    assert body["stream"] is True
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 4096
    assert "thinking" not in body


async def test_tool_call_assembled_from_input_json_delta(fake_anthropic: FakeAnthropicServer) -> None:
    calls = [
        {"id": "toolu_01", "name": "read", "input": {"path": "src/app.py", "lines": [1, 20]}},
        {"id": "toolu_02", "name": "bash", "input": {"command": "pytest -q"}},
    ]
    fake_anthropic.push(reply("Let me look.", toolCalls=calls))
    items = await collect(make_provider(fake_anthropic))
    done = [i for i in items if isinstance(i, ToolCallDone)]
    assert done == [
        ToolCallDone("toolu_01", "read", {"path": "src/app.py", "lines": [1, 20]}),
        ToolCallDone("toolu_02", "bash", {"command": "pytest -q"}),
    ]
    deltas = [i for i in items if isinstance(i, ToolCallDelta) and i.id == "toolu_01"]
    assert len(deltas) > 1
    assert "".join(d.partial_json for d in deltas) == '{"path": "src/app.py", "lines": [1, 20]}'
    assert text_of(items) == "Let me look."
    assert items[-1] == Stop(reason="tool_use")


async def test_invalid_tool_json_is_reported(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(
        reply("", toolCalls=[{"id": "t", "name": "read", "rawJson": '{"path": "a'}], stopReason="max_tokens")
    )
    items = await collect(make_provider(fake_anthropic))
    (done,) = [i for i in items if isinstance(i, ToolCallDone)]
    assert done.input == {} and done.parse_error
    assert items[-1] == Stop(reason="max_tokens")


async def test_thinking_streamed_with_signature(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(reply("Answer.", thinking=["Let me ", "think."], signature="sig-123"))
    items = await collect(make_provider(fake_anthropic), make_request(thinking_budget=2000, thinking="enabled"))
    assert [i.text for i in items if isinstance(i, ThinkingDelta)] == ["Let me ", "think."]
    assert ThinkingDone(thinking="Let me think.", signature="sig-123") in items
    # thinking comes before the text, as the API streams it
    kinds = [type(i).__name__ for i in items]
    assert kinds.index("ThinkingDone") < kinds.index("TextDelta")
    body = fake_anthropic.message_requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert body["max_tokens"] > 2000


async def test_thinking_budget_raises_max_tokens(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(reply("ok"))
    request = make_request(thinking_budget=8000, max_tokens=1000, thinking="enabled")
    await collect(make_provider(fake_anthropic), request)
    body = fake_anthropic.message_requests[0].body
    assert body["thinking"]["budget_tokens"] == 8000
    assert body["max_tokens"] > 8000


async def test_redacted_thinking_round_trip(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(reply("ok", redactedThinking="opaque-data"), reply("again"))
    provider = make_provider(fake_anthropic)
    items = await collect(provider)
    (done,) = [i for i in items if isinstance(i, ThinkingDone)]
    assert done == ThinkingDone(thinking="", signature="redacted:opaque-data")
    history = [
        Message("user", [TextBlock("hi")]),
        Message("assistant", [ThinkingBlock(done.thinking, done.signature), TextBlock("ok")]),
        Message("user", [TextBlock("more")]),
    ]
    await collect(provider, make_request(messages=history))
    sent = fake_anthropic.message_requests[1].body["messages"][1]["content"][0]
    assert sent == {"type": "redacted_thinking", "data": "opaque-data"}


async def test_usage_with_cache_tokens(fake_anthropic: FakeAnthropicServer) -> None:
    usage = {
        "input_tokens": 12,
        "output_tokens": 34,
        "cache_read_input_tokens": 5000,
        "cache_creation_input_tokens": 700,
    }
    fake_anthropic.push(reply("ok", usage=usage))
    items = await collect(make_provider(fake_anthropic))
    (got,) = [i for i in items if isinstance(i, Usage)]
    assert got == Usage(input_tokens=12, output_tokens=34, cache_read_tokens=5000, cache_write_tokens=700)
    assert got.context_tokens == 5712


def count_cache_controls(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if "cache_control" in value else 0
        return own + sum(count_cache_controls(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_cache_controls(v) for v in value)
    return 0


async def test_cache_breakpoints_and_history_conversion(fake_anthropic: FakeAnthropicServer) -> None:
    history = [
        Message("user", [TextBlock("fix the bug")]),
        Message(
            "assistant",
            [
                ThinkingBlock("I should read it.", "sig-abc"),
                ThinkingBlock("unsigned: dropped", ""),
                TextBlock("Reading."),
                ToolUseBlock("toolu_1", "read", {"path": "a.py"}),
                ToolUseBlock("toolu_2", "bash", {"command": "false"}),
            ],
        ),
        Message(
            "user",
            [ToolResultBlock("toolu_1", "print(1)"), ToolResultBlock("toolu_2", "boom", is_error=True)],
        ),
    ]
    fake_anthropic.push(reply("done"))
    request = make_request(messages=history, thinking_budget=1024, thinking="enabled")
    await collect(make_provider(fake_anthropic), request)
    body = fake_anthropic.message_requests[0].body
    ephemeral = {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == ephemeral
    assert "cache_control" not in body["tools"][0]
    assert body["system"] == [{"type": "text", "text": "You are a coding agent.", "cache_control": ephemeral}]
    last = body["messages"][-1]["content"]
    assert last[-1]["cache_control"] == ephemeral
    assert "cache_control" not in last[0]
    assert count_cache_controls(body) == 3  # at most 4 allowed
    assistant = body["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "I should read it.", "signature": "sig-abc"}
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use", "tool_use"]
    assert assistant[2] == {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}}
    assert last[1]["is_error"] is True and last[0]["tool_use_id"] == "toolu_1"


async def test_429_retry_after_honoured(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(status_error(429, retry_after=0.3), reply("after the wait"))
    provider = make_provider(fake_anthropic, base_delay=5.0)  # backoff would be far longer
    items = await collect(provider)
    retrying = [i for i in items if isinstance(i, Retrying)]
    assert len(retrying) == 1
    assert retrying[0].attempt == 1 and retrying[0].delay_seconds == pytest.approx(0.3)
    assert "429" in retrying[0].reason
    assert not [i for i in items if isinstance(i, Restart)]  # nothing had been streamed
    first, second = fake_anthropic.message_requests
    assert 0.28 <= second.time - first.time < 0.9
    assert text_of(items) == "after the wait"
    assert items[-1] == Stop(reason="end_turn")


async def test_retry_after_ms_header(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(status_error(429, retryAfterMs=150), reply("ok"))
    items = await collect(make_provider(fake_anthropic, base_delay=5.0))
    (retrying,) = [i for i in items if isinstance(i, Retrying)]
    assert retrying.delay_seconds == pytest.approx(0.15)


@pytest.mark.parametrize("status", [529, 500, 503])
async def test_overloaded_and_server_errors_retried(fake_anthropic: FakeAnthropicServer, status: int) -> None:
    fake_anthropic.push(status_error(status), reply("recovered"))
    items = await collect(make_provider(fake_anthropic))
    (retrying,) = [i for i in items if isinstance(i, Retrying)]
    assert str(status) in retrying.reason
    assert 0 < retrying.delay_seconds <= 0.05
    assert text_of(items) == "recovered"
    assert len(fake_anthropic.message_requests) == 2


async def test_gives_up_after_max_attempts(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(*[status_error(529) for _ in range(6)])
    items: list[StreamItem] = []
    with pytest.raises(ProviderError) as info:
        async for item in make_provider(fake_anthropic, max_attempts=3).stream(make_request()):
            items.append(item)
    assert info.value.kind == "overloaded" and info.value.retryable
    assert "3 attempts" in info.value.message
    assert len(fake_anthropic.message_requests) == 3
    assert [i.attempt for i in items if isinstance(i, Retrying)] == [1, 2]


async def test_401_is_auth_error_without_retry(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(status_error(401, message="invalid x-api-key"), reply("never"))
    items: list[StreamItem] = []
    with pytest.raises(ProviderError) as info:
        async for item in make_provider(fake_anthropic).stream(make_request()):
            items.append(item)
    assert info.value.kind == "auth" and not info.value.retryable
    assert "ANTHROPIC_API_KEY" in info.value.message and "invalid x-api-key" in info.value.message
    assert info.value.status == 401
    assert items == []
    assert len(fake_anthropic.message_requests) == 1


async def test_400_is_bad_request(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(status_error(400, message="messages: roles must alternate"))
    with pytest.raises(ProviderError) as info:
        await collect(make_provider(fake_anthropic))
    assert info.value.kind == "bad_request" and "roles must alternate" in info.value.message
    assert len(fake_anthropic.message_requests) == 1


async def test_dropped_connection_mid_stream_is_retried(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(drop(after_events=4), reply("complete answer"))
    items = await collect(make_provider(fake_anthropic))
    (retrying,) = [i for i in items if isinstance(i, Retrying)]
    (restart,) = [i for i in items if isinstance(i, Restart)]  # partial text had been streamed
    assert items.index(restart) < items.index(retrying)
    assert text_of(items[: items.index(restart)]) != ""
    after = items[items.index(retrying) + 1 :]
    assert text_of(after) == "complete answer"
    # the fake notes "completed" once its last write drained, which may come after the
    # client already read the whole answer (a loaded machine showed it): give it a moment
    for _ in range(200):
        if len(fake_anthropic.outcomes) >= 2:
            break
        await asyncio.sleep(0.01)
    assert fake_anthropic.outcomes == ["dropped", "completed"]


async def test_error_event_mid_stream_is_retried(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(
        reply("partial", fault="error_event", afterEvents=4, errorType="overloaded_error"), reply("ok")
    )
    items = await collect(make_provider(fake_anthropic))
    (retrying,) = [i for i in items if isinstance(i, Retrying)]
    assert "overloaded" in retrying.reason
    assert text_of(items[items.index(retrying) :]) == "ok"


async def test_connection_refused_is_connection_error() -> None:
    with FakeAnthropicServer() as server:
        url = server.url
    provider = AnthropicProvider(api_key="k", base_url=url, max_attempts=2, base_delay=0.01)
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.kind == "connection" and info.value.retryable


async def test_cancel_mid_stream_closes_connection(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(hang(after_events=5))
    provider = make_provider(fake_anthropic)
    got_text = asyncio.Event()

    async def consume() -> None:
        async for item in provider.stream(make_request()):
            if isinstance(item, TextDelta):
                got_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 10)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - cancelled_at < PROMPT
    assert await asyncio.to_thread(fake_anthropic.wait_for_disconnect, 2.0)
    assert fake_anthropic.disconnects[-1] - cancelled_at < PROMPT
    assert fake_anthropic.outcomes == ["disconnected"]
    await provider.aclose()


async def test_cancel_while_waiting_for_headers_closes_connection(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.push({"fault": "hang_headers"})
    provider = make_provider(fake_anthropic)
    await provider.prepare()  # the SDK import is not part of what we time

    async def consume() -> None:
        async for _ in provider.stream(make_request()):
            pass

    task = asyncio.create_task(consume())
    for _ in range(200):
        if fake_anthropic.message_requests:
            break
        await asyncio.sleep(0.01)
    assert fake_anthropic.message_requests
    await asyncio.sleep(0.05)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - cancelled_at < PROMPT
    assert await asyncio.to_thread(fake_anthropic.wait_for_disconnect, 2.0)
    assert fake_anthropic.disconnects[-1] - cancelled_at < PROMPT
    await provider.aclose()


async def test_closing_the_iterator_closes_connection(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(hang(after_events=5))
    provider = make_provider(fake_anthropic)
    stream = provider.stream(make_request())
    async for item in stream:
        if isinstance(item, TextDelta):
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert await asyncio.to_thread(fake_anthropic.wait_for_disconnect, 1.0)
    await provider.aclose()


async def test_cancel_during_backoff_returns_at_once(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(status_error(429, retry_after=30), reply("never"))
    provider = make_provider(fake_anthropic)
    retrying = asyncio.Event()

    async def consume() -> None:
        async for item in provider.stream(make_request()):
            if isinstance(item, Retrying):
                retrying.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(retrying.wait(), 10)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - cancelled_at < PROMPT
    assert len(fake_anthropic.message_requests) == 1
    await provider.aclose()


async def test_slow_stream_still_completes(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.push(reply(["a", "b", "c"], delayMs=20))
    started = time.monotonic()
    items = await collect(make_provider(fake_anthropic))
    assert text_of(items) == "abc"
    assert time.monotonic() - started >= 0.18  # 9 events x 20 ms (the stream was really slow)


async def test_a_stream_event_that_is_not_json_is_a_retried_server_error(fake_anthropic: FakeAnthropicServer) -> None:
    """Our client decodes each event itself: one it cannot read is said, and retried."""
    fake_anthropic.push({**reply("lost"), "fault": "garbage_event", "afterEvents": 3}, reply("read at last"))
    items = await collect(make_provider(fake_anthropic))
    (retrying,) = [i for i in items if isinstance(i, Retrying)]
    assert "malformed stream event" in retrying.reason
    assert text_of(items[items.index(retrying) :]) == "read at last"
    fake_anthropic.push({**reply("lost"), "fault": "garbage_event", "afterEvents": 0})
    provider = AnthropicProvider(api_key="k", base_url=fake_anthropic.url, max_attempts=1)
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.kind == "server" and "malformed stream event" in info.value.message
