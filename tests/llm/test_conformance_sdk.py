"""A standing conformance test of our Messages client against the installed SDK's own types
(contract section 21, issue 37): the second corpus, one we did not write.

Every event, content-block and delta type the installed `anthropic` package names
(`RawMessageStreamEvent`, `RawContentBlockStartEvent.content_block`,
`RawContentBlockDeltaEvent.delta`) becomes a byte fixture: a whole streamed message with
that block, every field filled from the type's own definition (`sample`), its deltas as
the API streams them. The same bytes, from one loopback endpoint, go through the SDK
(`messages.stream(...).get_final_message()`, its accumulated message) and through our
client (`AnthropicProvider.stream`); what we would send back for each block (what the
conversation keeps, `block_to_api`) must equal what the SDK's users send back, and the
usage and stop reason must agree.

When a new SDK names a type, its fixture appears here by itself: the test fails if our
client cannot carry it, and says what to do. What we drop on purpose is listed in
`DROPPED`, with why.
"""

from __future__ import annotations

import datetime
import json
import types
import typing
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")
from anthropic import types as T  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from raw_endpoint import RawEndpoint, http_head, sse_bytes  # noqa: E402

from coder_ls.llm.anthropic_convert import block_to_api  # noqa: E402
from coder_ls.llm.anthropic_provider import AnthropicProvider  # noqa: E402
from coder_ls.llm.base import ProviderRequest, Stop, TextDelta, ThinkingDone, ToolCallDone, Usage  # noqa: E402
from coder_ls.protocol.messages import Message, TextBlock, ThinkingBlock, ToolUseBlock  # noqa: E402

# Fields of the blocks we read field by field that we do not keep, and why. A field the
# SDK adds to one of these blocks fails the test until it is carried or listed here.
DROPPED: dict[str, dict[str, str]] = {
    "text": {"citations": "the text is replayed without them; the API accepts a text block without citations"},
    "tool_use": {
        "caller": "set only for calls made from the code-execution tool, which we do not offer",
        "toolset_name": "set only for MCP toolsets declared in the request, which we do not send",
    },
}
# The deltas each block type takes, as the SDK's accumulator applies them
DELTAS_OF: dict[str, tuple[str, ...]] = {
    "text": ("text_delta", "citations_delta"),
    "thinking": ("thinking_delta", "signature_delta"),
    "tool_use": ("input_json_delta",),
    "server_tool_use": ("input_json_delta",),
}


# ------------------------------------------------------------------ the SDK's types


def _members(annotation: Any) -> list[Any]:
    """The alternatives of a (possibly annotated, possibly nested) union."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(annotation) for m in _members(a)]
    return [annotation]


def _literal(model: type[BaseModel], field: str = "type") -> str:
    (value,) = typing.get_args(model.model_fields[field].annotation)
    return str(value)


EVENT_TYPES = [_literal(m) for m in _members(T.RawMessageStreamEvent)]
BLOCK_MODELS = {_literal(m): m for m in _members(T.RawContentBlockStartEvent.model_fields["content_block"].annotation)}
DELTA_MODELS = {_literal(m): m for m in _members(T.RawContentBlockDeltaEvent.model_fields["delta"].annotation)}


def sample(annotation: Any, name: str, depth: int = 0) -> Any:
    """A value for a field, from its type alone: every optional field filled (to carry it),
    the first alternative of a union, a literal's first value."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return sample(options[0], name, depth) if options else None
    if origin is typing.Literal:
        return typing.get_args(annotation)[0]
    if origin in (list, typing.List):  # noqa: UP006
        (item,) = typing.get_args(annotation) or (str,)
        return [sample(item, name, depth + 1)] if depth < 6 else []
    if origin in (dict, typing.Dict):  # noqa: UP006
        return {"key": "value"}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {
            (f.alias or key): sample(f.annotation, key, depth + 1)
            for key, f in annotation.model_fields.items()
            if depth < 6 or f.is_required()
        }
    if annotation is bool:
        return True
    if annotation is int:
        return 7
    if annotation is float:
        return 1.5
    if annotation in (datetime.datetime, datetime.date):
        return "2026-01-02T03:04:05Z"
    if annotation is str:
        return f"{name}-sample"
    return {"opaque": name}  # object / Any


