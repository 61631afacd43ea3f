"""The SSE and JSON bodies of the fake Anthropic Messages API (see anthropic_server.py).

`build_events(spec)` gives the exact event sequence the real API streams for a
RESPONSE spec; `build_message(spec)` the non-streaming body; `reply`, `status_error`,
`drop` and `hang` build specs.
"""

from __future__ import annotations

import json
import time
from typing import Any

from anthropic_server_tools import search_blocks, search_specs

__all__ = [
    "ERROR_TYPES",
    "EXHAUSTED_TEXT",
    "REASONS",
    "build_events",
    "build_message",
    "drop",
    "hang",
    "reply",
    "status_error",
]

EXHAUSTED_TEXT = "(fake server: script exhausted)"
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def reply(text: str | list[str] = "", **extra: Any) -> dict[str, Any]:
    """A normal response; `extra` takes the other RESPONSE keys (toolCalls=..., usage=...)."""
    return {"text": text, **extra}


def status_error(status: int, retry_after: float | str | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"status": status, **extra}
    if retry_after is not None:
        spec["retryAfter"] = retry_after
    return spec


def drop(after_events: int = 3, **extra: Any) -> dict[str, Any]:
    return {"text": "partial answer that never ends", "fault": "drop", "afterEvents": after_events, **extra}


def hang(after_events: int = 3, **extra: Any) -> dict[str, Any]:
    return {
        "text": "Hello there, this stream will hang",
        "fault": "hang",
        "afterEvents": after_events,
        **extra,
    }


def _pieces(value: str | list[str], parts: int = 3) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if not value:
        return []
    size = max(1, -(-len(value) // parts))
    return [value[i : i + size] for i in range(0, len(value), size)]


def _usage(spec: dict[str, Any]) -> dict[str, int]:
    usage = {
        "input_tokens": 25,
        "output_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    usage.update(spec.get("usage") or {})
    return usage


def build_events(spec: dict[str, Any], model: str = "claude-sonnet-4-5") -> list[tuple[str, dict[str, Any]]]:
    """The SSE events, in order, that the real API sends for RESPONSE `spec`."""
    usage = _usage(spec)
    start_usage = dict(usage, output_tokens=1)
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake_" + str(int(time.monotonic() * 1e6)),
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": spec.get("model", model),
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if spec.get("thinking"):
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(spec["thinking"])]
        deltas.append({"type": "signature_delta", "signature": spec.get("signature", "sig-fake")})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if spec.get("redactedThinking"):
        block({"type": "redacted_thinking", "data": spec["redactedThinking"]}, [])
    for n, search in enumerate(search_specs(spec)):  # the server tool's call and result, as streamed
        use, result = search_blocks(search, n)
        query = json.dumps(use["input"])
        block({**use, "input": {}}, [{"type": "input_json_delta", "partial_json": p} for p in _pieces(query)])
        block(result, [])
    if spec.get("text"):
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(spec["text"])])
    calls = spec.get("toolCalls") or []
    for n, call in enumerate(calls):
        raw = call.get("rawJson", json.dumps(call.get("input", {})))
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw)]
        block(
            {"type": "tool_use", "id": call.get("id", f"toolu_fake_{n}"), "name": call["name"], "input": {}},
            deltas,
        )
    stop_reason = spec.get("stopReason") or ("tool_use" if calls else "end_turn")
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def build_message(spec: dict[str, Any], model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    """The non-streaming JSON body for RESPONSE `spec`."""
    content: list[dict[str, Any]] = []
    if spec.get("thinking"):
        thinking = spec["thinking"] if isinstance(spec["thinking"], str) else "".join(spec["thinking"])
        content.append({"type": "thinking", "thinking": thinking, "signature": spec.get("signature", "sig-fake")})
    for n, search in enumerate(search_specs(spec)):
        content.extend(search_blocks(search, n))
    if spec.get("text"):
        text = spec["text"] if isinstance(spec["text"], str) else "".join(spec["text"])
        content.append({"type": "text", "text": text})
    calls = spec.get("toolCalls") or []
    for n, call in enumerate(calls):
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id", f"toolu_fake_{n}"),
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": spec.get("model", model),
        "content": content,
        "stop_reason": spec.get("stopReason") or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": _usage(spec),
    }
