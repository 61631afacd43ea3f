"""Helpers for the agent end-to-end tests: scripted replies and reading what the model was sent."""

from __future__ import annotations

from typing import Any

from anthropic_server import FakeAnthropicServer, RecordedRequest, reply

APP = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def api_env(server: FakeAnthropicServer) -> dict[str, str]:
    """The server's environment: the provider talks to the fake endpoint."""
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}


def tool_call(name: str, input: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "input": input}


def calls(*tool_calls: dict[str, Any], text: str = "") -> dict[str, Any]:
    """A reply whose turn ends with tool calls."""
    return reply(text, toolCalls=list(tool_calls))


def blocks(request: RecordedRequest) -> list[dict[str, Any]]:
    """Every content block of every message of a recorded request."""
    out: list[dict[str, Any]] = []
    for message in request.body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append({"type": "text", "text": content})
        else:
            out.extend(content)
    return out


def tool_results(request: RecordedRequest) -> dict[str, dict[str, Any]]:
    """tool_use_id -> the tool_result block, in the request's messages."""
    return {b["tool_use_id"]: b for b in blocks(request) if b.get("type") == "tool_result"}


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content)
    return str(content)


def all_text(request: RecordedRequest) -> str:
    """The text of the user-side content of a request (text blocks and tool results)."""
    parts = []
    for b in blocks(request):
        if b.get("type") == "text":
            parts.append(b["text"])
        elif b.get("type") == "tool_result":
            parts.append(result_text(b))
    return "\n".join(parts)


def last_user_text(request: RecordedRequest) -> str:
    message = request.body["messages"][-1]
    assert message["role"] == "user"
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") if b.get("type") == "text" else result_text(b) for b in content)


def requests(server: FakeAnthropicServer) -> list[RecordedRequest]:
    return server.message_requests


def progress_messages(session: Any) -> list[str]:
    """Every begin/report/end message on every progress token the client saw."""
    out: list[str] = []
    for reports in session.client.progress_reports.values():
        for r in reports:
            message = getattr(r, "message", None)
            if message:
                out.append(message)
    return out


def progress_ends(session: Any) -> list[str]:
    out: list[str] = []
    for reports in session.client.progress_reports.values():
        for r in reports:
            if getattr(r, "kind", None) == "end":
                out.append(getattr(r, "message", "") or "")
    return out