# ------------------------------------------------------------------ the fixtures


def _usage() -> dict[str, Any]:
    usage = sample(T.Usage, "usage")
    usage.update(input_tokens=11, output_tokens=1, cache_read_input_tokens=5, cache_creation_input_tokens=3)
    return usage


def _message_start() -> dict[str, Any]:
    message = sample(T.Message, "message")
    message.update(content=[], stop_reason=None, stop_sequence=None, usage=_usage(), model="claude-sonnet-5-5")
    return {"type": "message_start", "message": message}


def _start_of(kind: str, block: dict[str, Any]) -> dict[str, Any]:
    """The block as `content_block_start` carries it: text, thinking and tool input empty
    (they arrive in deltas), everything else whole."""
    if kind == "text":
        return {"type": "text", "text": ""}
    if kind == "thinking":  # a signature at the start too: the delta's must replace it, not follow it
        return {"type": "thinking", "thinking": "", "signature": block["signature"]}
    if "input" in block and kind in DELTAS_OF:
        return {**block, "input": {}}
    return block


def _deltas_of(kind: str, block: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for delta_type in DELTAS_OF.get(kind, ()):
        if delta_type == "text_delta":
            out += [{"type": delta_type, "text": block["text"][:4]}, {"type": delta_type, "text": block["text"][4:]}]
        elif delta_type == "citations_delta":
            citation = sample(DELTA_MODELS[delta_type].model_fields["citation"].annotation, "citation")
            out.append({"type": delta_type, "citation": citation})
        elif delta_type == "thinking_delta":
            out += [{"type": delta_type, "thinking": block["thinking"]}]
        elif delta_type == "signature_delta":
            out.append({"type": delta_type, "signature": block["signature"]})
        elif delta_type == "input_json_delta":
            raw = json.dumps(block["input"])
            out += [{"type": delta_type, "partial_json": raw[:3]}, {"type": delta_type, "partial_json": raw[3:]}]
    return out


def fixture(kind: str) -> tuple[dict[str, Any], bytes]:
    """(the block as sent in full, the bytes of a whole streamed message holding it)."""
    block = sample(BLOCK_MODELS[kind], kind)
    if "input" in block:
        block["input"] = {"query": "sdk conformance", "n": 3}
    events: list[tuple[str, Any]] = [("message_start", _message_start()), ("ping", {"type": "ping"})]
    start = {"type": "content_block_start", "index": 0, "content_block": _start_of(kind, block)}
    events.append(("content_block_start", start))
    for delta in _deltas_of(kind, block):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    delta = sample(T.RawMessageDeltaEvent, "message_delta")  # every field the SDK names, filled
    delta["delta"].update(stop_reason="end_turn", stop_sequence=None)
    delta["usage"].update(output_tokens=9, input_tokens=11, cache_read_input_tokens=5, cache_creation_input_tokens=3)
    events += [("message_delta", delta), ("message_stop", {"type": "message_stop"})]
    body = sse_bytes(events)
    return block, http_head(200, {"content-type": "text/event-stream", "content-length": str(len(body))}) + body


# ------------------------------------------------------------------ both clients


async def through_the_sdk(url: str) -> Any:
    client = anthropic.AsyncAnthropic(api_key="sk-test", base_url=url, max_retries=0)
    try:
        async with client.messages.stream(
            model="claude-sonnet-5-5", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            return await stream.get_final_message()
    finally:
        await client.close()


async def through_ours(url: str) -> list[Any]:
    provider = AnthropicProvider(api_key="sk-test", base_url=url, max_attempts=1)
    request = ProviderRequest(model="claude-sonnet-5-5", system="", messages=[Message("user", [TextBlock("hi")])])
    try:
        return [item async for item in provider.stream(request)]
    finally:
        await provider.aclose()


def kept(items: list[Any]) -> list[dict[str, Any]]:
    """What our conversation keeps of the blocks (as `agent/turn.py` builds the assistant
    message), in the form we send back (`block_to_api`)."""
    text = "".join(i.text for i in items if isinstance(i, TextDelta))
    blocks: list[Any] = [ThinkingBlock(i.thinking, i.signature) for i in items if isinstance(i, ThinkingDone)]
    if text:
        blocks.append(TextBlock(text))
    blocks += [ToolUseBlock(i.id, i.name, i.input) for i in items if isinstance(i, ToolCallDone)]
    return [b for b in (block_to_api(x) for x in blocks) if b is not None]


def expected(block: Any) -> dict[str, Any]:
    """What the SDK's users send back for one block of its final message, less `DROPPED`."""
    kind = block.type
    dumped = block.model_dump(mode="json", exclude_none=True)
    for name in DROPPED.get(kind, {}):
        dumped.pop(name, None)
    return dumped


# ------------------------------------------------------------------ the tests


def test_every_event_type_the_sdk_names_is_read() -> None:
    from coder_ls.llm.anthropic_http import KNOWN_EVENTS

    unknown = sorted(set(EVENT_TYPES) - KNOWN_EVENTS)
    assert not unknown, (
        f"the installed SDK names stream event type(s) {unknown} our client passes over: read them in "
        "anthropic_http.StreamEvent / anthropic_convert.StreamAssembler, or pass them over here on purpose"
    )


def test_every_delta_type_the_sdk_names_is_applied_or_dropped_on_purpose() -> None:
    from coder_ls.llm.anthropic_http import KNOWN_DELTAS

    mapped = {d for ds in DELTAS_OF.values() for d in ds}
    unmapped = sorted(set(DELTA_MODELS) - mapped)
    assert not unmapped, f"the installed SDK names delta type(s) {unmapped}: say in DELTAS_OF which blocks take them"
    dropped = {"citations_delta"}  # what it adds is the text block's `citations`, in DROPPED
    unread = sorted(mapped - KNOWN_DELTAS - dropped)
    assert not unread, f"delta type(s) {unread} are neither applied by our client nor dropped on purpose"


def test_the_known_blocks_have_no_field_we_neither_carry_nor_drop_on_purpose() -> None:
    carried = {"text": {"type", "text"}, "thinking": {"type", "thinking", "signature"},
               "redacted_thinking": {"type", "data"}, "tool_use": {"type", "id", "name", "input"}}  # fmt: skip
    for kind, fields in carried.items():
        new = set(BLOCK_MODELS[kind].model_fields) - fields - set(DROPPED.get(kind, {}))
        assert not new, f"the SDK's {kind} block has field(s) {sorted(new)}: carry them or list them in DROPPED"


@pytest.mark.parametrize("kind", sorted(BLOCK_MODELS))
async def test_each_block_type_is_carried_as_the_sdk_carries_it(kind: str) -> None:
    block, raw = fixture(kind)
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", raw)
        sdk_message = await through_the_sdk(endpoint.url)
        ours = await through_ours(endpoint.url)
    assert [b.type for b in sdk_message.content] == [kind]
    assert kept(ours) == [expected(sdk_message.content[0])], f"{kind}: as sent {json.dumps(block)[:400]}"
    (usage,) = [i for i in ours if isinstance(i, Usage)]
    sdk_usage = sdk_message.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        sdk_usage.input_tokens, sdk_usage.output_tokens,
        sdk_usage.cache_read_input_tokens, sdk_usage.cache_creation_input_tokens,
    )  # fmt: skip
    (stop,) = [i for i in ours if isinstance(i, Stop)]
    assert stop.reason == sdk_message.stop_reason


def test_the_fixtures_cover_every_block_type_and_event_type() -> None:
    """The SDK this was written against names 12 block types and 6 event types; a newer one
    names at least as many, and the fixtures hold every event type it names."""
    assert len(BLOCK_MODELS) >= 12 and len(EVENT_TYPES) >= 6
    raws = [fixture(kind)[1] for kind in BLOCK_MODELS]
    missing = [name for name in EVENT_TYPES if not any(f"event: {name}\n".encode() in raw for raw in raws)]
    assert not missing, missing
