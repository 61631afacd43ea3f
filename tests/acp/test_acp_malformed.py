"""Lines that are not valid JSON-RPC 2.0, sent as raw bytes to the real `coder-ls --acp`'s
stdin (ACP frames a message as one line of JSON): each gets the answer JSON-RPC 2.0
prescribes, as over LSP (tests/e2e/test_edge_jsonrpc.py), and the agent keeps serving. The
SDK's reader logged such a line and dropped it (the client waited forever), and a line
that is JSON but not an object ended the connection (issue 36 item 5)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from harness import init_git, server_env

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
TIMEOUT = 20.0


class RawAcp:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send_line(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        await self.proc.stdin.drain()

    async def response(self) -> dict[str, Any]:
        """The next message with an id and no method (a response, ours or an error)."""
        assert self.proc.stdout is not None

        async def loop() -> dict[str, Any]:
            while True:
                line = await self.proc.stdout.readline()  # type: ignore[union-attr]
                if not line:
                    raise EOFError("the agent closed its stdout")
                message: dict[str, Any] = json.loads(line)
                if "method" not in message:
                    return message

        return await asyncio.wait_for(loop(), TIMEOUT)

    async def request(self, msg_id: Any, method: str, params: Any) -> dict[str, Any]:
        await self.send_line(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode())
        return await self.response()

    async def still_serving(self, msg_id: int) -> None:
        answer = await self.request(msg_id, "authenticate", {"methodId": "nope"})
        assert answer["id"] == msg_id and answer["error"]["code"] == -32602, answer


@contextlib.asynccontextmanager
async def raw_agent(tmp_path: Path) -> AsyncIterator[RawAcp]:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "coder_ls", "--acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        cwd=root, env=server_env(root), limit=1 << 24,
    )  # fmt: skip
    try:
        client = RawAcp(proc)
        answer = await client.request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert "result" in answer, answer
        yield client
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


NEW_SESSION = b'{"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "/tmp/ws", "mcpServers": []}}'


async def test_a_request_that_is_not_utf8_is_answered_under_its_id(tmp_path: Path) -> None:
    async with raw_agent(tmp_path) as client:
        bads = (b"/tmp/w\xff", b"/tmp/w\xc3\x28", b"/tmp/w\xc0\xaf", b"/tmp/w\xed\xa0\x80")
        for n, bad in enumerate(bads, start=10):
            await client.send_line(NEW_SESSION.replace(b"/tmp/ws", bad).replace(b'"id": 7', b'"id": %d' % n))
            answer = await client.response()
            assert answer["id"] == n and answer["error"]["code"] == PARSE_ERROR, answer
            assert "not valid UTF-8" in answer["error"]["message"], answer
        await client.send_line(NEW_SESSION.replace(b'"id"', b'"i\xffd'))  # the id cannot be read
        answer = await client.response()
        assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
        await client.still_serving(1)


@pytest.mark.parametrize(
    ("line", "code", "answer_id"),
    [
        (b'{"jsonrpc": "2.0", "id": 3, "method": ', PARSE_ERROR, None),  # not JSON
        (b"[]", INVALID_REQUEST, None),  # JSON, not an object: the SDK's reader died on it
        (b'"text"', INVALID_REQUEST, None),
        (b'{"jsonrpc": "1.0", "id": 4, "method": "authenticate"}', INVALID_REQUEST, 4),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "authenticate"}', INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "id": 5, "method": 7}', INVALID_REQUEST, 5),
    ],
)
async def test_a_line_that_is_not_json_rpc_2_is_answered(
    tmp_path: Path, line: bytes, code: int, answer_id: Any
) -> None:
    async with raw_agent(tmp_path) as client:
        await client.send_line(line)
        answer = await client.response()
        assert answer["error"]["code"] == code and answer["id"] == answer_id, answer
        await client.still_serving(1)
