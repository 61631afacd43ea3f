"""What the real Messages API rejects, checked by the fake before it answers.

`check_request(body)` returns None for a request the real API would accept, else the
message of the HTTP 400 `invalid_request_error` it would answer (same wording as the
real API where known, so a failing test reads like a production log). The rules
(https://docs.anthropic.com/en/api/messages, and the errors users report):

- `model`, `max_tokens` (int >= 1) and `messages` (non-empty list) are required.
- The first message has role `user`; roles are `user` or `assistant`. Consecutive
  messages of the same role are accepted: the API combines them into one turn, and the
  rules below apply to the combined turns.
- Every `tool_use` of an assistant turn is answered by a `tool_result` in the next
  (user) turn, and every `tool_result` answers a `tool_use` of the turn just before it.
- Text blocks (and string contents) must hold non-whitespace text; a message's content
  must not be empty.
- At most 4 blocks (system, tools and messages together) carry `cache_control`.
- Thinking: `budget_tokens` >= 1024 and < `max_tokens`; `temperature` (other than 1),
  `top_k` and forced tool use are incompatible with it; a replayed `thinking` block
  carries its `signature`; when thinking is on, an assistant turn whose tool calls are
  answered by the final user turn starts with a thinking block.
- Tool names match `^[a-zA-Z0-9_-]{1,64}$`, are unique, and `input_schema` is a JSON
  schema object with `type: "object"`.
- Images: type, size, dimensions and count (`anthropic_images.py`).
"""

from __future__ import annotations

import re
from typing import Any

from anthropic_images import check_images

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_CACHE_BREAKPOINTS = 4
MIN_THINKING_BUDGET = 1024


def _merged_turns(messages: list[dict[str, Any]]) -> list[tuple[str, list[Any], int]]:
    """(role, content blocks, index of the first raw message) for each combined turn."""
    turns: list[tuple[str, list[Any], int]] = []
    for i, message in enumerate(messages):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        if turns and turns[-1][0] == message.get("role"):
            turns[-1][1].extend(blocks)
        else:
            turns.append((str(message.get("role")), blocks, i))
    return turns


