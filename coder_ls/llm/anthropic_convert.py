"""Conversions between our provider-neutral types and the Anthropic Messages API.

Pure functions and a small state machine; no SDK import (the stream events are read
by attribute, so the SDK's typed events and plain namespaces both work).

- `to_api_params(request, info)`: the keyword arguments of `messages.create(...)`, with
  prompt-caching breakpoints (`cache_control: {"type": "ephemeral"}`) on the last
  tool, on the system prompt, and on the last cacheable block of the last message:
  three of the four the API allows; `max_tokens`, `thinking` and `output_config.effort`
  fitted to the model by `request_plan.plan_request`.
- `StreamAssembler.feed(event)`: raw stream events in, `StreamItem`s out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from coder_ls.llm.base import (
    ProviderError,
    ProviderRequest,
    Stop,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCallDelta,
    ToolCallDone,
    ToolSpec,
    Usage,
    normalize_stop_reason,
)
from coder_ls.llm.messagecache import MessageCache
from coder_ls.llm.models import ModelInfo
from coder_ls.llm.request_plan import MIN_THINKING_BUDGET, plan_request
from coder_ls.protocol.messages import (
    Block,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "CACHE_CONTROL",
    "MIN_THINKING_BUDGET",
    "OPAQUE_PREFIX",
    "REDACTED_PREFIX",
    "StreamAssembler",
    "block_to_api",
    "messages_to_api",
    "to_api_params",
    "tool_to_api",
]

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
REDACTED_PREFIX = "redacted:"  # ThinkingBlock(thinking="", signature="redacted:<data>")
# A block of a type this client does not read (a newer API's, a server tool's), kept whole
# and sent back as it came, as the SDK's users do with its opaque blocks:
# ThinkingBlock(thinking="", signature="block:<its JSON>"). It rides with the thinking
# blocks because they are what the conversation keeps verbatim and sends back.
OPAQUE_PREFIX = "block:"
# The blocks a cache breakpoint may go on (not thinking, not a block we do not know)
_CACHEABLE = frozenset({"text", "image", "document", "tool_use", "tool_result"})


def block_to_api(block: Block) -> dict[str, Any] | None:
    """One content block in API form, or None when it must be left out (a text that is
    empty or only whitespace, e.g. the "\n\n" models stream before a tool call, or a
    thinking block without a signature: the API would reject them)."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text.strip() else None
    if isinstance(block, ThinkingBlock):
        if not block.thinking and block.signature.startswith(OPAQUE_PREFIX):
            return _opaque(block.signature)
        if not block.thinking and block.signature.startswith(REDACTED_PREFIX):
            return {"type": "redacted_thinking", "data": block.signature[len(REDACTED_PREFIX) :]}
        if not block.signature:
            return None
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ToolResultBlock):
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
        result["content"] = block.content if block.content else "(no output)"
        if block.images:
            parts = [b for b in (block_to_api(i) for i in block.images) if b is not None]
            result["content"] = [{"type": "text", "text": result["content"]}, *parts]
        if block.is_error:
            result["is_error"] = True
        return result
    if isinstance(block, ImageBlock):
        return image_to_api(block)
    return None


def _opaque(signature: str) -> dict[str, Any] | None:
    try:
        value = json.loads(signature[len(OPAQUE_PREFIX) :])
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("type"), str) else None


def image_to_api(block: ImageBlock) -> dict[str, Any]:
    """An image with its data (loaded by `engine.images.with_image_data`), else a note: a
    request built without loading (a summary) must not carry an empty image."""
    if not block.data:
        name = block.name or block.sha256[:12]
        return {"type": "text", "text": f"[image {name} ({block.width}x{block.height}), not shown here]"}
    source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    return {"type": "image", "source": source}


def message_to_api(message: Message) -> dict[str, Any]:
    content = [b for b in (block_to_api(block) for block in message.content) if b is not None]
    if not content:
        content = [{"type": "text", "text": "(empty)"}]
    return {"role": message.role, "content": content}


def messages_to_api(messages: list[Message], cache: MessageCache | None = None) -> list[dict[str, Any]]:
    """`cache`: the messages of the previous request already converted (`llm.messagecache`)."""
    if cache is None:
        return [message_to_api(m) for m in messages]
    return cache.convert_all(messages, message_to_api)


def _mark_last_cacheable(messages: list[dict[str, Any]]) -> bool:
    """Put a breakpoint on the last block of the last message that may carry one."""
    if not messages:
        return False
    content = list(messages[-1]["content"])  # copies: the dicts may be shared (`llm.messagecache`)
    for i in range(len(content) - 1, -1, -1):
        if content[i].get("type") not in _CACHEABLE:
            continue
        content[i] = {**content[i], "cache_control": dict(CACHE_CONTROL)}
        messages[-1] = {**messages[-1], "content": content}
        return True
    return False


