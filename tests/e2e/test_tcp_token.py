"""`coder-ls --tcp` takes a token (contract section 21), with real TCP clients against a
real server: the token is printed on stderr (or comes from `CODER_LS_TOKEN`), the first
frame must be an `initialize` carrying it in `initializationOptions.token`, and anything
else, an HTTP request included, closes the connection without a byte in answer while the
server goes on listening for the client that knows it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from harness import SERVER, full_caps, init_git, server_env
from lsprotocol import types
from pytest_lsp.client import make_test_lsp_client

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(root: Path, options: object, msg_id: int = 1) -> bytes:
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": options}
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params})


@contextlib.asynccontextmanager
async def tcp_server(root: Path, env: dict[str, str] | None = None) -> AsyncIterator[tuple[int, str | None, list[str]]]:
    """(port, the printed token or None, stderr lines so far)."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        *SERVER, "--tcp", "--port", str(port), cwd=root, env=server_env(root, env),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    lines: list[str] = []
    token: str | None = None
    assert proc.stderr is not None
    try:
        for _ in range(400):
            try:
                _, w = await asyncio.open_connection("127.0.0.1", port)
                w.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("coder-ls --tcp did not listen")

        async def drain() -> None:
            while line := await proc.stderr.readline():  # type: ignore[union-attr]
                lines.append(line.decode(errors="replace").rstrip("\n"))

        reading = asyncio.create_task(drain())
        for _ in range(100):
            found = [x for x in lines if x.startswith("coder-ls: token ")]
            if found or (env and "CODER_LS_TOKEN" in env):
                token = found[0].split()[-1] if found else None
                break
            await asyncio.sleep(0.05)
        yield port, token, lines
        reading.cancel()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def refused(port: int, data: bytes) -> bytes:
    """What the server answers `data` before it closes the connection (b"" expected)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        try:
            return await asyncio.wait_for(reader.read(), 15)
        except ConnectionError:
            return b""
    finally:
        writer.close()


async def lsp_client_works(root: Path, port: int, token: str) -> None:
    client = make_test_lsp_client()
    await client.start_tcp("127.0.0.1", port)
    try:
        init = await client.initialize_session(
            types.InitializeParams(
                capabilities=full_caps(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options={"token": token, "permissions": "auto-edit"},
            )
        )
        assert "coder.help" in init.capabilities.execute_command_provider.commands
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="coder.input", arguments=[{"text": "/permissions"}])
        )
        assert result["status"] == "completed", result
        assert "auto-edit" in result["reply"], result  # the other options still count
        assert not [m for m in client.messages if "token" in m.message], client.messages  # not a setting
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
    finally:
        with contextlib.suppress(Exception):
            await client.stop()


async def test_every_wrong_opening_is_closed_unanswered_and_the_token_still_opens(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with tcp_server(root) as (port, token, lines):
        assert token and len(token) >= 24, lines
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode()
        http = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        http += b"Content-Length: %d\r\n\r\n" % len(body) + body
        openings = {
            "an HTTP request": http,
            "no token": initialize(root, None),
            "a wrong token": initialize(root, {"token": "x" + token}),
            "the token as a number": initialize(root, {"token": 1}),
            "another method first": frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": None}),
            "a notification with the token": frame(
                {"jsonrpc": "2.0", "method": "initialize", "params": {"initializationOptions": {"token": token}}}
            ),
            "a body that is not JSON": b"Content-Length: 5\r\n\r\n{x: 1",
            "a huge header line": b"Content-Length: 1" + b"0" * 100_000 + b"\r\n\r\n",
            "a huge length": b"Content-Length: 99999999999\r\n\r\n{}",
        }
        for what, data in openings.items():
            assert await refused(port, data) == b"", what
        await lsp_client_works(root, port, token)


async def test_a_token_from_the_environment_is_not_printed(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    secret = "my-own-long-token-0123456789"
    async with tcp_server(root, {"CODER_LS_TOKEN": secret}) as (port, token, lines):
        assert token is None
        assert await refused(port, initialize(root, {"token": "guess"})) == b""
        await lsp_client_works(root, port, secret)
        assert not [x for x in lines if secret in x], lines


async def test_a_silent_connection_does_not_keep_the_client_out(tmp_path: Path) -> None:
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with tcp_server(root) as (port, token, _):
        assert token
        _, idle = await asyncio.open_connection("127.0.0.1", port)  # connects, says nothing
        try:
            await lsp_client_works(root, port, token)
        finally:
            idle.close()
