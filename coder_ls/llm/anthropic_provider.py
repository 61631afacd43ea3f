"""The Anthropic provider: the streaming Messages API through the official SDK.

The SDK (`import anthropic` takes more than a second) is imported lazily, in a
worker thread, the first time a turn needs it (or on `prepare()`), never when this
module is imported.

The SDK's own retries are off (`max_retries=0`): this provider retries rate limits
(429), overloads (529, or an `overloaded_error` event mid-stream), server errors
(5xx, 408, 409) and connection failures (including a stream dropped mid-body) with
exponential backoff (1, 2, 4, 8 s by default, capped, with jitter, at most 5
attempts), honouring `retry-after-ms` / `retry-after` when the server sends them.
A `Retrying` item is yielded before each sleep, preceded by a `Restart` when the
failed attempt had already yielded output. Authentication (401/403) and bad
requests are not retried.

The request body is encoded once with msgspec and posted as bytes (`_open_stream`):
`messages.create` would walk and copy the whole body (every message of the conversation)
before its own JSON encoding, a cost that grows with each step of a turn.

Cancellation: the stream runs in the consumer's task, so cancelling that task (or
closing the iterator) interrupts the HTTP read or the backoff sleep at once; the
HTTP response is closed in a `finally`, which closes the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import inspect
import logging
import random
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import msgspec

from coder_ls.llm.anthropic_convert import StreamAssembler, to_api_params, to_count_params
from coder_ls.llm.base import (
    ErrorKind,
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

__all__ = ["AnthropicProvider", "retry_after_seconds"]

log = logging.getLogger(__name__)

_SDK: Any = None  # the `anthropic` module once imported
_HTTPX: Any = None  # the HTTP library the SDK uses (httpx2, or httpx for older SDKs)
JSON_HEADERS = {"Content-Type": "application/json"}


async def _open_stream(client: Any, params: dict[str, Any], body: bytes | None, timeout: Any = None) -> Any:
    """`client.messages.create(**params)` (params hold `stream: True`), or, given `body`
    (`params` encoded by us), the same request and the same typed stream of events without
    the SDK's walk of the body (it copies every nested dict and list, looking for file
    inputs we never send). `timeout`: this request's (an httpx `Timeout`), else the client's."""
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    if body is None:
        return await client.messages.create(**params, **options)
    sdk = _SDK
    return await client.post(
        "/v1/messages",
        cast_to=sdk.types.Message,
        content=body,
        options={"headers": JSON_HEADERS, **options},
        stream=True,
        stream_cls=sdk.AsyncStream[sdk.types.RawMessageStreamEvent],
    )


def _import_sdk() -> tuple[Any, Any]:
    global _SDK, _HTTPX
    if _SDK is None:
        import anthropic

        httpx_mod: Any
        try:
            import httpx2

            httpx_mod = httpx2
        except ImportError:  # an SDK built on httpx
            import httpx

            httpx_mod = httpx
        # Model aliases we offer may be flagged as deprecated by a newer SDK; the
        # user chose the model, the warning is noise in the transcript and logs.
        warnings.filterwarnings(
            "ignore", message=r"The model '.*' is deprecated", category=DeprecationWarning
        )
        # Likewise a thinking budget the user configured for a model that prefers adaptive.
        warnings.filterwarnings("ignore", message=r"Using Claude with .* 'thinking.type=enabled' is deprecated")
        _HTTPX = httpx_mod
        _SDK = anthropic
    return _SDK, _HTTPX


def _sdk_deprecations() -> dict[str, str]:
    """The SDK's own end-of-life dates (`anthropic._data.DEPRECATED_MODELS`), if it has them."""
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:  # an SDK without the table
        return {}
    return dict(DEPRECATED_MODELS)


async def _in_daemon_thread(work: Callable[[], Any]) -> Any:
    """`asyncio.to_thread`, but in a daemon thread: a server told to exit while the SDK is
    still being imported (by the warm-up) exits at once instead of waiting for it."""
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

    threading.Thread(target=run, name="coder-sdk-import", daemon=True).start()
    return await future


