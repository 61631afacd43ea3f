"""A provider that replays a JSON script of turns: offline demos and tests.

File format (camelCase keys; every key of a turn is optional):

    {
      "turns": [
        {"thinking": "Let me look at the file first.",
         "text": "I'll read it.",
         "toolCalls": [{"name": "read", "input": {"path": "src/app.py"}}]},
        {"text": "The file defines `main`.", "delayMs": 200},
        {"error": {"kind": "overloaded", "message": "Overloaded"}}
      ]
    }

Each call to `stream()` consumes the next turn and emits, in order:

- `thinking`: a few `ThinkingDelta`s and a `ThinkingDone` (signature `""`);
- `text`: the text in a few `TextDelta`s (split at word boundaries);
- `toolCalls`: per call a `ToolCallDelta` (the whole input JSON) and a
  `ToolCallDone`; `id` is optional (default `toolu_scripted_<turn>_<n>`);
- `error`: if present, `ProviderError(kind, message, retryable)` is raised after
  the items above (kinds as in `ProviderError`);
- a `Usage` (from `"usage": {"inputTokens", "outputTokens", "cacheReadTokens",
  "cacheWriteTokens"}` or a rough estimate) and a `Stop` whose reason is
  `"stopReason"` if given, else `tool_use` when there are tool calls, else `end_turn`.

`"expectUserText"`: the turn is for a request whose last user message (the last one with
text, not only tool results) holds that text; any other request gets a `bad_request`
`ProviderError` naming both, so a test shows what the model was sent (an edited and
resent message in an editor test).

`"delayMs"` waits that long before each delta (so a demo can be cancelled
mid-turn). When the script runs out, every further turn replies with the text
"(script finished)" and `end_turn`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from coder_ls.llm.base import (
    ErrorKind,
    ProviderError,
    ProviderRequest,
    Stop,
    StopReason,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCallDelta,
    ToolCallDone,
    Usage,
)
from coder_ls.llm.catalog import ModelCatalog
from coder_ls.protocol.messages import TextBlock
from coder_ls.saferead import UnreadableFile, read_regular_file

__all__ = ["SCRIPT_FINISHED_TEXT", "ScriptError", "ScriptTurn", "ScriptedProvider", "ScriptedToolCall"]

SCRIPT_FINISHED_TEXT = "(script finished)"

MAX_SCRIPT_BYTES = 64 * 1024 * 1024


class ScriptedToolCall(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    name: str
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    id: str | None = None


class ScriptUsage(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class ScriptError(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    kind: Literal["auth", "rate_limit", "overloaded", "server", "connection", "bad_request", "config"] = "server"
    message: str = "scripted error"
    retryable: bool = False


class ScriptTurn(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    text: str = ""
    thinking: str = ""
    tool_calls: list[ScriptedToolCall] = msgspec.field(default_factory=list)
    delay_ms: int = 0
    usage: ScriptUsage | None = None
    stop_reason: StopReason | None = None
    error: ScriptError | None = None
    expect_user_text: str = ""


def _last_user_text(request: ProviderRequest) -> str:
    """The text of the request's last user message that has text (tool results are not)."""
    for message in reversed(request.messages):
        if message.role == "user" and any(isinstance(b, TextBlock) for b in message.content):
            return message.text()
    return ""


class _ScriptFile(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    turns: list[ScriptTurn] = msgspec.field(default_factory=list)


def _chunks(text: str, parts: int = 3) -> list[str]:
    """Split text into about `parts` pieces at word boundaries (concatenation is exact)."""
    if not text:
        return []
    words = text.split(" ")
    if len(words) < 2:
        return [text]
    size = max(1, -(-len(words) // parts))
    pieces: list[str] = []
    for start in range(0, len(words), size):
        piece = " ".join(words[start : start + size])
        if start + size < len(words):
            piece += " "
        pieces.append(piece)
    return pieces


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


class ScriptedProvider:
    """Replays `turns` in order, one per `stream()` call (see the module docstring)."""

    name = "scripted"

    def __init__(self, turns: list[ScriptTurn] | list[dict[str, Any]], *, source: str = "<memory>") -> None:
        self.turns: list[ScriptTurn] = [
            t if isinstance(t, ScriptTurn) else msgspec.convert(t, ScriptTurn) for t in turns
        ]
        self.source = source
        self.catalog = ModelCatalog()
        self.position = 0  # index of the next turn
        self.requests: list[ProviderRequest] = []  # every request seen (for tests)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProvider:
        try:
            raw = read_regular_file(path, MAX_SCRIPT_BYTES)  # a FIFO or a device is refused, not waited on
        except UnreadableFile as exc:
            raise ProviderError("config", f"Cannot read the script file {path}: {exc}") from exc
        if raw is None:
            raise ProviderError("config", f"Cannot read the script file {path}: No such file or directory")
        try:
            script = msgspec.json.decode(raw, type=_ScriptFile)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ProviderError("config", f"The script file {path} is not a valid script: {exc}") from exc
        return cls(script.turns, source=str(path))

    @classmethod
    def from_json(cls, text: str) -> ScriptedProvider:
        script = msgspec.json.decode(text, type=_ScriptFile)
        return cls(script.turns)

    @property
    def remaining(self) -> int:
        return max(0, len(self.turns) - self.position)

    def _next_turn(self) -> ScriptTurn:
        if self.position < len(self.turns):
            turn = self.turns[self.position]
        else:
            turn = ScriptTurn(text=SCRIPT_FINISHED_TEXT)
        self.position += 1
        return turn

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        index = self.position
        turn = self._next_turn()
        delay = max(0, turn.delay_ms) / 1000.0
        if turn.expect_user_text and turn.expect_user_text not in (said := _last_user_text(request)):
            raise ProviderError(
                "bad_request",
                f"The script's turn {index + 1} expects the user's last message to hold "
                f"{turn.expect_user_text!r}; it was {said!r}.",
            )

        async def pause() -> None:
            if delay:
                await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)  # let a cancel land between deltas

        if turn.thinking:
            for piece in _chunks(turn.thinking):
                await pause()
                yield ThinkingDelta(piece)
            yield ThinkingDone(thinking=turn.thinking, signature="")
        for piece in _chunks(turn.text):
            await pause()
            yield TextDelta(piece)
        for n, call in enumerate(turn.tool_calls):
            await pause()
            call_id = call.id or f"toolu_scripted_{index}_{n}"
            yield ToolCallDelta(id=call_id, name=call.name, partial_json=json.dumps(call.input))
            yield ToolCallDone(id=call_id, name=call.name, input=dict(call.input))
        if turn.error is not None:
            kind: ErrorKind = turn.error.kind
            raise ProviderError(kind, turn.error.message, turn.error.retryable)
        if turn.usage is not None:
            usage = Usage(
                input_tokens=turn.usage.input_tokens,
                output_tokens=turn.usage.output_tokens,
                cache_read_tokens=turn.usage.cache_read_tokens,
                cache_write_tokens=turn.usage.cache_write_tokens,
            )
        else:
            prompt = request.system + "".join(msgspec.json.encode(m.content).decode() for m in request.messages)
            out = turn.text + turn.thinking + "".join(json.dumps(c.input) for c in turn.tool_calls)
            usage = Usage(input_tokens=_estimate_tokens(prompt), output_tokens=_estimate_tokens(out))
        yield usage
        reason: StopReason = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
        yield Stop(reason=reason)

    async def aclose(self) -> None:
        return None
