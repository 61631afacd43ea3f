"""A hostile or broken endpoint (a gateway, a proxy, a mistyped base URL), end to end: a
real `coder-ls` against a loopback endpoint that sends exact bytes (raw_endpoint.py).

Every read from the network is bounded: one event line, an error body, a gzip bomb are
cut off with a clear error instead of being buffered, and the server goes on serving
the next turn. A stream that trickles bytes without ever finishing an event is given up
as stalled after `requestTimeoutSeconds`, and retried. (CPU and memory before and after:
benchmarks/bench_hostile_endpoint.py, not a timed test.)
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from harness import Session, lsp_session
from raw_endpoint import RawEndpoint, RawRequest, http_head, sse_answer

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

MB = 1 << 20


def env_for(url: str) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": url, "CODER_WARMUP": "0"}


def user_config(ws: Path, settings: dict[str, object]) -> None:
    folder = ws.parent / f".xdg-{ws.name}" / "coder"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(settings))


def one_line(size: int) -> object:
    def answer(_: RawRequest) -> Iterator[bytes]:
        yield http_head(200, {"content-type": "text/event-stream", "connection": "close"})
        yield b"event: content_block_delta\ndata: "
        for _ in range(size // MB):
            yield b"a" * MB
        yield b"\n\n"

    return answer


async def still_serving(s: Session, endpoint: RawEndpoint) -> None:
    endpoint.route("POST", "/v1/messages", sse_answer({"text": "Still here."}))
    result = await s.execute("coder.input", {"text": "are you there?"})
    assert result["status"] == "completed", result
    assert "Still here." in result["reply"]


async def test_an_endless_event_line_is_cut_off(ws: Path) -> None:
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", one_line(200 * MB))
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            started = time.monotonic()
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            assert "over 16 MB" in result["error"]["message"], result
            assert time.monotonic() - started < 30
            assert len(endpoint.requests_to("/v1/messages")) == 1  # not retried: it would do it again
            assert endpoint.sent < 100 * MB
            await still_serving(s, endpoint)


async def test_a_gzip_bomb_is_cut_off_by_what_it_expands_to(ws: Path) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = b"".join(packer.compress(b"\0" * MB) for _ in range(300)) + packer.flush()
    assert len(body) < 2 * MB
    head = {"content-type": "text/event-stream", "content-encoding": "gzip", "content-length": str(len(body))}
    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", http_head(200, head) + body)
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            assert "over 16 MB" in result["error"]["message"], result
            await still_serving(s, endpoint)


async def test_a_huge_error_body_is_read_only_in_part(ws: Path) -> None:
    start = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "too big"}})

    def answer(_: RawRequest) -> Iterator[bytes]:
        yield http_head(400, {"content-type": "application/json", "content-length": str(len(start) + 200 * MB)})
        yield start.encode()
        for _ in range(200):
            yield b" " * MB

    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", answer)
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "failed", result
            assert "too big" in result["error"]["message"], result
            assert endpoint.sent < 100 * MB and endpoint.disconnects == 1
            await still_serving(s, endpoint)


async def test_a_trickle_that_never_ends_an_event_is_a_stall(ws: Path) -> None:
    """One byte every 0.2 s: the socket is never silent for `requestTimeoutSeconds`, but
    no event completes; the attempt is given up after 2 s and retried."""
    user_config(ws, {"requestTimeoutSeconds": 2})

    async def trickle(_: RawRequest) -> AsyncIterator[bytes]:
        yield http_head(200, {"content-type": "text/event-stream", "connection": "close"})
        yield b"event: message_start\ndata: "
        for _ in range(300):
            await asyncio.sleep(0.2)
            yield b" "

    with RawEndpoint() as endpoint:
        endpoint.route("POST", "/v1/messages", trickle, sse_answer({"text": "Second try."}))
        async with lsp_session(ws, env=env_for(endpoint.url)) as s:
            started = time.monotonic()
            result = await s.execute("coder.input", {"text": "say hi"})
            assert result["status"] == "completed", result
            assert "Second try." in result["reply"]
            assert time.monotonic() - started < 20
            assert len(endpoint.requests_to("/v1/messages")) == 2
