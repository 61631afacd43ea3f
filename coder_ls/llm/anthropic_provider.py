"""The Anthropic provider: the streaming Messages API through our own small HTTP client
(`anthropic_http`: aiohttp, typed stream events), not the SDK, whose import alone takes
about a second (see that module for why).

The client is built lazily, in a worker thread (aiohttp's import), the first time a turn
needs it (or on `prepare()`, which the warm-up calls at `initialized`), never when this
module is imported.

This provider retries rate limits (429), overloads (529, or an `overloaded_error` event
mid-stream), server errors (5xx, 408, 409) and connection failures (including a stream
dropped mid-body) with exponential backoff (1, 2, 4, 8 s by default, capped, with
jitter, at most 5 attempts), as the server asks (contract section 21): `x-should-retry`
first (`true` retries even a 400, `false` stops even a 500), `retry-after-ms` /
`retry-after` when positive (up to `max_retry_after`, 5 minutes: longer, the error says
when to retry instead of sitting silent). Token counts and the models listing are retried
the same way. A `Retrying` item is yielded before each sleep, preceded by a `Restart` when
the failed attempt had already yielded output. Authentication (401/403) and bad requests
are not retried.

The request body is encoded once with msgspec and posted as bytes; the messages already
converted are kept from request to request (`messagecache`).

Cancellation: the stream runs in the consumer's task, so cancelling that task (or
closing the iterator) interrupts the HTTP read or the backoff sleep at once; the
HTTP response is closed in a `finally`, which closes the connection.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import importlib.util
import logging
import random
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.llm.anthropic_convert import StreamAssembler, to_api_params, to_count_params
from coder_ls.llm.anthropic_http import MessagesClient, retry_after_seconds
from coder_ls.llm.base import (
    ProviderError,
    ProviderRequest,
    Restart,
    Retrying,
    Stop,
    StreamItem,
    Usage,
)
from coder_ls.llm.catalog import ModelCatalog
from coder_ls.llm.messagecache import MessageCache
from coder_ls.protocol.wiretext import CarryingEncoder

__all__ = ["AnthropicProvider", "retry_after_seconds"]

log = logging.getLogger(__name__)


class _ModelsPage(msgspec.Struct):
    data: list[dict[str, Any]] = []
    has_more: bool = False
    last_id: str | None = None


class _Counted(msgspec.Struct):
    input_tokens: int


def sdk_deprecations() -> dict[str, str]:
    """The installed SDK's own end-of-life table (`anthropic/_data/deprecated_models.py`),
    read as a literal without importing the SDK (its import is the second we avoid);
    empty when the SDK or the table is absent or has another shape."""
    try:
        spec = importlib.util.find_spec("anthropic")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.origin:
        return {}
    source = Path(spec.origin).parent / "_data" / "deprecated_models.py"
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    for node in tree.body:
        match node:
            case (
                ast.AnnAssign(target=ast.Name(id="DEPRECATED_MODELS"), value=ast.expr() as value)
                | ast.Assign(targets=[ast.Name(id="DEPRECATED_MODELS")], value=value)
            ):
                try:
                    table = ast.literal_eval(value)
                except ValueError:
                    return {}
                return {str(k): str(v) for k, v in table.items()} if isinstance(table, dict) else {}
    return {}


async def _in_daemon_thread(work: Callable[[], Any]) -> Any:
    """`asyncio.to_thread`, but in a daemon thread: a server told to exit while the client
    is still being built (by the warm-up) exits at once instead of waiting for it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # the waiter was cancelled
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def run() -> None:
        value, error = None, None
        try:
            value = work()
        except BaseException as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, name="coder-http-import", daemon=True).start()
    return await future


