"""The JSON-RPC edge, driven byte by byte over the real server's stdio: requests before
`initialize`, broken framing, bodies that are not JSON, requests that cannot be decoded,
and text the shell cannot take. Every request gets an answer and the server keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from harness import SERVER, init_git, server_env

SERVER_NOT_INITIALIZED = -32002
PARSE_ERROR = -32700
INVALID_PARAMS = -32602
READ_TIMEOUT = 15.0


class RawClient:
    """Writes raw bytes to the server's stdin, reads framed messages from its stdout and
    answers the server's own requests (progress tokens, messages) with null."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.received: list[dict[str, Any]] = []

    async def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        await self.send_bytes(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def _read_one(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise EOFError("the server closed its stdout")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        assert length is not None
        message: dict[str, Any] = json.loads(await self.proc.stdout.readexactly(length))
        return message

    async def next_response(self, predicate: Any = None) -> dict[str, Any]:
        """The next response (not a request or notification from the server)."""

        async def loop() -> dict[str, Any]:
            while True:
                message = await self._read_one()
                self.received.append(message)
                if "method" in message:
                    if "id" in message:  # a server request: answer it
                        await self.send({"id": message["id"], "result": None})
                    continue
                if predicate is None or predicate(message):
                    return message

        return await asyncio.wait_for(loop(), READ_TIMEOUT)

    async def request(self, msg_id: int, method: str, params: Any) -> dict[str, Any]:
        await self.send({"id": msg_id, "method": method, "params": params})
        return await self.next_response(lambda m: m.get("id") == msg_id)

    async def initialize(self, root: Path) -> None:
        answer = await self.request(0, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        assert "result" in answer, answer
        await self.send({"method": "initialized", "params": {}})


@contextlib.asynccontextmanager
async def raw_server(tmp_path: Path) -> AsyncIterator[tuple[RawClient, Path]]:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    proc = await asyncio.create_subprocess_exec(
        *SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=root,
        env=server_env(root),
    )
    try:
        yield RawClient(proc), root
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def still_serving(client: RawClient, msg_id: int) -> None:
    answer = await client.request(
        msg_id, "workspace/executeCommand", {"command": "coder.listCommands", "arguments": [{}]}
    )
    assert "result" in answer and answer["result"]["status"] == "completed", answer


async def test_requests_before_initialize_get_server_not_initialized(tmp_path: Path) -> None:
    async with raw_server(tmp_path) as (client, root):
        answer = await client.request(
            1, "workspace/executeCommand", {"command": "coder.input", "arguments": [{"text": "!echo hi"}]}
        )
        assert answer["error"]["code"] == SERVER_NOT_INITIALIZED, answer
        doc = {"uri": (root / "a.txt").as_uri()}
        rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
        answer = await client.request(
            2, "textDocument/codeAction", {"textDocument": doc, "range": rng, "context": {"diagnostics": []}}
        )
        assert answer["error"]["code"] == SERVER_NOT_INITIALIZED, answer
        await client.initialize(root)
        await still_serving(client, 3)


async def test_execute_command_without_command_is_answered(tmp_path: Path) -> None:
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        answer = await client.request(1, "workspace/executeCommand", {"arguments": [{"text": "hi"}]})
        assert answer["error"]["code"] == INVALID_PARAMS, answer
        answer = await client.request(2, "workspace/executeCommand", {"command": 42})
        assert answer["error"]["code"] == INVALID_PARAMS, answer
        await still_serving(client, 3)


async def test_a_body_that_is_not_json_gets_a_parse_error(tmp_path: Path) -> None:
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        for junk in (b'{"jsonrpc": "2.0", "id": 7, "method": ', b"\xff\xfe not utf-8", b"[]"):
            await client.send_bytes(b"Content-Length: %d\r\n\r\n%s" % (len(junk), junk))
            answer = await client.next_response()
            assert answer["id"] is None and answer["error"]["code"] in (PARSE_ERROR, -32600), answer
        await still_serving(client, 1)


async def test_a_bad_content_length_gets_a_parse_error_and_the_stream_recovers(tmp_path: Path) -> None:
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "shutdown"}).encode()
        await client.send_bytes(b"Content-Length: abc\r\n\r\n" + body)
        answer = await client.next_response()
        assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
        await still_serving(client, 6)
        # A header block with no Content-Length at all
        await client.send_bytes(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body)
        answer = await client.next_response()
        assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
        await still_serving(client, 8)


@pytest.mark.parametrize(
    ("argument", "words"),
    [
        ({"command": "coder.shell", "arguments": [{"command": "echo a\u0000b"}]}, "NUL"),
        ({"command": "coder.input", "arguments": [{"text": "!echo a\u0000b"}]}, "NUL"),
        ({"command": "coder.shell", "arguments": [{"command": "echo \ud800"}]}, "surrogate"),
        ({"command": "coder.input", "arguments": [{"text": "!echo \udc80x"}]}, "surrogate"),
    ],
)
async def test_text_bash_cannot_take_gets_a_clear_error(tmp_path: Path, argument: dict[str, Any], words: str) -> None:
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        answer = await client.request(1, "workspace/executeCommand", argument)
        result = answer["result"]
        assert result["mode"] == "error" and result["status"] == "failed", result
        assert result["error"]["code"] != "internal_error", result
        assert words in result["error"]["message"], result
        await still_serving(client, 2)


async def test_a_surrogate_in_a_slash_command_argument_is_not_an_internal_error(tmp_path: Path) -> None:
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        answer = await client.request(
            1, "workspace/executeCommand", {"command": "coder.input", "arguments": [{"text": "/help \ud800"}]}
        )
        result = answer["result"]
        assert result["status"] == "completed" or result["error"]["code"] != "internal_error", result
        await still_serving(client, 2)


async def test_tcp_answers_a_parse_error_and_keeps_serving(tmp_path: Path) -> None:
    import socket

    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        *SERVER, "--tcp", "--port", str(port), cwd=root, env=server_env(root, {"CODER_LS_TOKEN": "edge-token"}),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(200):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("coder-ls --tcp did not listen")

        class Conn:  # RawClient's needs, over the socket
            stdin, stdout = writer, reader

        client = RawClient(Conn())  # type: ignore[arg-type]
        params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        answer = await client.request(0, "initialize", {**params, "initializationOptions": {"token": "edge-token"}})
        assert "result" in answer, answer  # over TCP the first frame is the initialize with the token
        await client.send({"method": "initialized", "params": {}})
        await client.send_bytes(b"Content-Length: 3\r\n\r\n{x}")
        answer = await client.next_response()
        assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
        await still_serving(client, 2)
        writer.close()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
