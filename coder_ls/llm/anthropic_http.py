"""The Messages API over HTTP: a small client of our own on `aiohttp`.

Why not the SDK's client: `import anthropic` builds ~900 pydantic models (0.9–1.3 s here,
1–3 s on a small machine), so a prompt sent right after `initialized` waited a second for
its first request; and each stream event became a pydantic object we only read two
fields of. What the SDK did for us is small and already ours: we encode the body
(msgspec), retry and back off (`anthropic_provider`), and map errors to `ProviderError`.
This module adds the rest: the headers (`x-api-key` or a bearer token, `anthropic-version`),
one connection pool, the server-sent events read into typed structs (`StreamEvent`), and
an HTTP error read into a `ProviderError`.

Credentials never leave their origin (contract section 21): a redirect is followed only
within the base URL's origin (same scheme, host and port; a POST only on 307/308, which
keep its body); one to another origin, or from https to http, is not followed at all and
fails the request with a message naming where it pointed. Following it without the
credential (what the SDK's httpx does) would still hand the conversation to an origin the
user never chose, and a real API behind it answers 401 anyway. And a base URL in plain
`http://` to a host that is not this machine is refused before anything is sent
(`insecure_base_url`), unless the user allows it (`allowInsecureBaseUrl`).

Why aiohttp and not httpx2 (the SDK's own HTTP library): one streamed request and its
events cost 0.45 ms with aiohttp (its parser is compiled) against 1.7 ms with httpx2,
measured on the same fake endpoint; a third of the agent's bash step was httpx2. Its
import (~0.15 s) runs in the warm-up's thread. Proxies come from the environment
(`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`), as the SDK honoured them (`proxy_for`).

No import of aiohttp at module import: `MessagesClient.open()` does it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import msgspec

from coder_ls.llm.base import ErrorKind, ProviderError
from coder_ls.llm.endpoint import (
    insecure_base_url,
    is_loopback,
    parse_custom_headers,
    proxy_for,
    same_origin,
    show_origin,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "MessagesClient",
    "StreamEvent",
    "http_error",
    "insecure_base_url",
    "is_loopback",
    "parse_custom_headers",
    "retry_after_seconds",
    "same_origin",
]

# The API version the SDK we test against (anthropic 2.13) sends; the request shapes of
# `anthropic_convert` follow it.
API_VERSION = "2026-10-21"
DEFAULT_BASE_URL = "https://api.anthropic.com"
# Every read from the network is bounded (a gateway, a proxy or a mistyped base URL can
# send anything): an error body is read up to this much, the rest dropped with the connection
MAX_ERROR_BODY = 64 * 1024
MAX_EVENT_BYTES = 16 << 20  # one server-sent event (a server tool's result can be large)
# one streamed response, decompressed: 128K output tokens stream as ~6 MB of events, a
# server tool's result adds about a megabyte; past this it is not a reply (a ping bomb of
# 256 MB cost 19 s of CPU to decode, 64 MB costs a quarter of that)
MAX_STREAM_BYTES = 64 << 20
MAX_BODY_BYTES = 16 << 20  # a JSON answer (the models listing, a token count)
MAX_BODY_SECONDS = 60.0  # reading an error body or a JSON answer, at most
MAX_RESPONSE_SECONDS = 3600.0  # one streamed response, at most, however it trickles
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


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
    anything else the API adds is ignored. `content_block` stays plain JSON (a dict):
    the assembler checks the blocks it reads and keeps any other whole (opaque)."""

    type: str
    index: int = 0
    message: WireMessage | None = None
    content_block: Any = None
    delta: WireDelta | None = None
    usage: WireUsage | None = None
    error: WireError | None = None


class _LooseEvent(msgspec.Struct):
    """An event that did not fit `StreamEvent`, read again without shapes to tell a newer
    API (an event or delta type we do not know, whose fields reuse a name with another
    shape) from a broken one (a known type with a wrong shape)."""

    type: str
    index: Any = 0
    delta: Any = None


class _ErrorBody(msgspec.Struct):
    error: WireError | None = None


# What this client reads field by field (contract section 21: strict only where it must
# be); an event of any other type is passed over, a delta of another type too.
KNOWN_EVENTS = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
     "message_stop", "ping", "error"}
)  # fmt: skip
KNOWN_DELTAS = frozenset({"text_delta", "thinking_delta", "signature_delta", "input_json_delta"})

_EVENT = msgspec.json.Decoder(StreamEvent)
_LOOSE = msgspec.json.Decoder(_LooseEvent)
_ERROR = msgspec.json.Decoder(_ErrorBody)


def _malformed(exc: Exception) -> ProviderError:
    return ProviderError("server", f"Anthropic sent a malformed stream event: {exc}", True)