class AnthropicProvider:
    """`Provider` for the Anthropic Messages API (see the module docstring)."""

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        max_attempts: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 8.0,
        max_retry_after: float = 300.0,
        jitter: float = 0.25,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        catalog: ModelCatalog | None = None,
        allow_insecure: bool = False,
        custom_headers: dict[str, str] | None = None,
        platform: Any = None,
        name: str | None = None,
    ) -> None:
        self.catalog = catalog if catalog is not None else ModelCatalog()
        self.api_key = api_key
        self.auth_token = auth_token
        self.base_url = base_url
        self.max_attempts = max(1, max_attempts)
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_retry_after = max_retry_after
        self.jitter = jitter
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.allow_insecure = allow_insecure  # an http:// base URL on another host gets the key
        self.custom_headers = dict(custom_headers or {})  # ANTHROPIC_CUSTOM_HEADERS, on every request
        self.platform = platform  # Bedrock or Vertex (llm/platforms.py); None: Anthropic's own API
        self.name = name or (platform.name if platform is not None else "anthropic")
        self._client: MessagesClient | None = None
        self._client_lock = threading.Lock()
        self._encoder = CarryingEncoder()  # a text UTF-8 cannot carry goes shown (protocol/wiretext.py)
        self._messages = MessageCache()  # the last request's messages in API form

    # -- client
    async def prepare(self) -> None:
        """Build the HTTP client (aiohttp's import, in a thread, so the event loop is not
        blocked). The server's warm-up calls it at `initialized` (`coder_ls.lsp.warmup`)."""
        if self._client is None:
            await _in_daemon_thread(self._get_client)

    def _get_client(self) -> MessagesClient:
        with self._client_lock:  # the warm-up's thread and a first turn may race here
            if self._client is None:
                from coder_ls import __version__

                client = MessagesClient(
                    api_key=self.api_key,
                    auth_token=self.auth_token,
                    base_url=self.base_url,
                    connect_timeout=self.connect_timeout,
                    read_timeout=self.read_timeout,
                    user_agent=f"coder-ls/{__version__}",
                    allow_insecure=self.allow_insecure,
                    custom_headers=self.custom_headers,
                    platform=self.platform,
                )
                client.open()
                self.catalog.note_sdk_deprecations(sdk_deprecations())
                self._client = client
            return self._client

    async def refresh_models(self) -> None:
        """List the models this account can use (`GET /v1/models`, every page) into the
        catalog, unless its listing is fresh. A failure is kept in `catalog.last_error`:
        the built-in table then stands in."""
        if not self.catalog.stale() or self.platform is not None:
            return  # Bedrock and Vertex: the built-in table, their ids derived from it
        await self.prepare()
        client = self._get_client()
        raw: list[dict[str, Any]] = []
        params = {"limit": "100"}
        try:
            while True:
                answer = await self._unary(functools.partial(client.get, "/v1/models", params))
                page = msgspec.json.decode(answer, type=_ModelsPage)
                raw += page.data
                if not page.has_more or not page.last_id:
                    break
                params = {"limit": "100", "after_id": page.last_id}
        except (ProviderError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.catalog.last_error = exc.message if isinstance(exc, ProviderError) else f"bad listing: {exc}"
            log.info("models listing failed: %s (the built-in table is used)", self.catalog.last_error)
            return
        self.catalog.last_error = ""
        self.catalog.update(raw)

    async def count_tokens(self, request: ProviderRequest) -> int:
        """The input tokens of `request` as the API counts them (`POST /v1/messages/count_tokens`,
        free, no model call). Raises ProviderError."""
        await self.prepare()
        params = to_count_params(request, self._info(request.model))
        path = "/v1/messages/count_tokens"
        if self.platform is not None:
            path = self.platform.count_path()
            if path is None:
                raise ProviderError("bad_request", f"{self.name} does not count tokens here", False)
            params = {"anthropic_version": self.platform.version, **params}
        body, client = self._encoder.encode(params), self._get_client()
        answer = await self._unary(functools.partial(client.post, path, body))
        try:
            return msgspec.json.decode(answer, type=_Counted).input_tokens
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ProviderError("server", f"Anthropic sent a malformed token count: {exc}", False) from exc

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    # -- errors and delays
    def map_error(self, exc: BaseException) -> ProviderError:
        """Our `ProviderError` for anything an attempt raised (the client raises ours)."""
        if isinstance(exc, ProviderError):
            return exc
        return ProviderError("server", f"Unexpected error talking to Anthropic: {exc!r}", False)

    def _explain_missing_model(self, error: ProviderError, model: str) -> None:
        """Say in plain words that a deprecated model is gone, and which to use instead."""
        dep = self.catalog.deprecation(model)
        if dep is None:
            return
        error.message = f"{dep.describe()} ({error.message})"
        error.args = (error.message,)

    def backoff(self, attempt: int) -> float:
        """The delay after failed attempt `attempt` (1-based) without a retry-after."""
        delay = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return delay * (1.0 - self.jitter * random.random())

    def _delay(self, attempt: int, error: ProviderError) -> float | None:
        """How long to wait before the next attempt: the server's `retry-after` when it
        is positive (zero or less says nothing: the backoff then, as the SDK does), else
        the backoff; None when the server asks for longer than `max_retry_after` (a
        turn that sits for minutes without a word is worse than saying when to retry)."""
        if error.retry_after is not None and error.retry_after > 0:
            return error.retry_after if error.retry_after <= self.max_retry_after else None
        return self.backoff(attempt)

    def _give_up(self, error: ProviderError, attempt: int, delay: float | None) -> None:
        """Say why no attempt follows (in the error's message)."""
        if delay is None and error.retry_after is not None:
            error.message = f"{error.message} (the server asks to retry in {error.retry_after:.0f} s: try again then)"
        elif error.retryable and attempt > 1:
            error.message = f"{error.message} (gave up after {attempt} attempts)"
        error.args = (error.message,)

    async def _unary(self, call: Callable[[], Awaitable[bytes]]) -> bytes:
        """A request that is not streamed (a token count, a page of the models listing),
        retried as a streamed one is: the same kinds, hints, delays and attempts."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await call()
            except ProviderError as error:
                delay = self._delay(attempt, error) if error.retryable and attempt < self.max_attempts else None
                if delay is None:
                    self._give_up(error, attempt, delay)
                    raise
                log.info("anthropic: %s; retrying in %.1fs (attempt %d)", error.message, delay, attempt)
                await asyncio.sleep(delay)

    # -- streaming
    def _info(self, model: str) -> Any:
        """The model's limits: a Bedrock or Vertex id is looked up by the table's id behind it."""
        if self.platform is not None:
            from coder_ls.llm.platforms import table_id

            return self.catalog.info(table_id(model))
        return self.catalog.info(model)

    async def _attempt(
        self, body: bytes, timeout: Any = None, silence: float | None = None, path: str = "/v1/messages"
    ) -> AsyncIterator[StreamItem]:
        assembler = StreamAssembler()
        stream = self._get_client().stream(path, body, timeout, silence)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                for item in assembler.feed(event):
                    yield item
        if not assembler.stopped:
            raise ProviderError("connection", "The response stream ended before message_stop", True)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamItem]:
        await self.prepare()
        params = to_api_params(request, self._info(request.model), self._messages)
        path = "/v1/messages"
        if self.platform is not None:  # the model in the path, the platform's version in the body
            path, params = self.platform.stream_path(request.model), self.platform.body(params)
        body = self._encoder.encode(params)
        timeout = None  # the longest silence on this response (requestTimeoutSeconds), else the client's
        if request.timeout_seconds:
            timeout = self._get_client().timeout(request.timeout_seconds)
        attempt = 0
        while True:
            attempt += 1
            emitted = False
            try:
                async for item in self._attempt(body, timeout, request.timeout_seconds, path):
                    if not isinstance(item, Usage | Stop):
                        emitted = True
                    yield item
                return
            except Exception as exc:  # CancelledError / GeneratorExit are not Exceptions
                cause: BaseException = exc
                error = self.map_error(exc)
                if not isinstance(exc, ProviderError) and error.kind not in ("rate_limit", "overloaded"):
                    log.debug("anthropic attempt %d failed", attempt, exc_info=exc)
            delay = self._delay(attempt, error) if error.retryable and attempt < self.max_attempts else None
            if delay is None:
                if error.status == 404:  # a model past its end of life, most likely
                    self._explain_missing_model(error, request.model)
                self._give_up(error, attempt, delay)
                if error is cause:
                    raise error
                raise error from cause
            log.info("anthropic: %s; retrying in %.1fs (attempt %d)", error.message, delay, attempt)
            if emitted:  # the partial output already yielded is void: consumers drop it
                yield Restart(reason=error.message)
            yield Retrying(attempt=attempt, delay_seconds=round(delay, 3), reason=error.message)
            await asyncio.sleep(delay)
