"""The fake's web search (Anthropic's `web_search_20250305` server tool) and what the real
API demands of its blocks when a conversation sends them back.

A RESPONSE spec may hold `"webSearch": {"id": "srvtoolu_1", "query": "...", "results":
[{"url": ..., "title": ..., "encrypted_content"?: ...}], "error"?: "max_uses_exceeded"}`
(or a list of them): each becomes a `server_tool_use` block (its input streamed as
`input_json_delta`, as the real API does) and then its `web_search_tool_result` block,
before the response's text.

`check_server_blocks(messages, sent)` is what the real API refuses on replay:

- both block types only in assistant turns;
- a `server_tool_use` has an id `srvtoolu_…`, a known name and an object input;
- a `web_search_tool_result` answers a `server_tool_use` earlier in the same assistant turn,
  once, and its content is a list of `web_search_result` objects (url, title,
  encrypted_content) or a `web_search_tool_result_error`;
- a `server_tool_use` is answered in its turn, unless that turn is the last message (a
  response that ended with `pause_turn`, sent back to go on);
- and, since the fake knows what it sent (`sent`: block id -> the block as streamed), a
  replayed block is byte-for-byte what it sent (apart from `cache_control`): the
  `encrypted_content` is what the model cites from and must come back unchanged.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["check_server_blocks", "remember", "search_blocks", "search_specs"]

SERVER_ID = re.compile(r"^srvtoolu_[A-Za-z0-9_]+$")
SERVER_TOOLS = frozenset({"web_search", "web_fetch", "code_execution"})


def search_specs(spec: dict[str, Any]) -> list[dict[str, Any]]:
    value = spec.get("webSearch")
    if not value:
        return []
    return list(value) if isinstance(value, list) else [value]


def search_blocks(search: dict[str, Any], n: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the `server_tool_use` block, its `web_search_tool_result` block), complete."""
    sid = search.get("id", f"srvtoolu_fake_{n}")
    use = {"type": "server_tool_use", "id": sid, "name": "web_search", "input": {"query": search.get("query", "")}}
    if search.get("error"):
        content: Any = {"type": "web_search_tool_result_error", "error_code": search["error"]}
    else:
        content = [
            {
                "type": "web_search_result",
                "title": r.get("title", r["url"]),
                "url": r["url"],
                "encrypted_content": r.get("encrypted_content", f"enc-{sid}-{i}"),
                "page_age": r.get("page_age"),
            }
            for i, r in enumerate(search.get("results") or [])
        ]
    return use, {"type": "web_search_tool_result", "tool_use_id": sid, "content": content}


def _without_cache_control(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _check_result_content(content: Any, where: str) -> str | None:
    if isinstance(content, dict):
        if content.get("type") != "web_search_tool_result_error" or not isinstance(content.get("error_code"), str):
            return f"{where}.content: Input should be a valid list or a web_search_tool_result_error"
        return None
    if not isinstance(content, list):
        return f"{where}.content: Input should be a valid list"
    for k, item in enumerate(content):
        if not isinstance(item, dict) or item.get("type") != "web_search_result":
            return f"{where}.content.{k}.type: Input should be 'web_search_result'"
        for field in ("url", "title", "encrypted_content"):
            if not isinstance(item.get(field), str):
                return f"{where}.content.{k}.{field}: Field required"
    return None


def check_server_blocks(messages: list[Any], sent: dict[str, dict[str, Any]]) -> str | None:
    """None when the real API accepts the server tools' blocks of `messages`, else its 400."""
    turns: list[tuple[str, list[tuple[int, int, Any]]]] = []  # (role, [(message index, block index, block)])
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [(i, j, b) for j, b in enumerate(content)] if isinstance(content, list) else []
        role = str(message.get("role")) if isinstance(message, dict) else ""
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    for n, (role, blocks) in enumerate(turns):
        uses: dict[str, str] = {}
        answered: set[str] = set()
        for i, j, block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in ("server_tool_use", "web_search_tool_result"):
                continue
            where = f"messages.{i}.content.{j}"
            if role != "assistant":
                return f"{where}: `{kind}` blocks are only allowed in assistant messages"
            key = block.get("id") if kind == "server_tool_use" else block.get("tool_use_id")
            original = sent.get(f"{kind}:{key}")
            if original is not None and _without_cache_control(block) != original:
                return f"{where}: the `{kind}` block {key} was changed since the API sent it"
            if kind == "server_tool_use":
                if not isinstance(key, str) or not SERVER_ID.match(key):
                    return f"{where}.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'"
                if block.get("name") not in SERVER_TOOLS:
                    return f"{where}.name: Input should be one of {', '.join(sorted(SERVER_TOOLS))}"
                if not isinstance(block.get("input"), dict):
                    return f"{where}.input: Input should be a valid dictionary"
                if key in uses:
                    return f"{where}: `server_tool_use` ids must be unique"
                uses[key] = where
                continue
            if key not in uses:
                return (
                    f"{where}: `web_search_tool_result` block(s) provided when the same assistant message does "
                    f"not contain a preceding `server_tool_use` block with id {key}"
                )
            if key in answered:
                return f"{where}: `server_tool_use` {key} is answered by more than one `web_search_tool_result`"
            answered.add(str(key))
            if problem := _check_result_content(block.get("content"), where):
                return problem
        unanswered = [u for u in uses if u not in answered]
        if unanswered and n != len(turns) - 1:
            return (
                f"{uses[unanswered[0]]}: `server_tool_use` ids were found without `web_search_tool_result` blocks "
                f"immediately after: {', '.join(unanswered)}"
            )
    return None


def remember(sent: dict[str, dict[str, Any]], blocks: list[dict[str, Any]]) -> None:
    """Keep the server blocks a response carried (by type and id), as the fake sent them."""
    for block in blocks:
        key = block.get("id") if block["type"] == "server_tool_use" else block.get("tool_use_id")
        sent[f"{block['type']}:{key}"] = json.loads(json.dumps(block))