def decode_event(data: bytes) -> StreamEvent | None:
    """The event in `data`; None for one to pass over (a type this client does not know);
    a retryable `ProviderError` for a malformed one (not JSON, not UTF-8, a known type of
    the wrong shape)."""
    try:
        return _EVENT.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # msgspec: a ValueError for bad UTF-8
        first = exc
    try:
        loose = _LOOSE.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError):
        raise _malformed(first) from first
    if loose.type not in KNOWN_EVENTS:
        return None
    delta = loose.delta
    if loose.type == "content_block_delta" and isinstance(loose.index, int) and isinstance(delta, dict):
        kind = delta.get("type")
        if isinstance(kind, str) and kind not in KNOWN_DELTAS:
            return StreamEvent(type=loose.type, index=loose.index, delta=WireDelta(type=kind))
    raise _malformed(first) from first


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
    import email.utils  # an HTTP date: rare, and `email` is not light

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


def _status_message(
    kind: ErrorKind, status: int, error_type: str | None, detail: str, credential: str = "ANTHROPIC_API_KEY"
) -> str:
    code = f"{status} {error_type}" if error_type else str(status)
    if status < 400:
        code = error_type or "stream error"
    tail = f": {detail}" if detail else ""
    if kind == "auth" and (status != 403 or not credential.startswith("ANTHROPIC_")):
        what = "the API key" if credential == "ANTHROPIC_API_KEY" else "the credential"
        service = "Anthropic" if credential.startswith("ANTHROPIC_") else "The endpoint"
        return f"{service} rejected {what} ({code}): check {credential}{tail}"
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


