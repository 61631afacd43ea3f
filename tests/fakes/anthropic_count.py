"""`POST /v1/messages/count_tokens` of the fake Messages API (anthropic_server.py).

The real endpoint (https://docs.anthropic.com/en/api/messages-count-tokens) takes the
prompt half of a Messages request: `model` and `messages` (required), `system`, `tools`,
`tool_choice`, `thinking`, `output_config`, `output_format`, `speed`, `cache_control`,
`mcp_servers`, `context_management` (the SDK's `messages.count_tokens` parameters). It validates the
messages and tools as `/v1/messages` does (a `tool_use` without its `tool_result`, empty
text, bad tool names are the same 400), and refuses the output half with pydantic's
"Extra inputs are not permitted": `max_tokens`, `stream`, `temperature`, `top_p`,
`top_k`, `stop_sequences`, `metadata`, `service_tier`. It answers `{"input_tokens": N}`.

The fake's N is deterministic, so a test can recompute it: a quarter of the characters of
the canonical JSON of system, tools and messages (cache_control left out), plus 3.
"""

from __future__ import annotations

import json
from typing import Any

from anthropic_rules import MAX_CACHE_BREAKPOINTS, _check_messages, _check_tools, _count_cache_control

ALLOWED = frozenset(
    "model messages system tools tool_choice thinking output_config output_format speed cache_control "
    "mcp_servers context_management".split()
)


def check_count_request(body: Any) -> str | None:
    """None when the real count_tokens endpoint would accept `body`, else its 400 message."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    for key in ("model", "messages"):
        if key not in body:
            return f"{key}: Field required"
    for key in body:
        if key not in ALLOWED:
            return f"{key}: Extra inputs are not permitted"
    if not isinstance(body["model"], str) or not body["model"]:
        return "model: Input should be a valid string"
    if not isinstance(body["messages"], list):
        return "messages: Input should be a valid list"
    problem = _check_messages(body["messages"]) or _check_tools(body.get("tools"), body.get("tool_choice"))
    if problem is not None:
        return problem
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if isinstance(block, dict) and block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"system.{i}.text: text content blocks must be non-empty"
    breakpoints = sum(_count_cache_control(body.get(k)) for k in ("system", "tools", "messages"))
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        return f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
    return None


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def count_tokens(body: dict[str, Any]) -> int:
    """The fake's token count of an accepted request (see the module docstring)."""
    prompt = {k: _without_cache_control(body.get(k)) for k in ("system", "tools", "messages")}
    return len(json.dumps(prompt, sort_keys=True, ensure_ascii=False)) // 4 + 3
