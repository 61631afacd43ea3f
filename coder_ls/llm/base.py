"""The provider protocol: what the engine asks of a model and what it streams back.

A provider turns one `ProviderRequest` (system prompt, conversation, tools) into an
async stream of `StreamItem`s. One call to `Provider.stream()` is one model turn:

    async with contextlib.aclosing(provider.stream(request)) as items:
        async for item in items:
            match item:
                case TextDelta(text=t): ...            # assistant text, as it comes
                case ThinkingDelta(text=t): ...        # extended thinking, as it comes
                case ToolCallDelta(): ...              # optional: a tool call's input JSON growing
                case ThinkingDone(): ...               # keep as a ThinkingBlock (signature!)
                case ToolCallDone(id, name, input): ...# keep as a ToolUseBlock and run it
                case Usage(): ...                      # token counts of this turn
                case Stop(reason=r): ...               # always the last item
                case Restart(reason): ...              # drop everything kept since the step began
                case Retrying(attempt, delay_seconds, reason): ...

Every successful stream ends with exactly one `Usage` and then one `Stop`. Failures
raise `ProviderError`. Cancelling the consuming task (or closing the iterator)
stops the stream at once and closes the underlying HTTP response.

`Retrying` is yielded before the provider sleeps and tries again after a transient
failure (rate limit, overload, server error, dropped connection). When the failed
attempt had already streamed items, a `Restart` comes first: everything streamed
since the start of the request is void and the consumer must throw away the partial
text, thinking and tool calls it kept (and tell its own clients so).

This module is light: it must not import any SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import msgspec

from coder_ls.protocol.config import Effort, ThinkingMode
from coder_ls.protocol.messages import Message

if TYPE_CHECKING:
    from coder_ls.llm.catalog import ModelCatalog

__all__ = [
    "STOP_REASONS",
    "Effort",
    "ErrorKind",
    "Provider",
    "ProviderError",
    "ProviderRequest",
    "Retrying",
    "Stop",
    "StopReason",
    "StreamItem",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingDone",
    "ThinkingMode",
    "ToolCallDelta",
    "ToolCallDone",
    "ToolSpec",
    "Usage",
    "normalize_stop_reason",
]


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool the model may call; `input_schema` is a JSON Schema object. `server`: a tool
    the provider runs itself (Anthropic's `web_search_20250305`), sent in its API form as it
    is (`{"type": ..., "name": ..., "max_uses": ...}`); its calls and results come back as
    blocks kept opaque in the conversation (`anthropic_convert.OPAQUE_PREFIX`), never as
    tool calls of ours."""

    name: str
    description: str
    input_schema: dict[str, Any]
    server: dict[str, Any] | None = None


class ProviderRequest(msgspec.Struct):
    """One model turn. The output and thinking fields say what the user asked for; the
    provider fits them to the model (`coder_ls.llm.request_plan`):

    - `max_tokens`: None = the model's output limit, capped (`DEFAULT_OUTPUT_CAP`).
    - `thinking`: "auto" = the model's best (adaptive where it exists, else a budget,
      else none); "adaptive" / "enabled" (a budget) where the model can, else its
      nearest; "off".
    - `thinking_budget`: tokens for budget thinking (None = `DEFAULT_THINKING_BUDGET`).
    - `effort`: `output_config.effort`, sent only to models that accept that level.
    """

    model: str
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = msgspec.field(default_factory=list)
    max_tokens: int | None = None
    thinking_budget: int | None = None
    thinking: ThinkingMode = "auto"
    effort: Effort | None = None
    timeout_seconds: float | None = None  # the longest silence on the response (None: the provider's)


# ---------------------------------------------------------------- stream items


class TextDelta(msgspec.Struct, tag_field="type", tag="textDelta"):
    text: str


class ThinkingDelta(msgspec.Struct, tag_field="type", tag="thinkingDelta"):
    text: str


class ToolCallDelta(msgspec.Struct, tag_field="type", tag="toolCallDelta"):
    """A piece of a tool call's input JSON (for progress display only)."""

    id: str
    name: str
    partial_json: str


class ToolCallDone(msgspec.Struct, tag_field="type", tag="toolCallDone"):
    """A complete tool call. `parse_error` is set (and `input` is `{}`) when the
    model's input was not a JSON object, e.g. cut off by max_tokens."""

    id: str
    name: str
    input: dict[str, Any]
    parse_error: str | None = None


class ThinkingDone(msgspec.Struct, tag_field="type", tag="thinkingDone"):
    """A complete thinking block. Keep it (with its signature) in the assistant
    message: the API needs it back unchanged when the turn continues after tool use.
    A redacted thinking block comes as `thinking=""` and `signature="redacted:<data>"`."""

    thinking: str
    signature: str = ""


class Usage(msgspec.Struct, tag_field="type", tag="usage"):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        """Everything the model read this turn (uncached + cached + cache writes)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "refusal",
    "pause_turn",
    "model_context_window_exceeded",
    "other",
]
STOP_REASONS: tuple[str, ...] = (
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "refusal",
    "pause_turn",
    "model_context_window_exceeded",
    "other",
)


def normalize_stop_reason(value: str | None) -> StopReason:
    """Map a provider's stop reason onto `StopReason` (unknown ones become "other")."""
    if value is None:
        return "end_turn"
    if value in STOP_REASONS:
        return value  # type: ignore[return-value]
    return "other"


class Stop(msgspec.Struct, tag_field="type", tag="stop"):
    reason: StopReason
    stop_sequence: str | None = None


class Retrying(msgspec.Struct, tag_field="type", tag="retrying"):
    """The provider will try again in `delay_seconds` ("Retrying in 2s")."""

    attempt: int  # the attempt that failed, 1-based
    delay_seconds: float
    reason: str


class Restart(msgspec.Struct, tag_field="type", tag="restart"):
    """The attempt that was streaming failed after it had produced output: everything it
    yielded (text, thinking, tool calls) is void; what follows starts the reply over."""

    reason: str


StreamItem = TextDelta | ThinkingDelta | ToolCallDelta | ToolCallDone | ThinkingDone | Usage | Stop | Retrying | Restart


# ---------------------------------------------------------------- errors

ErrorKind = Literal["auth", "rate_limit", "overloaded", "server", "connection", "bad_request", "config"]


class ProviderError(Exception):
    """A failure the engine shows to the user. `retryable` says whether trying again
    later may help (the provider has already retried as often as it would)."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        retryable: bool = False,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"ProviderError(kind={self.kind!r}, message={self.message!r}, retryable={self.retryable})"


# ---------------------------------------------------------------- protocol


@runtime_checkable
class Provider(Protocol):
    """A model backend. `stream` is an async generator function: calling it returns
    an async iterator of `StreamItem`s for one turn (see the module docstring)."""

    name: str
    catalog: ModelCatalog  # the models it serves: aliases, limits, deprecations

    def stream(self, request: ProviderRequest) -> AsyncIterator[StreamItem]: ...

    async def aclose(self) -> None:
        """Release clients and connections; the provider is not used afterwards."""
        ...
