"""Messages that are not valid JSON-RPC 2.0, sent as raw bytes to the real server's stdio:
each gets the answer JSON-RPC 2.0 prescribes (`-32700` with `id: null` for a body that is not
JSON or not UTF-8, `-32600` Invalid Request for a wrong `jsonrpc`, an unusable `id` or no
`method`), and the server goes on serving. Errors that are the client's fault are logged in
one line, without a traceback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from harness import SERVER, init_git, lsp_session, server_env
from pygls.exceptions import JsonRpcException
from test_edge_protocol import PARSE_ERROR, RawClient, raw_server, still_serving

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


async def answer_to(client: RawClient, body: bytes) -> dict[str, Any]:
    await client.send_bytes(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return await client.next_response()


@pytest.mark.parametrize(
    ("message", "answer_id"),
    [
        ({"jsonrpc": "1.0", "id": 1, "method": "shutdown"}, 1),
        ({"id": 2, "method": "shutdown"}, 2),  # no jsonrpc member
        ({"jsonrpc": 2.0, "id": 3, "method": "shutdown"}, 3),  # a number, not the string "2.0"
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}, None),
        ({"jsonrpc": "2.0", "id": [4], "method": "shutdown"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "shutdown"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}, None),
        ({"jsonrpc": "2.0", "id": 5}, 5),  # neither a method nor a result: not a request
        ({"jsonrpc": "2.0", "id": 6, "method": 7}, 6),
        ({"jsonrpc": "2.0", "method": ["initialized"]}, None),  # a notification without a usable method
        ({"jsonrpc": "1.0", "method": "initialized"}, None),
        ({"id": 8, "result": None}, None),  # a response without jsonrpc: not answered under our own id
    ],
)
async def test_a_message_that_is_not_json_rpc_2_gets_invalid_request(
    tmp_path: Path, message: dict[str, Any], answer_id: Any
) -> None:
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        answer = await answer_to(client, json.dumps(message).encode())
        assert answer["error"]["code"] == INVALID_REQUEST, answer
        assert answer["id"] == answer_id and answer["jsonrpc"] == "2.0", answer
        await still_serving(client, 100)


async def test_invalid_utf8_anywhere_in_the_body_gets_a_parse_error(tmp_path: Path) -> None:
    """Issue 36 item 5: a request whose body is not UTF-8 is answered under its own id when
    the id can be read (the client's request ends instead of waiting forever), else with
    `id: null`; a notification's gets `id: null`; the server keeps serving."""
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        valid = json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
             "params": {"command": "coder.input", "arguments": [{"text": "!echo hi"}]}}
        ).encode()  # fmt: skip
        # a bad byte in a string, a truncated sequence, an overlong encoding, a lone surrogate
        bads = (b"ech\xff", b"ech\xc3\x28", b"ech\xc0\xaf", b"ech\xed\xa0\x80")
        for n, bad in enumerate(bads, start=10):
            answer = await answer_to(client, valid.replace(b"echo", bad).replace(b'"id": 2', b'"id": %d' % n))
            assert answer["error"]["code"] == PARSE_ERROR and answer["id"] == n, answer
            assert "not valid UTF-8" in answer["error"]["message"], answer
        answer = await answer_to(client, valid.replace(b"echo", b"ech\xff").replace(b'"id": 2', b'"id": "s-1"'))
        assert answer["id"] == "s-1", answer
        # where the id cannot be read (a bad byte outside a string), or there is none: id null
        for body in (valid.replace(b'"id"', b'"i\xffd'), valid.replace(b'"id": 2, ', b"").replace(b"echo", b"\xff")):
            answer = await answer_to(client, body)
            assert answer["error"]["code"] == PARSE_ERROR and answer["id"] is None, answer
        await still_serving(client, 3)


async def test_a_valid_response_from_the_client_is_not_answered(tmp_path: Path) -> None:
    async with raw_server(tmp_path) as (client, root):
        await client.initialize(root)
        await client.send({"id": "nobody-asked", "result": None})  # an answer to no request: ignored
        await still_serving(client, 1)
        assert not [m for m in client.received if m.get("id") == "nobody-asked"], client.received


async def test_client_mistakes_are_logged_in_one_line_without_a_traceback(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    log_file = tmp_path / "server.log"
    proc = await asyncio.create_subprocess_exec(
        *SERVER, "--log-file", str(log_file), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, cwd=root, env=server_env(root),
    )  # fmt: skip
    try:
        client = RawClient(proc)
        await client.initialize(root)
        answer = await client.request(1, "workspace/executeCommand", {"command": "coder.shell", "arguments": [{}]})
        assert answer["error"]["code"] == INVALID_PARAMS, answer
        answer = await client.request(2, "workspace/executeCommand", {"command": "coder.nope", "arguments": []})
        assert "error" in answer, answer
        answer = await answer_to(client, b'{"jsonrpc": "1.0", "id": 3, "method": "shutdown"}')
        assert answer["error"]["code"] == INVALID_REQUEST, answer
        await still_serving(client, 4)
    finally:
        proc.kill()
        await proc.wait()
    text = log_file.read_text()
    assert "Traceback" not in text, text
    assert " ERROR " not in text, text
    assert "coder.shell" in text  # the mistake is logged, once, at INFO/WARNING
    # and nothing reached the user as an error popup either
    assert not [m for m in client.received if m.get("method") == "window/showMessage"], client.received


async def test_pytest_lsp_client_gets_invalid_params_and_keeps_working(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        with pytest.raises(JsonRpcException) as caught:
            await s.execute("coder.shell", {"commandd": "echo hi"})
        assert caught.value.code == INVALID_PARAMS
        result = await s.execute("coder.input", {"text": "!echo hi"})
        assert result["status"] == "completed" and "hi" in result["rawOutput"], result
