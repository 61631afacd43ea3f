"""An HTTP endpoint on 127.0.0.1 that answers with exactly the bytes a test gives it.

Unlike `anthropic_server.FakeAnthropicServer` (a model of the API), this one models
nothing: a test says, per method and path, the bytes of each answer (status line and
headers included), or a function of the request that yields them piece by piece (a
300 MB body is streamed, never held). Every request is recorded with its headers, so a
test can check what a second server (the target of a redirect, a proxy) received.

    with RawEndpoint() as a, RawEndpoint() as b:
        a.route("POST", "/v1/messages", redirect(307, f"{b.url}/v1/messages"))
        ...
        assert b.requests == []

Answers are consumed in order; the last one repeats. A route whose path ends in `*`
takes every path that begins so (`/model/*`). An unrouted request gets a 404
with an API error body. `sent` counts the body bytes written; `disconnects` the answers
the client left before their end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from anthropic_sse import REASONS, build_events

__all__ = [
    "RawEndpoint",
    "RawRequest",
    "chunked",
    "http_head",
    "json_answer",
    "redirect",
    "sse_answer",
    "sse_bytes",
]


@dataclass
class RawRequest:
    method: str
    target: str  # as sent: a path, or an absolute URL when the endpoint was used as a proxy
    headers: dict[str, str]  # lower-cased names
    body: bytes
    time: float = field(default_factory=time.monotonic)

    @property
    def path(self) -> str:
        if self.target.startswith(("http://", "https://")):
            from urllib.parse import urlsplit

            return urlsplit(self.target).path
        return self.target.split("?", 1)[0]

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


Pieces = bytes | Iterable[bytes] | AsyncIterator[bytes]
Answer = bytes | Callable[[RawRequest], Pieces]


def http_head(status: int, headers: dict[str, str] | list[tuple[str, str]] | None = None) -> bytes:
    items = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}", *(f"{k}: {v}" for k, v in items)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def json_answer(status: int, payload: Any, headers: dict[str, str] | None = None) -> bytes:
    body = json.dumps(payload).encode()
    head = {"content-type": "application/json", "content-length": str(len(body)), **(headers or {})}
    return http_head(status, head) + body


def api_error(status: int, error_type: str, message: str = "fake", headers: dict[str, str] | None = None) -> bytes:
    return json_answer(status, {"type": "error", "error": {"type": error_type, "message": message}}, headers)


def redirect(status: int, location: str) -> bytes:
    return http_head(status, {"location": location, "content-length": "0"})


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n" if data else b""


def chunked(pieces: Iterable[bytes], headers: dict[str, str] | None = None, status: int = 200) -> Iterator[bytes]:
    """A chunked answer: its head, each piece as a chunk, the last chunk."""
    head = {"content-type": "text/event-stream", "transfer-encoding": "chunked", **(headers or {})}
    yield http_head(status, head)
    for piece in pieces:
        yield chunk(piece)
    yield b"0\r\n\r\n"


def sse_bytes(events: Iterable[tuple[str, Any]]) -> bytes:
    """`event:`/`data:` blocks; a `bytes` data is sent as it is (not JSON-encoded)."""
    out = b""
    for name, data in events:
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        out += b"event: " + name.encode() + b"\ndata: " + raw + b"\n\n"
    return out


def sse_answer(spec: dict[str, Any] | None = None, *, model: str = "claude-sonnet-5-5") -> bytes:
    """A whole streamed reply (anthropic_sse.build_events) with a content-length."""
    body = sse_bytes(build_events(spec or {"text": "Hello."}, model))
    return http_head(200, {"content-type": "text/event-stream", "content-length": str(len(body))}) + body


class RawEndpoint:
    """See the module docstring."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host, self.port = host, 0
        self.requests: list[RawRequest] = []
        self.sent = 0
        self.disconnects = 0
        self._routes: dict[tuple[str, str], list[Answer]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def route(self, method: str, path: str, *answers: Answer) -> RawEndpoint:
        with self._lock:
            self._routes[(method, path)] = list(answers)
        return self

    def requests_to(self, path: str) -> list[RawRequest]:
        return [r for r in self.requests if r.path == path]

    # -- running
    def __enter__(self) -> RawEndpoint:
        self._thread = threading.Thread(target=self._run, name="raw-endpoint", daemon=True)
        self._thread.start()
        if not self._ready.wait(5):
            raise RuntimeError("raw endpoint did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        server = loop.run_until_complete(asyncio.start_server(self._client, self.host, 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    def _answer_for(self, request: RawRequest) -> Answer:
        with self._lock:
            answers = self._routes.get((request.method, request.path))
            if answers is None:  # a route whose path ends in `*` takes every path it begins
                answers = next(
                    (a for (m, p), a in self._routes.items()
                     if m == request.method and p.endswith("*") and request.path.startswith(p[:-1])),
                    None,
                )  # fmt: skip
            if not answers:
                return api_error(404, "not_found_error", f"no route {request.path}")
            return answers.pop(0) if len(answers) > 1 else answers[0]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await self._read(reader)
                if request is None:
                    break
                self.requests.append(request)
                answer = self._answer_for(request)
                pieces = answer(request) if callable(answer) else answer
                if not await self._write(writer, pieces):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _write(self, writer: asyncio.StreamWriter, pieces: Pieces) -> bool:
        try:
            if isinstance(pieces, bytes):
                writer.write(pieces)
                self.sent += len(pieces)
                await writer.drain()
                return True
            if hasattr(pieces, "__aiter__"):
                async for piece in pieces:  # type: ignore[union-attr]
                    writer.write(piece)
                    self.sent += len(piece)
                    await writer.drain()
            else:
                for piece in pieces:  # type: ignore[union-attr]
                    writer.write(piece)
                    self.sent += len(piece)
                    await writer.drain()
            return True
        except (ConnectionError, OSError):
            self.disconnects += 1
            return False

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> RawRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = b""
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                data = await reader.readexactly(size + 2)
                if size == 0:
                    break
                body += data[:-2]
        return RawRequest(method, target, headers, body)