def retry_after_seconds(headers: Mapping[str, str] | Any, now: float | None = None) -> float | None:
    """`retry-after-ms`, else `retry-after` (seconds, fractional allowed, or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


_TYPE_KINDS: dict[str, tuple[ErrorKind, bool]] = {
    "authentication_error": ("auth", False),
    "permission_error": ("auth", False),
    "rate_limit_error": ("rate_limit", True),
    "overloaded_error": ("overloaded", True),
    "api_error": ("server", True),
    "timeout_error": ("connection", True),
    "invalid_request_error": ("bad_request", False),
    "not_found_error": ("bad_request", False),
    "request_too_large": ("bad_request", False),
}


def _status_kind(status: int, error_type: str | None) -> tuple[ErrorKind, bool]:
    if status in (401, 403):
        return "auth", False
    if status == 429:
        return "rate_limit", True
    if status == 529:
        return "overloaded", True
    if status == 408:
        return "connection", True
    if status == 409 or status >= 500:
        return "server", True
    if status < 400 and error_type in _TYPE_KINDS:  # an `error` event inside a 200 stream
        return _TYPE_KINDS[error_type]
    if status < 400:
        return "server", True
    return "bad_request", False


def _status_message(kind: ErrorKind, status: int, error_type: str | None, detail: str) -> str:
    code = f"{status} {error_type}" if error_type else str(status)
    if status < 400:
        code = error_type or "stream error"
    tail = f": {detail}" if detail else ""
    if kind == "auth" and status != 403:
        return f"Anthropic rejected the API key ({code}): check ANTHROPIC_API_KEY{tail}"
    if kind == "auth":
        return f"Anthropic refused the request ({code}){tail}"
    if kind == "rate_limit":
        return f"Rate limited by Anthropic ({code})"
    if kind == "overloaded":
        return f"Anthropic is overloaded ({code})"
    if kind in ("server", "connection"):
        return f"Anthropic server error ({code}){tail}"
    if status == 404:
        return f"Unknown model or endpoint ({code}){tail}"
    return f"Anthropic rejected the request ({code}){tail}"


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
        max_retry_after: float = 60.0,
        jitter: float = 0.25,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        catalog: ModelCatalog | None = None,
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
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._raw_body = False
        self._encoder = msgspec.json.Encoder()
        self._messages = MessageCache()  # the last request's messages in API form

    # -- client
    async def prepare(self) -> None:
        """Import the SDK (in a thread, so the event loop is not blocked) and build the client.
        The server's warm-up calls it once the server is idle (`coder_ls.lsp.warmup`)."""
        if self._client is None:
            await _in_daemon_thread(self._get_client)

    def _get_client(self) -> Any:
        with self._client_lock:  # the warm-up's thread and a first turn may race here
            return self._build_client()

    def _build_client(self) -> Any:
        if self._client is None:
            sdk, httpx_mod = _import_sdk()
            self.catalog.note_sdk_deprecations(_sdk_deprecations())
            self._client = sdk.AsyncAnthropic(
                api_key=self.api_key,
                auth_token=self.auth_token,
                base_url=self.base_url,
                max_retries=0,
                timeout=httpx_mod.Timeout(self.read_timeout, connect=self.connect_timeout),
            )
            # an SDK whose `post` takes no raw `content` gets `messages.create`
            self._raw_body = "content" in inspect.signature(self._client.post).parameters
        return self._client

    async def refresh_models(self) -> None:
        """List the models this account can use (`GET /v1/models`, every page) into the
        catalog, unless its listing is fresh. A failure is kept in `catalog.last_error`:
        the built-in table then stands in."""
        if not self.catalog.stale():
            return
        await self.prepare()
        try:
            raw = [m.to_dict(mode="json") async for m in self._client.models.list(limit=100)]
        except Exception as exc:
            self.catalog.last_error = self.map_error(exc).message
            log.info("models listing failed: %s (the built-in table is used)", self.catalog.last_error)
            return
        self.catalog.last_error = ""
        self.catalog.update(raw)

    async def count_tokens(self, request: ProviderRequest) -> int:
        """The input tokens of `request` as the API counts them (`POST /v1/messages/count_tokens`,
        free, no model call). Raises ProviderError."""
        await self.prepare()
        params = to_count_params(request, self.catalog.info(request.model))
        try:
            counted = await self._client.messages.count_tokens(**params)
        except Exception as exc:
            raise self.map_error(exc) from exc
        return int(counted.input_tokens)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # -- errors and delays
    def map_error(self, exc: BaseException) -> ProviderError:
        """Our `ProviderError` for an SDK or transport exception."""
        if isinstance(exc, ProviderError):
            return exc
        sdk, httpx_mod = _import_sdk()
        if isinstance(exc, sdk.APIStatusError):
            status = int(exc.status_code)
            error_type = getattr(exc, "type", None)
            detail = getattr(exc, "api_message", None) or ""
            body = exc.body if isinstance(exc.body, dict) else {}
            if not error_type and isinstance(body.get("error"), dict):
                error_type = body["error"].get("type")
                detail = detail or body["error"].get("message", "")
            kind, retryable = _status_kind(status, error_type)
            return ProviderError(
                kind,
                _status_message(kind, status, error_type, str(detail)),
                retryable,
                status=status,
                retry_after=retry_after_seconds(exc.response.headers) if status >= 400 else None,
            )
        if isinstance(exc, sdk.APIConnectionError | httpx_mod.TransportError):
            where = f" ({self.base_url})" if self.base_url else ""
            cause = exc.__cause__ or exc
            if isinstance(exc, sdk.APITimeoutError | httpx_mod.TimeoutException) or "Timeout" in type(cause).__name__:
                what = "connecting" if "Connect" in type(cause).__name__ else "no response"
                return ProviderError("connection", f"Anthropic timed out{where}: {what} ({type(cause).__name__})", True)
            return ProviderError(
                "connection", f"Connection to Anthropic failed{where}: {str(cause) or type(cause).__name__}", True
            )
        if isinstance(exc, sdk.APIError):
            return ProviderError("server", f"Anthropic API error: {exc}", False)
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

    def _delay(self, attempt: int, error: ProviderError) -> float:
        if error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after)
        return self.backoff(attempt)

    # -- streaming
    async def _attempt(self, params: dict[str, Any], timeout: Any = None) -> AsyncIterator[StreamItem]:
        client = self._get_client()
        body = self._encoder.encode(params) if self._raw_body else None
        stream = await _open_stream(client, params, body, timeout)
        assembler = StreamAssembler()
        try:
            async for event in stream:
                for item in assembler.feed(event):
                    yield item
        finally:
            await stream.close()
        if not assembler.stopped:
            raise ProviderError("connection", "The response stream ended before message_stop", True)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamItem]:
        await self.prepare()
        params = to_api_params(request, self.catalog.info(request.model), self._messages)
        timeout = None  # the longest silence on this response (requestTimeoutSeconds), else the client's
        if request.timeout_seconds:
            timeout = _HTTPX.Timeout(request.timeout_seconds, connect=self.connect_timeout)
        attempt = 0
        while True:
            attempt += 1
            emitted = False
            try:
                async for item in self._attempt(params, timeout):
                    if not isinstance(item, Usage | Stop):
                        emitted = True
                    yield item
                return
            except Exception as exc:  # CancelledError / GeneratorExit are not Exceptions
                cause: BaseException = exc
                error = self.map_error(exc)
                if not isinstance(exc, ProviderError) and error.kind not in ("rate_limit", "overloaded"):
                    log.debug("anthropic attempt %d failed", attempt, exc_info=exc)
            if not error.retryable or attempt >= self.max_attempts:
                if error.status == 404:  # a model past its end of life, most likely
                    self._explain_missing_model(error, request.model)
                if error.retryable and attempt > 1:
                    error.message = f"{error.message} (gave up after {attempt} attempts)"
                    error.args = (error.message,)
                if error is cause:
                    raise error
                raise error from cause
            delay = self._delay(attempt, error)
            log.info("anthropic: %s; retrying in %.1fs (attempt %d)", error.message, delay, attempt)
            if emitted:  # the partial output already yielded is void: consumers drop it
                yield Restart(reason=error.message)
            yield Retrying(attempt=attempt, delay_seconds=round(delay, 3), reason=error.message)
            await asyncio.sleep(delay)