def _count_cache_control(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if value.get("cache_control") else 0
        return own + sum(_count_cache_control(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    return 0


def _check_required(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    if not isinstance(body["model"], str) or not body["model"]:
        return "model: Input should be a valid string"
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return "max_tokens: Input should be a valid integer greater than or equal to 1"
    if not isinstance(body["messages"], list):
        return "messages: Input should be a valid list"
    return None


def _check_messages(messages: list[Any]) -> str | None:
    if not messages:
        return "messages: at least one message is required"
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        if isinstance(content, str):
            if not content.strip():
                return f"messages.{i}: {message['role']} messages must have non-empty content"
            continue
        if not isinstance(content, list):
            return f"messages.{i}.content: Input should be a valid string or list"
        if not content:
            return f"messages.{i}: {message['role']} messages must have non-empty content"
        for j, block in enumerate(content):
            if not isinstance(block, dict) or "type" not in block:
                return f"messages.{i}.content.{j}: block must be an object with a type"
            if block["type"] == "text":
                text = block.get("text")
                if not isinstance(text, str) or text == "":
                    return f"messages.{i}.content.{j}.text: text content blocks must be non-empty"
                if not text.strip():
                    return f"messages.{i}.content.{j}.text: text content blocks must contain non-whitespace text"
            if block["type"] == "tool_use" and message["role"] != "assistant":
                return f"messages.{i}.content.{j}: tool_use blocks are only allowed in assistant messages"
            if block["type"] == "tool_result" and message["role"] != "user":
                return f"messages.{i}.content.{j}: tool_result blocks are only allowed in user messages"
            if block["type"] == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    for k, part in enumerate(inner):
                        if (
                            isinstance(part, dict)
                            and part.get("type") == "text"
                            and not str(part.get("text", "")).strip()
                        ):
                            return f"messages.{i}.content.{j}.content.{k}.text: text content blocks must be non-empty"
    if messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    return _check_tool_pairs(messages)


def _check_tool_pairs(messages: list[dict[str, Any]]) -> str | None:
    turns = _merged_turns(messages)
    for n, (role, blocks, first) in enumerate(turns):
        if role == "assistant":
            uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            if not uses:
                continue
            if len(set(uses)) != len(uses):
                return f"messages.{first}: `tool_use` ids must be unique"
            answered = set()
            if n + 1 < len(turns):
                answered = {b.get("tool_use_id") for b in turns[n + 1][1] if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                return (
                    f"messages.{first}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
        else:
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if not results:
                continue
            asked = set()
            if n > 0:
                asked = {b.get("id") for b in turns[n - 1][1] if b.get("type") == "tool_use"}
            stray = [r for r in results if r not in asked]
            if stray:
                return (
                    f"messages.{first}.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{', '.join(map(str, stray))}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
            if len(set(results)) != len(results):
                return f"messages.{first}: each `tool_use` id may be answered by only one `tool_result`"
    return None


def _check_tools(tools: Any, tool_choice: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{i}: Input should be a valid dictionary"
        if "type" in tool and tool["type"] not in ("custom",):
            continue  # server tools (web_search_..., bash_...) have their own shapes
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        if name in names:
            return "tools: Tool names must be unique."
        names.add(name)
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            return f"tools.{i}.custom.input_schema: Field required"
        if schema.get("type") != "object":
            return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
        if "properties" in schema and not isinstance(schema["properties"], dict):
            return f"tools.{i}.custom.input_schema.properties: Input should be a valid dictionary"
    if isinstance(tool_choice, dict) and tool_choice.get("type") == "tool" and tool_choice.get("name") not in names:
        return f"tool_choice.tool.name: no tool named {tool_choice.get('name')!r} in tools"
    return None


def _check_thinking(body: dict[str, Any]) -> str | None:
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
        return f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_THINKING_BUDGET}"
    if budget >= body["max_tokens"]:
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        return "`temperature` may only be set to 1 when thinking is enabled."
    if body.get("top_k") is not None:
        return "`top_k` is incompatible with thinking."
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    turns = _merged_turns(body["messages"])
    for role, blocks, first in turns:
        if role != "assistant":
            continue
        for j, block in enumerate(blocks):
            if block.get("type") == "thinking" and not block.get("signature"):
                return f"messages.{first}.content.{j}.thinking.signature: Field required"
            if block.get("type") == "redacted_thinking" and not block.get("data"):
                return f"messages.{first}.content.{j}.redacted_thinking.data: Field required"
    # The assistant turn that the final user turn answers with tool results must start
    # with its thinking block (the model continues that turn).
    if len(turns) >= 2 and turns[-1][0] == "user" and turns[-2][0] == "assistant":
        last_user, (_, blocks, first) = turns[-1], turns[-2]
        answers_tools = any(b.get("type") == "tool_result" for b in last_user[1])
        if answers_tools and blocks and blocks[0].get("type") not in ("thinking", "redacted_thinking"):
            return (
                f"messages.{first}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must "
                "start with a thinking block."
            )
    return None


# What a raw test request sends so that the strict fake reads its body at all.
API_HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "test-key", "content-type": "application/json"}


def check_headers(headers: dict[str, str]) -> tuple[int, str, str] | None:
    """What the real API answers a request without its version or its credential (names
    lower-cased): (status, error type, message), or None."""
    if not headers.get("anthropic-version"):
        return 400, "invalid_request_error", "anthropic-version: header is required"
    bearer = headers.get("authorization", "")
    if not headers.get("x-api-key") and not (bearer.startswith("Bearer ") and bearer[7:].strip()):
        return 401, "authentication_error", "x-api-key header is required"
    return None


def check_request(body: Any) -> str | None:
    """None when the real Messages API would accept `body`, else its 400 message."""
    problem = _check_required(body)
    if problem is not None:
        return problem
    problem = _check_messages(body["messages"]) or _check_tools(body.get("tools"), body.get("tool_choice"))
    problem = problem or check_images(body["messages"])
    if problem is not None:
        return problem
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if isinstance(block, dict) and block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"system.{i}.text: text content blocks must be non-empty"
    temperature = body.get("temperature")
    if temperature is not None and not (isinstance(temperature, (int, float)) and 0 <= temperature <= 1):
        return "temperature: Input should be less than or equal to 1"
    breakpoints = _count_cache_control(body.get("system")) + _count_cache_control(body.get("tools"))
    breakpoints += _count_cache_control(body["messages"])
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        return f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
    return _check_thinking(body)