def tool_to_api(tool: ToolSpec) -> dict[str, Any]:
    """A tool in API form. The schema's own top-level `description` (the input type's
    docstring) repeats the tool's description and an empty `required` says nothing:
    both are left out, ~100 tokens of every request's fixed prefix. A server tool is its
    own API form (`ToolSpec.server`)."""
    if tool.server is not None:
        return {**tool.server, "name": tool.name}
    schema = {
        k: v
        for k, v in tool.input_schema.items()
        if not (k == "description" and tool.description) and not (k == "required" and v == [])
    }
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def _continues_without_thinking(messages: list[dict[str, Any]]) -> bool:
    """The request continues a tool loop whose assistant message has no thinking block
    first (thinking was off when it was written): the API refuses budget thinking then."""
    for message in reversed(messages):
        if message["role"] != "assistant":
            continue
        content = message["content"]
        uses_tools = any(b.get("type") == "tool_use" for b in content)
        return uses_tools and content[0].get("type") not in ("thinking", "redacted_thinking")
    return False


def to_api_params(
    request: ProviderRequest, info: ModelInfo | None, cache: MessageCache | None = None
) -> dict[str, Any]:
    """The keyword arguments for `client.messages.create(..., stream=True)`: system and
    tools first and byte-identical from request to request (the cached prefix), output
    size, thinking and effort fitted to the model (`request_plan.plan_request`).
    `cache`: the provider's messages already converted (`llm.messagecache`)."""
    plan = plan_request(request, info)
    params: dict[str, Any] = {"model": request.model, "max_tokens": plan.max_tokens, "stream": True}
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": dict(CACHE_CONTROL)}]
    if request.tools:
        tools = [tool_to_api(t) for t in request.tools]
        tools[-1]["cache_control"] = dict(CACHE_CONTROL)
        params["tools"] = tools
    messages = messages_to_api(request.messages, cache)
    _mark_last_cacheable(messages)
    params["messages"] = messages
    if plan.thinking == "adaptive":  # the model may skip thinking: no block is required
        params["thinking"] = {"type": "adaptive"}
    elif plan.thinking == "enabled" and not _continues_without_thinking(messages):
        params["thinking"] = {"type": "enabled", "budget_tokens": plan.budget_tokens}
    if plan.effort is not None:
        params["output_config"] = {"effort": plan.effort}
    return params


def to_count_params(request: ProviderRequest, info: ModelInfo | None) -> dict[str, Any]:
    """The keyword arguments for `client.messages.count_tokens`: the prompt half of
    `to_api_params` (model, system, tools, messages, as sent); the endpoint refuses the
    output half (`max_tokens`, `stream`), and thinking and effort change no input token."""
    params = to_api_params(request, info)
    return {k: v for k, v in params.items() if k in ("model", "system", "tools", "messages")}


@dataclass
class _OpenBlock:
    kind: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    raw: dict[str, Any] | None = None  # an opaque block, as it started


# The fields of the blocks the assembler reads, and their types: a block of a known type
# that does not fit is a malformed event (retried), not something to guess at
_BLOCK_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    "text": (("text", str),),
    "thinking": (("thinking", str),),
    "redacted_thinking": (("data", str),),
    "tool_use": (("id", str), ("name", str)),
}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


