"""The Messages API over HTTP: a small client of our own on `httpx2`, the HTTP library the
official SDK itself uses.

Why not the SDK's client: `import anthropic` builds ~900 pydantic models (0.9–1.3 s here,
1–3 s on a small machine), so a prompt sent right after `initialized` waited a second for
its first request; and each stream event became a pydantic object we only read two
fields of. What the SDK did for us is small and already ours: we encode the body
(msgspec), retry and back off (`anthropic_provider`), and map errors to `ProviderError`.
This module adds the rest: the headers (`x-api-key` or a bearer token, `anthropic-version`),
one connection pool, the server-sent events read into typed structs (`StreamEvent`), and
an HTTP error read into a `ProviderError`. `httpx2` imports in ~60 ms (in the warm-up's
thread, like the SDK before it).

No import of httpx2 at module import: `MessagesClient.open()` does it.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import msgspec

from coder_ls.llm.base import ErrorKind, ProviderError

__all__ = [
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "MessagesClient",
    "StreamEvent",
    "http_error",
    "retry_after_seconds",
]

# The API version the SDK we test against (anthropic 2.13) sends; the request shapes of
# `anthropic_convert` follow it.
API_VERSION = "2026-10-21"
DEFAULT_BASE_URL = "https://api.anthropic.com"
MAX_ERROR_BODY = 64 * 1024


class WireUsage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class WireMessage(msgspec.Struct):
    usage: WireUsage | None = None


class WireBlock(msgspec.Struct):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None  # redacted thinking
    id: str = ""
    name: str = ""


class WireDelta(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    partial_json: str | None = None
    stop_reason: str | None = None
    stop_sequence: str | None = None


class WireError(msgspec.Struct):
    type: str = ""
    message: str = ""


class StreamEvent(msgspec.Struct):
    """One server-sent event of a streamed message, the fields `StreamAssembler` reads;
    anything else the API adds is ignored."""

    type: str
    index: int = 0
    message: WireMessage | None = None
    content_block: WireBlock | None = None
    delta: WireDelta | None = None
    usage: WireUsage | None = None
    error: WireError | None = None


class _ErrorBody(msgspec.Struct):
    error: WireError | None = None


_EVENT = msgspec.json.Decoder(StreamEvent)
_ERROR = msgspec.json.Decoder(_ErrorBody)


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


def http_error(status: int, body: bytes, headers: Mapping[str, str] | None = None) -> ProviderError:
    """The `ProviderError` for an API error: an HTTP status with its JSON error body, or
    (status 200) an `error` event inside a stream."""
    error_type: str | None = None
    detail = ""
    try:
        error = _ERROR.decode(body).error
    except msgspec.DecodeError:
        error = None
        detail = body[:200].decode("utf-8", "replace").strip()
    if error is not None:
        error_type, detail = error.type or None, error.message
    kind, retryable = _status_kind(status, error_type)
    return ProviderError(
        kind,
        _status_message(kind, status, error_type, detail),
        retryable,
        status=status if status >= 400 else None,
        retry_after=retry_after_seconds(headers) if status >= 400 and headers is not None else None,
    )


def _transport_error(exc: BaseException, base_url: str) -> ProviderError:
    """A `ProviderError` for a failure below HTTP (connect, read, timeout)."""
    name = type(exc).__name__
    if "Timeout" in name:
        what = "connecting" if "Connect" in name else "no response"
        return ProviderError("connection", f"Anthropic timed out ({base_url}): {what} ({name})", True)
    return ProviderError("connection", f"Connection to Anthropic failed ({base_url}): {str(exc) or name}", True)


def _events(buffer: bytearray, chunk: bytes) -> list[bytes]:
    """Append `chunk` to `buffer` and take out the `data` of every complete event."""
    buffer += chunk
    if b"\r" in buffer:  # CRLF or CR line ends; a CR last may be half of a CRLF: kept
        held = buffer.endswith(b"\r")
        text = bytes(buffer[:-1] if held else buffer).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer[:] = text + b"\r" if held else text
    out: list[bytes] = []
    while True:
        end = buffer.find(b"\n\n")
        if end < 0:
            return out
        block = bytes(buffer[:end])
        del buffer[: end + 2]
        data = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
        if data:
            out.append(b"\n".join(data))


class MessagesClient:
    """One connection pool to the Messages API (see the module docstring)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        auth_token: str | None,
        base_url: str | None,
        connect_timeout: float,
        read_timeout: float,
        user_agent: str,
    ) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.connect_timeout = connect_timeout
        self.headers = {
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            "user-agent": user_agent,
        }
        if api_key:
            self.headers["x-api-key"] = api_key
        elif auth_token:
            self.headers["authorization"] = f"Bearer {auth_token}"
        self._read_timeout = read_timeout
        self._httpx: Any = None
        self._client: Any = None

    def open(self) -> None:
        """Import httpx2 and build the pool (blocking: the provider runs it in a thread)."""
        if self._client is not None:
            return
        import httpx2

        self._httpx = httpx2
        self._client = httpx2.AsyncClient(
            base_url=self.base_url,
            headers=self.headers,
            timeout=self.timeout(self._read_timeout),
        )

    def timeout(self, read: float) -> Any:
        """An httpx2 timeout: `read` seconds of silence at most, the client's connect limit."""
        return self._httpx.Timeout(read, connect=self.connect_timeout)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _send(self, method: str, path: str, body: bytes | None, timeout: Any, stream: bool) -> Any:
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        request = self._client.build_request(method, path, content=body, **options)
        try:
            response = await self._client.send(request, stream=stream)
        except self._httpx.TransportError as exc:
            raise _transport_error(exc, self.base_url) from exc
        if response.status_code >= 400:
            try:
                raw = await response.aread() if stream else response.content
            except self._httpx.TransportError:
                raw = b""
            finally:
                if stream:
                    await response.aclose()
            raise http_error(response.status_code, raw[:MAX_ERROR_BODY], response.headers)
        return response

    async def stream(self, path: str, body: bytes, timeout: Any = None) -> AsyncGenerator[StreamEvent, None]:
        """POST `body` (JSON with `"stream": true`) and yield its events; the response is
        closed when the iterator ends or is closed (cancelling closes the connection)."""
        response = await self._send("POST", path, body, timeout, stream=True)
        buffer = bytearray()
        try:
            async for chunk in response.aiter_raw():
                for data in _events(buffer, chunk):
                    try:
                        event = _EVENT.decode(data)
                    except msgspec.DecodeError as exc:
                        raise ProviderError("server", f"Anthropic sent a malformed stream event: {exc}", True) from exc
                    if event.type == "error":
                        raise http_error(200, data)
                    yield event
        except self._httpx.TransportError as exc:
            raise _transport_error(exc, self.base_url) from exc
        finally:
            await response.aclose()

    async def get(self, path: str, params: Mapping[str, str]) -> bytes:
        """GET `path` with a query; the JSON body's bytes."""
        from urllib.parse import urlencode

        query = f"{path}?{urlencode(params)}" if params else path
        response = await self._send("GET", query, None, None, stream=False)
        return bytes(response.content)

    async def post(self, path: str, body: bytes) -> bytes:
        """POST a JSON `body` (not streamed); the JSON answer's bytes."""
        response = await self._send("POST", path, body, None, stream=False)
        return bytes(response.content)