def http_error(
    status: int, body: bytes, headers: Mapping[str, str] | None = None, credential: str = "ANTHROPIC_API_KEY"
) -> ProviderError:
    """The `ProviderError` for an API error: an HTTP status with its JSON error body, or
    (status 200) an `error` event inside a stream. `credential`: the variable the key
    came from, named in an authentication error."""
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
    hint = headers.get("x-should-retry") if headers is not None and status >= 400 else None
    if hint in ("true", "false"):  # the server says whether to retry: it knows best (as the SDK obeys)
        retryable = hint == "true"
    return ProviderError(
        kind,
        _status_message(kind, status, error_type, detail, credential),
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


class SseReader:
    """Server-sent events out of bytes however they are cut: the `data` of each complete
    event (its `data:` lines joined by newlines); LF, CRLF and CR line ends alike.

    Bounded and linear: each byte is looked at once (the unfinished line is kept apart,
    never searched again from the start); a line or an event over `max_event` bytes, or a
    stream over `max_total` bytes (after content-encoding is undone: a gzip bomb counts
    what it expands to), raises `ProviderError` at once instead of buffering it."""

    def __init__(self, max_event: int = MAX_EVENT_BYTES, max_total: int = MAX_STREAM_BYTES) -> None:
        self.max_event, self.max_total = max_event, max_total
        self.total = 0
        self.after_cr = False  # the last chunk ended in CR: a LF first in the next is its pair
        self._line = bytearray()  # the line not ended yet
        self._data = bytearray()  # the `data` lines of the event not ended yet, joined
        self._has_data = False  # a `data` line came (an empty one counts)

    def _too_large(self, what: str, limit: int) -> ProviderError:
        return ProviderError(
            "server",
            f"The endpoint sent {what} over {limit // (1 << 20)} MB: not read further "
            "(a proxy or gateway in the way, or ANTHROPIC_BASE_URL pointing elsewhere?)",
            False,
        )

    def feed(self, chunk: bytes) -> list[bytes]:
        self.total += len(chunk)
        if self.total > self.max_total:
            raise self._too_large("a response", self.max_total)
        if self.after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        if not chunk:
            return []
        self.after_cr = chunk.endswith(b"\r")
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        tail = lines.pop()  # what follows the last line end: the start of the next line
        out: list[bytes] = []
        if lines:
            if self._line:
                lines[0] = bytes(self._line) + lines[0]
                self._line.clear()
            for line in lines:
                if not line:
                    if self._has_data:
                        out.append(bytes(self._data))
                        self._data.clear()
                        self._has_data = False
                elif line.startswith(b"data:"):
                    value = line[6:] if line.startswith(b"data: ") else line[5:]
                    if len(self._data) + len(value) >= self.max_event:
                        raise self._too_large("one event", self.max_event)
                    if self._has_data:
                        self._data += b"\n"
                    self._data += value
                    self._has_data = True
                elif len(line) > self.max_event:
                    raise self._too_large("one line", self.max_event)
        if tail:
            if len(self._line) + len(tail) > self.max_event:
                raise self._too_large("one line", self.max_event)
            self._line += tail
        return out


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
        allow_insecure: bool = False,
        custom_headers: Mapping[str, str] | None = None,
        credential: str | None = None,
        platform: Any = None,
    ) -> None:
        # Bedrock or Vertex (`llm/platforms.py`): its base URL, its per-request credential
        # (a SigV4 signature, a refreshed token) and its stream framing
        self.platform = platform
        base_url = base_url or (platform.base_url if platform is not None else None)
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.allow_insecure = allow_insecure
        self.connect_timeout = connect_timeout
        self.headers = {
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            "user-agent": user_agent,
        }
        self.headers.update(custom_headers or {})  # ANTHROPIC_CUSTOM_HEADERS: a gateway routes by them
        # the variable the credential came from, named in an authentication error
        self.credential = credential or ("ANTHROPIC_API_KEY" if api_key or not auth_token else "ANTHROPIC_AUTH_TOKEN")
        if platform is not None:
            self.credential = platform.credential
            del self.headers["anthropic-version"]  # the body carries the platform's version
        elif api_key:
            self.headers["x-api-key"] = api_key
        elif auth_token:
            self.headers["authorization"] = f"Bearer {auth_token}"
        self._read_timeout = read_timeout
        self._aiohttp: Any = None
        # what a failure below HTTP raises: aiohttp's errors, timeouts and the socket's own
        # (an OSError, as TimeoutError is, can come through unwrapped)
        self._failures: tuple[type[BaseException], ...] = (OSError,)
        self._client: Any = None  # an aiohttp.ClientSession, made on the event loop
        self._proxy: str | None = None

    def open(self) -> None:
        """Import aiohttp (blocking, ~0.15 s: the provider runs it in a thread). The session
        itself is made on the event loop, at the first request."""
        if self._aiohttp is None:
            import aiohttp

            self._aiohttp = aiohttp
            self._failures = (aiohttp.ClientError, OSError)

    def timeout(self, read: float) -> Any:
        """A request timeout: `read` seconds of silence at most, the client's connect limit."""
        return self._aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout, sock_read=read)

    def _session(self) -> Any:
        if self._client is None:
            refused = None if self.allow_insecure else insecure_base_url(self.base_url)
            if refused is not None:
                raise ProviderError("config", refused, False)
            self.open()
            self._proxy = proxy_for(self.base_url)
            self._client = self._aiohttp.ClientSession(
                # a platform's headers go with each request to it, not to its token endpoint
                headers=self.headers if self.platform is None else None,
                timeout=self.timeout(self._read_timeout),
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    def url(self, path: str) -> str:
        """`path` under the base URL (a base with a path, a gateway's, keeps it)."""
        return f"{self.base_url}/{path.lstrip('/')}"

    def _redirect(self, method: str, url: str, status: int, location: str | None) -> str:
        """Where a redirect may be followed to: within the origin only (see the module
        docstring); else a `ProviderError` that says where it pointed."""
        from urllib.parse import urljoin

        if not location:
            raise ProviderError("server", f"The endpoint {self.base_url} answered {status} without a Location", True)
        target = urljoin(url, location)
        if not same_origin(target, url):
            raise ProviderError(
                "config",
                f"The endpoint {show_origin(url)} redirected the request to {show_origin(target)} ({status}); "
                "coder-ls does not follow a redirect to another origin: the API key stays where you sent it. "
                "If that is the right endpoint, set ANTHROPIC_BASE_URL to it.",
                False,
            )
        if method != "GET" and status not in (307, 308):  # a 301/302/303 turns a POST into a GET
            raise ProviderError(
                "config",
                f"The endpoint {self.base_url} answered {status} to a {method}: check ANTHROPIC_BASE_URL",
                False,
            )
        return target

    async def _send(self, method: str, path: str, body: bytes | None, timeout: Any) -> Any:
        """The response, its headers read; an HTTP error status raised as `ProviderError`."""
        session = self._session()
        options: dict[str, Any] = {"allow_redirects": False}
        if timeout is not None:
            options["timeout"] = timeout
        if self._proxy:
            options["proxy"] = self._proxy
        url = self.url(path)
        for hop in range(MAX_REDIRECTS + 1):
            target: Any = url
            if self.platform is not None:  # signed per request: the URL goes out as it was signed
                from yarl import URL

                signed = await self.platform.auth(method, url, body or b"", self._post_form)
                options["headers"] = {**self.headers, **signed}
                target = URL(url, encoded=True)
            try:
                response = await session.request(method, target, data=body, **options)
            except self._failures as exc:
                raise _transport_error(exc, self.base_url) from exc
            if response.status not in _REDIRECTS:
                break
            location = response.headers.get("location")
            response.release()
            if hop == MAX_REDIRECTS:
                raise ProviderError("config", f"The endpoint {self.base_url} redirected too many times", False)
            url = self._redirect(method, url, response.status, location)
        if response.status >= 300:
            try:
                raw = await self._read_bounded(response, MAX_ERROR_BODY, cut=True)
            except ProviderError:
                raw = b""
            except self._failures:
                raw = b""
            raise http_error(response.status, raw, response.headers, self.credential)
        return response

    async def _post_form(self, url: str, form: Mapping[str, str]) -> bytes:
        """POST a form (a token endpoint's), bounded like any answer; not redirected."""
        refused = None if self.allow_insecure else insecure_base_url(url, "the token endpoint")
        if refused is not None:
            raise ProviderError("config", refused, False)
        from urllib.parse import urlencode

        headers = {"content-type": "application/x-www-form-urlencoded", "user-agent": self.headers["user-agent"]}
        options: dict[str, Any] = {"allow_redirects": False, "headers": headers}
        if self._proxy:
            options["proxy"] = self._proxy
        try:
            response = await self._session().post(url, data=urlencode(form).encode(), **options)
        except self._failures as exc:
            raise _transport_error(exc, url) from exc
        if response.status >= 300:
            raw = await self._read_bounded(response, MAX_ERROR_BODY, cut=True)
            raise ProviderError(
                "auth", f"The token endpoint {show_origin(url)} refused ({response.status}): {raw[:200]!r}", False
            )
        return await self._read_bounded(response, MAX_BODY_BYTES, cut=False)

    async def _read_bounded(self, response: Any, limit: int, *, cut: bool) -> bytes:
        """The body, `limit` bytes at most within `MAX_BODY_SECONDS`; more is cut (`cut`)
        or a `ProviderError`. The connection is closed unless the body was read whole."""
        out = bytearray()
        whole = False
        try:
            async with asyncio.timeout(MAX_BODY_SECONDS):
                while len(out) <= limit:
                    piece = await response.content.read(limit + 1 - len(out))
                    if not piece:
                        whole = True
                        break
                    out += piece
        except TimeoutError:
            if not cut:
                raise ProviderError(
                    "connection", f"The endpoint took over {MAX_BODY_SECONDS:.0f} s to answer", True
                ) from None
        finally:
            if whole:
                response.release()
            else:
                response.close()
        if len(out) > limit and not cut:
            raise ProviderError("server", f"The endpoint answered over {limit >> 20} MB: not read further", False)
        return bytes(out[:limit])

    async def stream(
        self, path: str, body: bytes, timeout: Any = None, silence: float | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        """POST `body` (JSON with `"stream": true`) and yield its events. The connection goes
        back to the pool when the body was read to its end; closing the iterator before
        (an error, a cancel) closes the connection.

        Bounded (`SseReader`), and given up as stalled when `silence` seconds (else the
        client's read timeout) pass without a complete event, bytes or not: an endpoint
        that trickles a byte at a time never ends an event. `MAX_RESPONSE_SECONDS` caps it."""
        response = await self._send("POST", path, body, timeout)
        reader: Any = SseReader() if self.platform is None else self.platform.reader(MAX_EVENT_BYTES, MAX_STREAM_BYTES)
        finished = False
        limit = silence or self._read_timeout
        started = last = time.monotonic()
        try:
            async for chunk in response.content.iter_any():  # content-encoding undone
                found = reader.feed(chunk)
                now = time.monotonic()
                if found:
                    last = now
                elif now - last > limit:
                    raise ProviderError("connection", f"Anthropic timed out: no complete event for {limit:.0f} s", True)
                if now - started > MAX_RESPONSE_SECONDS:
                    raise ProviderError("connection", f"The response took over {MAX_RESPONSE_SECONDS:.0f} s", True)
                for data in found:
                    event = decode_event(data)
                    if event is None:
                        continue
                    if event.type == "error":
                        raise http_error(200, data, None, self.credential)
                    yield event
            finished = True
        except self._failures as exc:
            raise _transport_error(exc, self.base_url) from exc
        finally:
            if finished:
                response.release()
            else:
                response.close()

    async def _read(self, method: str, path: str, body: bytes | None) -> bytes:
        response = await self._send(method, path, body, None)
        try:
            return await self._read_bounded(response, MAX_BODY_BYTES, cut=False)
        except self._failures as exc:
            raise _transport_error(exc, self.base_url) from exc

    async def get(self, path: str, params: Mapping[str, str]) -> bytes:
        """GET `path` with a query; the JSON body's bytes."""
        from urllib.parse import urlencode

        return await self._read("GET", f"{path}?{urlencode(params)}" if params else path, None)

    async def post(self, path: str, body: bytes) -> bytes:
        """POST a JSON `body` (not streamed); the JSON answer's bytes."""
        return await self._read("POST", path, body)
