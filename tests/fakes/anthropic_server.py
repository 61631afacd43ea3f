"""A scripted fake of the Anthropic Messages API for tests (stdlib only, 127.0.0.1 only).

From a test (the server runs its own asyncio loop in a daemon thread):

    from anthropic_server import FakeAnthropicServer, reply, status_error

    with FakeAnthropicServer([status_error(429, retry_after=0.2), reply("Hello")]) as server:
        provider = AnthropicProvider(api_key="test", base_url=server.url)
        ...
        server.requests[-1].body["messages"]       # every request, JSON-decoded
        server.wait_for_disconnect(timeout=1.0)    # a client went away mid-stream

As a process (for end-to-end tests that point a real coder-ls at it with
ANTHROPIC_BASE_URL):

    python tests/fakes/anthropic_server.py --script script.json [--port 0] [--record requests.jsonl]

prints one line, `http://127.0.0.1:<port>`, then serves until SIGTERM/SIGINT.

Script: `{"responses": [RESPONSE, ...], "default": RESPONSE?}` (or a bare list). Each
`POST /v1/messages` consumes the next RESPONSE; when the queue is empty the
`default` (else a plain text reply "(fake server: script exhausted)") answers.
A RESPONSE (all keys optional):

    {"text": "Hello" | ["Hel", "lo"],          # one text block; a list = the exact deltas
     "thinking": "..." | [...], "signature": "sig",   # a thinking block first
     "redactedThinking": "data",               # a redacted_thinking block
     "toolCalls": [{"id": "toolu_1", "name": "read", "input": {...}}],
     "webSearch": {"id": "srvtoolu_1", "query": "...", "results": [{"url": ..., "title": ...}]},
                                               # a web search the server ran (anthropic_server_tools.py)
     "stopReason": "end_turn",                 # default: tool_use if toolCalls else end_turn
     "usage": {"input_tokens": 10, "output_tokens": 5,
               "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
     "delayMs": 0,                             # sleep before each SSE event (a slow stream)
     "status": 429, "retryAfter": 0.2,         # an HTTP error instead (429, 529, 500, 401, ...)
     "errorType": "rate_limit_error", "message": "...",
     "fault": "drop" | "hang" | "hang_headers" | "error_event" | "garbage_event", "afterEvents": 3,
     "when": "text"}                           # routing: only for a request whose messages hold it

Routing: a request takes the first queued RESPONSE whose `when` occurs in its messages
(as JSON), or that has no `when`; concurrent requests (subagents) get theirs by content.
`max_in_flight` is the most `/v1/messages` requests being answered at once.

Faults: `drop` sends `afterEvents` SSE events then kills the connection mid-body;
`hang` sends `afterEvents` events then waits until the client disconnects (recorded:
`server.disconnects`, `wait_for_disconnect()`); `hang_headers` never sends the
response headers and waits for the client to disconnect; `error_event` sends an SSE `error`
event (type `errorType`, default overloaded_error) after `afterEvents` events;
`garbage_event` sends an event whose data is not JSON there (a proxy's or a torn body).
Models: `GET /v1/models` lists `models` (default: the current models of
anthropic_models.py, with lifecycle, limits and capabilities) or fails with
`models_status`; a `/v1/messages` request naming a retired model gets the real 404, and
one whose thinking type, effort or `max_tokens` its model refuses gets the real 400
(anthropic_models.check_model).
Token counting: `POST /v1/messages/count_tokens` answers `{"input_tokens": N}` (a
deterministic N, anthropic_count.py), refusing what the real endpoint refuses (the
output half of a request: `max_tokens`, `stream`, ...; bad messages or tools);
`server.count_requests`, `server.counted` (the answers); `server.count_status` makes it
answer that HTTP error instead.
Control endpoints: `GET /health`, `GET /_requests` (recorded requests as JSON),
`GET /_disconnects`, `GET /_rejections`, `POST /_script` (append responses: a list or
{"responses": [...]}).

Strict by default: a `/v1/messages` request the real API would refuse (see
anthropic_rules.py: unpaired tool_use/tool_result, empty text, > 4 cache_control
breakpoints, bad thinking settings, missing fields, bad tool names/schemas) gets the
real HTTP 400 `{"type":"error","error":{"type":"invalid_request_error","message":...}}`
without consuming the script, and is recorded in `server.rejections` (message, body).
End-to-end fixtures fail a test whose run saw a rejection it did not expect.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anthropic_count import check_count_request, count_tokens
from anthropic_models import check_model, listing
from anthropic_rules import check_headers, check_request
from anthropic_server_tools import check_server_blocks, remember, search_blocks, search_specs
from anthropic_sse import (
    ERROR_TYPES,
    EXHAUSTED_TEXT,
    REASONS,
    build_events,
    build_message,
    drop,
    hang,
    reply,
    status_error,
)

FAKES_DIR = Path(__file__).resolve().parent

__all__ = [
    "EXPECT_REJECTION",
    "FAKES_DIR",
    "FakeAnthropicServer",
    "RecordedRequest",
    "build_events",
    "build_message",
    "check_rejections",
    "drop",
    "hang",
    "load_script",
    "reply",
    "status_error",
]


# ------------------------------------------------------------------ the server


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # JSON-decoded body, or None
    time: float = field(default_factory=time.monotonic)  # when its last byte was read
    via_proxy: str | None = None  # the absolute URL asked for, when it came as a proxy's request

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "headers": self.headers, "body": self.body}


class _Disconnected(Exception):
    pass


class FakeAnthropicServer:
    """See the module docstring. Thread-safe: tests call `push`, read `requests`, etc."""

    def __init__(
        self,
        responses: list[dict[str, Any]] | None = None,
        *,
        default: dict[str, Any] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record_file: Path | None = None,
        strict: bool = True,
        models: list[dict[str, Any]] | None = None,
        models_status: int = 200,
        models_delay: float = 0.0,
    ) -> None:
        self.host, self.port = host, port
        # `GET /v1/models`: this listing (default: the current models, anthropic_models.py),
        # or an error with `models_status` (e.g. 500: the listing fails, the fallback is used)
        self.models = listing() if models is None else models
        self.models_status = models_status
        self.models_delay = models_delay  # seconds before the listing is answered (a slow Models API)
        self.default = default or reply(EXHAUSTED_TEXT)
        self.record_file = record_file
        self.requests: list[RecordedRequest] = []
        self.disconnects: list[float] = []  # monotonic times when a client left mid-stream
        self.outcomes: list[str] = []  # per /v1/messages: completed, error, dropped, disconnected
        self.client_disconnected = threading.Event()
        # Requests the real API would refuse (HTTP 400 invalid_request_error): (message, body)
        self.strict = strict
        self.rejections: list[tuple[str, Any]] = []
        self.counted: list[int] = []  # the answer to each accepted count_tokens request
        self.count_status = 200  # count_tokens answers this error instead (e.g. 529) when not 200
        self._queue: list[dict[str, Any]] = list(responses or [])
        # the server tools' blocks answered so far, by type and id: a replay must carry them unchanged
        self.server_blocks: dict[str, dict[str, Any]] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ready = threading.Event()

    # -- control
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def push(self, *responses: dict[str, Any]) -> None:
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.split("?", 1)[0] == "/v1/messages"]

    @property
    def count_requests(self) -> list[RecordedRequest]:
        """`POST /v1/messages/count_tokens` requests (not in `message_requests`)."""
        return [r for r in self.requests if r.path.split("?", 1)[0] == "/v1/messages/count_tokens"]

    def take_rejections(self) -> list[tuple[str, Any]]:
        """The requests refused since the last call (and forget them)."""
        with self._lock:
            taken, self.rejections = self.rejections, []
        return taken

    def wait_for_disconnect(self, timeout: float = 2.0) -> bool:
        return self.client_disconnected.wait(timeout)

    def start(self) -> FakeAnthropicServer:
        self._thread = threading.Thread(target=self._run, name="fake-anthropic", daemon=True)
        self._thread.start()
        if not self._ready.wait(5):
            raise RuntimeError("fake Anthropic server did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and self._thread is not None:
            loop.call_soon_threadsafe(self._shutdown)
            self._thread.join(5)
        self._loop = None

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._server = loop.run_until_complete(asyncio.start_server(self._on_client, self.host, self.port))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _shutdown(self) -> None:
        assert self._loop is not None
        loop = self._loop
        if self._server is not None:
            self._server.close()

        async def finish() -> None:
            me = asyncio.current_task()
            for _ in range(10):  # handlers may still be starting: repeat until none is left
                others = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
                if not others:
                    break
                for task in others:
                    task.cancel()
                await asyncio.wait(others, timeout=1.0)
            loop.stop()

        loop.create_task(finish())

    # -- HTTP
    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                if not await self._dispatch(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError, _Disconnected):
            pass
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
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
        raw = b""
        if "content-length" in headers:
            raw = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await reader.readexactly(size + 2)
                if size == 0:
                    break
                raw += chunk[:-2]
        received = time.monotonic()  # the whole request is in: its arrival, before our own parsing
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        via_proxy = None
        if target.startswith(("http://", "https://")):  # absolute form: the fake was used as a proxy
            via_proxy = target
            split = urllib.parse.urlsplit(target)
            target = split.path + (f"?{split.query}" if split.query else "")
        recorded = RecordedRequest(
            method=method, path=target, headers=headers, body=body, time=received, via_proxy=via_proxy
        )
        self.requests.append(recorded)
        if self.record_file is not None and not target.startswith(("/_", "/health")):
            with self.record_file.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(recorded.to_json()) + "\n")
        return recorded

    @staticmethod
    async def _send(
        writer: asyncio.StreamWriter, status: int, payload: Any, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        head = [
            f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}",
            "content-type: application/json",
            f"content-length: {len(data)}",
            "request-id: req_fake",
        ]
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()

    async def _dispatch(self, req: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        path = req.path.split("?", 1)[0]
        if req.method == "GET" and path == "/health":
            await self._send(writer, 200, {"ok": True, "pending": self.pending})
            return True
        if req.method == "GET" and path == "/_requests":
            await self._send(writer, 200, [r.to_json() for r in self.message_requests])
            return True
        if req.method == "GET" and path == "/_rejections":
            await self._send(writer, 200, [{"message": m, "body": b} for m, b in self.rejections])
            return True
        if req.method == "GET" and path == "/_disconnects":
            await self._send(writer, 200, {"disconnects": len(self.disconnects)})
            return True
        if req.method == "POST" and path == "/_script":
            items = req.body.get("responses", []) if isinstance(req.body, dict) else req.body
            self.push(*(items or []))
            await self._send(writer, 200, {"ok": True, "pending": self.pending})
            return True
        refused_headers = check_headers(req.headers) if self.strict and path.startswith("/v1/") else None
        if refused_headers is not None:  # as the real API: no version or no credential, no answer
            status, error_type, message = refused_headers
            self.rejections.append((message, req.body))
            await self._send(writer, status, {"type": "error", "error": {"type": error_type, "message": message}})
            self.outcomes.append("rejected")
            return True
        if req.method == "GET" and path == "/v1/models":
            await self._list_models(writer, req.path)
            return True
        if req.method == "POST" and path == "/v1/messages/count_tokens":
            await self._count(req, writer)
            return True
        if req.method != "POST" or path != "/v1/messages":
            await self._send(
                writer,
                404,
                {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}},
            )
            return True
        refused = check_model(req.body, self.models) if self.strict and isinstance(req.body, dict) else None
        if refused is not None:  # a retired model (404), a parameter this model refuses (400)
            status, error_type, message = refused
            if status == 400:
                self.rejections.append((message, req.body))
            await self._send(writer, status, {"type": "error", "error": {"type": error_type, "message": message}})
            self.outcomes.append("rejected" if status == 400 else "not_found")
            return True
        problem = check_request(req.body) if self.strict else None
        if problem is None and self.strict and isinstance(req.body, dict):  # server tools' blocks sent back
            problem = check_server_blocks(req.body.get("messages") or [], self.server_blocks)
        if problem is not None:  # refused before the script is consulted, as the real API would
            self.rejections.append((problem, req.body))
            error = {"type": "invalid_request_error", "message": problem}
            await self._send(writer, 400, {"type": "error", "error": error})
            self.outcomes.append("rejected")
            return True
        body = req.body if isinstance(req.body, dict) else {}
        with self._lock:
            spec = self._pick(json.dumps(body.get("messages", [])))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(spec, body, reader, writer)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _count(self, req: RecordedRequest, writer: asyncio.StreamWriter) -> None:
        """`POST /v1/messages/count_tokens` (anthropic_count.py): strict as `/v1/messages`."""
        problem = check_count_request(req.body) if self.strict else None
        if problem is not None:
            self.rejections.append((problem, req.body))
            error = {"type": "invalid_request_error", "message": problem}
            await self._send(writer, 400, {"type": "error", "error": error})
            return
        if self.count_status != 200:
            error = {"type": ERROR_TYPES.get(self.count_status, "api_error"), "message": "fake count error"}
            await self._send(writer, self.count_status, {"type": "error", "error": error})
            return
        tokens = count_tokens(req.body)
        self.counted.append(tokens)
        await self._send(writer, 200, {"input_tokens": tokens})

    async def _list_models(self, writer: asyncio.StreamWriter, target: str) -> None:
        """One page, as the real API pages it: `limit` (default 20, 1..1000) after `after_id`."""
        await asyncio.sleep(self.models_delay)
        if self.models_status != 200:
            error = {"type": "api_error", "message": "Internal server error"}
            await self._send(writer, self.models_status, {"type": "error", "error": error})
            return
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)
        try:
            limit = int(query.get("limit", ["20"])[0])
        except ValueError:
            limit = 0
        if not 1 <= limit <= 1000:
            error = {"type": "invalid_request_error", "message": "limit: must be between 1 and 1000"}
            await self._send(writer, 400, {"type": "error", "error": error})
            return
        data = list(self.models)
        after = query.get("after_id", [None])[0]
        if after is not None:
            ids = [m["id"] for m in data]
            data = data[ids.index(after) + 1 :] if after in ids else []
        page_data, more = data[:limit], len(data) > limit
        page = {"data": page_data, "has_more": more, "first_id": page_data[0]["id"] if page_data else None,
                "last_id": page_data[-1]["id"] if page_data else None}  # fmt: skip
        await self._send(writer, 200, page)

    def _pick(self, messages: str) -> dict[str, Any]:
        for i, spec in enumerate(self._queue):
            when = spec.get("when")
            if when is None or when in messages:
                return self._queue.pop(i)
        return self.default

    async def _answer(
        self, spec: dict[str, Any], body: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        model = str(body.get("model", "claude-sonnet-4-5"))
        if "status" in spec and spec["status"] != 200:
            status = int(spec["status"])
            headers = {}
            if spec.get("retryAfter") is not None:
                headers["retry-after"] = str(spec["retryAfter"])
            if spec.get("retryAfterMs") is not None:
                headers["retry-after-ms"] = str(spec["retryAfterMs"])
            error = {
                "type": spec.get("errorType", ERROR_TYPES.get(status, "api_error")),
                "message": spec.get("message", f"fake error {status}"),
            }
            await self._send(writer, status, {"type": "error", "error": error}, headers)
            self.outcomes.append("error")
            return True
        if spec.get("fault") == "hang_headers":  # never answer; wait for the client to give up
            with contextlib.suppress(Exception):
                while await reader.read(1024):
                    pass
            self._record_disconnect()
            return False
        for n, search in enumerate(search_specs(spec)):
            remember(self.server_blocks, list(search_blocks(search, n)))
        if not body.get("stream"):
            await self._send(writer, 200, build_message(spec, model))
            self.outcomes.append("completed")
            return True
        return await self._stream(spec, model, reader, writer)

    def _record_disconnect(self) -> None:
        self.disconnects.append(time.monotonic())
        self.outcomes.append("disconnected")
        self.client_disconnected.set()

    async def _stream(
        self, spec: dict[str, Any], model: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        gone = asyncio.Event()

        async def watch() -> None:  # the client sends nothing more until the response ends
            with contextlib.suppress(Exception):
                while await reader.read(1024):
                    pass
            gone.set()

        watcher = asyncio.create_task(watch())
        events = build_events(spec, model)
        fault, after = spec.get("fault"), int(spec.get("afterEvents", 3))
        delay = float(spec.get("delayMs", 0)) / 1000.0
        head = (
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            "cache-control: no-cache\r\nrequest-id: req_fake\r\ntransfer-encoding: chunked\r\n\r\n"
        )

        def chunk(data: bytes) -> bytes:
            return f"{len(data):x}\r\n".encode() + data + b"\r\n"

        try:
            writer.write(head.encode())
            await writer.drain()
            for n, (name, data) in enumerate(events):
                if fault in ("drop", "hang", "error_event", "garbage_event") and n == after:
                    break
                if delay:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(gone.wait(), delay)
                if gone.is_set():
                    raise _Disconnected
                writer.write(chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()))
                await writer.drain()
            if fault == "drop":
                self.outcomes.append("dropped")
                writer.transport.abort()
                return False
            if fault == "hang":
                await gone.wait()
                raise _Disconnected
            if fault == "garbage_event":
                writer.write(chunk(b'event: content_block_delta\ndata: {"type": "content_block_delta", "ind\n\n'))
            if fault == "error_event":
                error = {
                    "type": "error",
                    "error": {
                        "type": spec.get("errorType", "overloaded_error"),
                        "message": spec.get("message", "Overloaded"),
                    },
                }
                writer.write(chunk(f"event: error\ndata: {json.dumps(error)}\n\n".encode()))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            self.outcomes.append("completed")
            return True
        except (_Disconnected, ConnectionError):
            self._record_disconnect()
            return False
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher


EXPECT_REJECTION = "expect_rejection"  # pytest marker: the test means to send refused requests


def check_rejections(server: FakeAnthropicServer, expected: bool) -> None:
    """For a fixture's teardown: fail the test when the fake refused a request it sent,
    unless the test is marked `expect_rejection`. Forgets the rejections either way."""
    rejections = server.take_rejections()
    if rejections and not expected:
        details = "\n".join(f"- {message}" for message, _ in rejections)
        raise AssertionError(
            f"the fake Messages API refused {len(rejections)} request(s) the real API would refuse:\n{details}"
        )


# ------------------------------------------------------------------ standalone


def load_script(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return data, None
    return list(data.get("responses", [])), data.get("default")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A scripted fake Anthropic Messages API on 127.0.0.1")
    parser.add_argument("--script", type=Path, help="JSON file: {responses: [...], default?: {...}}")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", type=Path, help="append every /v1/messages request here (JSONL)")
    parser.add_argument("--lenient", action="store_true", help="answer requests the real API would refuse")
    parser.add_argument("--models", type=Path, help="JSON file: the GET /v1/models listing (a list of models)")
    parser.add_argument("--models-status", type=int, default=200, help="answer GET /v1/models with this error")
    args = parser.parse_args(argv)
    responses, default = load_script(args.script) if args.script else ([], None)
    models = json.loads(args.models.read_text(encoding="utf-8")) if args.models else None
    server = FakeAnthropicServer(
        responses, default=default, port=args.port, record_file=args.record, strict=not args.lenient,
        models=models, models_status=args.models_status,
    )  # fmt: skip
    server.start()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    print(server.url, flush=True)
    while not done.wait(0.2):
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