class StreamAssembler:
    """Turns the API's stream events into `StreamItem`s for one attempt."""

    def __init__(self) -> None:
        self.blocks: dict[int, _OpenBlock] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.stopped = False

    def _update_usage(self, usage: Any) -> None:
        if usage is None:
            return
        mapping = {
            "input_tokens": "input_tokens",
            "output_tokens": "output_tokens",
            "cache_read_input_tokens": "cache_read_tokens",
            "cache_creation_input_tokens": "cache_write_tokens",
        }
        for api_name, ours in mapping.items():
            value = _get(usage, api_name)
            if isinstance(value, int):
                setattr(self.usage, ours, value)

    def feed(self, event: Any) -> list[StreamItem]:
        kind = _get(event, "type")
        if kind == "message_start":
            self._update_usage(_get(_get(event, "message"), "usage"))
            return []
        if kind == "content_block_start":
            return self._start(int(_get(event, "index", 0)), _get(event, "content_block"))
        if kind == "content_block_delta":
            return self._delta(int(_get(event, "index", 0)), _get(event, "delta"))
        if kind == "content_block_stop":
            return self._stop(int(_get(event, "index", 0)))
        if kind == "message_delta":
            delta = _get(event, "delta")
            self.stop_reason = _get(delta, "stop_reason") or self.stop_reason
            self.stop_sequence = _get(delta, "stop_sequence") or self.stop_sequence
            self._update_usage(_get(event, "usage"))
            return []
        if kind == "message_stop":
            self.stopped = True
            return [
                Usage(
                    input_tokens=self.usage.input_tokens,
                    output_tokens=self.usage.output_tokens,
                    cache_read_tokens=self.usage.cache_read_tokens,
                    cache_write_tokens=self.usage.cache_write_tokens,
                ),
                Stop(reason=normalize_stop_reason(self.stop_reason), stop_sequence=self.stop_sequence),
            ]
        if kind == "error":  # an error event that reached us as an object
            error = _get(event, "error")
            raise ProviderError("server", str(_get(error, "message", "stream error")), True)
        return []  # ping and anything newer

    def _start(self, index: int, block: Any) -> list[StreamItem]:
        kind = _get(block, "type", "")
        if not isinstance(kind, str):
            raise ProviderError("server", "Anthropic sent a malformed stream event: a block without a type", True)
        for name, wanted in _BLOCK_FIELDS.get(kind, ()):
            value = _get(block, name)
            if value is not None and not isinstance(value, wanted):
                raise ProviderError("server", f"Anthropic sent a malformed stream event: {kind}.{name}", True)
        if kind == "text":
            self.blocks[index] = _OpenBlock("text")
            text = _get(block, "text") or ""
            return [TextDelta(text)] if text else []
        if kind == "thinking":
            opened = _OpenBlock("thinking", signature=_get(block, "signature") or "")
            if _get(block, "thinking"):
                opened.parts.append(_get(block, "thinking"))
            self.blocks[index] = opened
            return [ThinkingDelta(opened.parts[0])] if opened.parts else []
        if kind == "redacted_thinking":
            self.blocks[index] = _OpenBlock("redacted", signature=_get(block, "data") or "")
            return []
        if kind == "tool_use":
            self.blocks[index] = _OpenBlock("tool_use", id=_get(block, "id", ""), name=_get(block, "name", ""))
            return []
        raw = dict(block) if isinstance(block, dict) else None
        self.blocks[index] = _OpenBlock("opaque", raw=raw)
        return []

    def _delta(self, index: int, delta: Any) -> list[StreamItem]:
        opened = self.blocks.get(index)
        kind = _get(delta, "type")
        if kind == "text_delta":
            text = _get(delta, "text") or ""
            return [TextDelta(text)] if text else []
        if opened is None:
            return []
        if kind == "thinking_delta":
            text = _get(delta, "thinking") or ""
            opened.parts.append(text)
            return [ThinkingDelta(text)] if text else []
        if kind == "signature_delta":  # the whole signature: it replaces, as the SDK does
            opened.signature = _get(delta, "signature") or ""
            return []
        if kind == "input_json_delta":
            piece = _get(delta, "partial_json") or ""
            if not piece:
                return []
            opened.parts.append(piece)
            if opened.kind != "tool_use":  # a server tool's input: kept with its block
                return []
            return [ToolCallDelta(id=opened.id, name=opened.name, partial_json=piece)]
        return []

    def _stop(self, index: int) -> list[StreamItem]:
        opened = self.blocks.pop(index, None)
        if opened is None:
            return []
        if opened.kind == "thinking":
            return [ThinkingDone(thinking="".join(opened.parts), signature=opened.signature)]
        if opened.kind == "redacted":
            return [ThinkingDone(thinking="", signature=REDACTED_PREFIX + opened.signature)]
        if opened.kind == "tool_use":
            raw = "".join(opened.parts).strip()
            try:
                value = json.loads(raw) if raw else {}
            except ValueError as exc:
                return [ToolCallDone(opened.id, opened.name, {}, parse_error=f"invalid JSON input: {exc}")]
            if not isinstance(value, dict):
                return [ToolCallDone(opened.id, opened.name, {}, parse_error="the input is not a JSON object")]
            return [ToolCallDone(opened.id, opened.name, value)]
        if opened.kind == "opaque" and opened.raw is not None:
            return [ThinkingDone(thinking="", signature=OPAQUE_PREFIX + _finished(opened))]
        return []


def _finished(opened: _OpenBlock) -> str:
    """An opaque block's JSON as it ends: its streamed input (a server tool's) in place."""
    raw = dict(opened.raw or {})
    if opened.parts and "input" in raw:
        try:
            raw["input"] = json.loads("".join(opened.parts))
        except ValueError:
            pass
    return json.dumps(raw, separators=(",", ":"))
