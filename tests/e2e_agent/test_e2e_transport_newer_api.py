"""A newer API must not break every turn (contract section 21), end to end: a real
`coder-ls` against a loopback endpoint that sends exact bytes (raw_endpoint.py).

- An event type we do not know, whose fields reuse a known name with another shape
  (`"message": "<string>"`), is passed over; so is a delta type we do not know.
- A block type we do not know, with `"id": null` and `"data": {...}`, is kept whole and
  sent back as it came in the next request (the SDK keeps it as an opaque block).
- `signature_delta` replaces the block's signature (the API rejects a wrong one).
- Invalid UTF-8 in an event is a malformed event: retried, like any other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import lsp_session
from raw_endpoint import RawEndpoint, http_head, sse_bytes

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def env_for(url: str) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": url, "CODER_WARMUP": "0"}


def start() -> tuple[str, dict[str, Any]]:
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-5-5",
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1},
    }  # fmt: skip
    return "message_start", {"type": "message_start", "message": message}


def end(reason: str = "end_turn") -> list[tuple[str, Any]]:
    delta = {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
             "usage": {"output_tokens": 5}}  # fmt: skip
    return [("message_delta", delta), ("message_stop", {"type": "message_stop"})]


def block(index: int, content: dict[str, Any], *deltas: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": content})
    ]
    out += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def text(index: int, value: str) -> list[tuple[str, Any]]:
    return block(index, {"type": "text", "text": ""}, {"type": "text_delta", "text": value})


def stream(events: list[tuple[str, Any]] | bytes) -> bytes:
    body = events if isinstance(events, bytes) else sse_bytes(events)
    return http_head(200, {"content-type": "text/event-stream", "content-length": str(len(body))}) + body


async def test_unknown_events_deltas_and_blocks_are_passed_over_and_kept(ws: Path) -> None:
    future_block = {"type": "future_widget", "id": None, "data": {"nested": [1, 2]}, "note": "opaque"}
    first = [
        start(),
        ("future_event", {"type": "future_event", "message": "a string where an object was", "index": "x"}),
        *block(0, future_block, {"type": "future_delta", "text": {"not": "a string"}}),
        *text(1, "Still answered."),
        *end(),
    ]
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", stream(first), stream([start(), *text(0, "Second."), *end()]))
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            assert "Still answered." in result["reply"]
            assert len(endpoint.requests_to("/v1/messages")) == 1  # not a failed attempt
            again = await s.execute("coder.input", {"text": "and again"})
            assert again["status"] == "completed", again
        sent = endpoint.requests_to("/v1/messages")[1].json()["messages"]
        assistant = sent[1]
        assert assistant["role"] == "assistant"
        assert future_block in assistant["content"], assistant  # kept whole, sent back as it came
        assert {"type": "text", "text": "Still answered."} in assistant["content"]


async def test_signature_delta_replaces_the_signature(ws: Path) -> None:
    thinking = block(
        0,
        {"type": "thinking", "thinking": "", "signature": "SIGA"},
        {"type": "thinking_delta", "thinking": "Let me read it."},
        {"type": "signature_delta", "signature": "SIGA"},
    )
    call = block(
        1,
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
        {"type": "input_json_delta", "partial_json": json.dumps({"path": "app.py"})},
    )
    with RawEndpoint() as endpoint:
        endpoint.route(
            "POST", "/v1/messages",
            stream([start(), *thinking, *call, *end("tool_use")]),
            stream([start(), *text(0, "Read it."), *end()]),
        )  # fmt: skip
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "read app.py"})
            assert result["status"] == "completed", result
        second = endpoint.requests_to("/v1/messages")[1].json()["messages"]
        (signed,) = [b for m in second for b in m["content"] if b.get("type") == "thinking"]
        assert signed["signature"] == "SIGA", signed


async def test_invalid_utf8_in_an_event_is_retried(ws: Path) -> None:
    broken = sse_bytes([start()]) + (
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":"bad \xff\xfe bytes"}}\n\n'
    )
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", stream(broken), stream([start(), *text(0, "Clean now."), *end()]))
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            assert "Clean now." in result["reply"]
        assert len(endpoint.requests_to("/v1/messages")) == 2
