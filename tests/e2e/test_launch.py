"""Launching coder-ls: CLI flags, a clean stdio stream, log destinations, TCP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time

from harness import SERVER, full_caps, init_git, lsp_session, server_env
from lsprotocol import types
from pytest_lsp.client import make_test_lsp_client

from coder_ls import PROTOCOL_VERSION, __version__


def _run(*args: str, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30, env=env)


def test_version_and_help_from_both_entry_points():
    exe = shutil.which("coder-ls")
    assert exe is not None
    for cmd in ([exe], [sys.executable, "-m", "coder_ls"]):
        version = _run(*cmd, "--version")
        assert version.returncode == 0
        assert version.stdout.strip() == f"coder-ls {__version__} (protocol {PROTOCOL_VERSION})"
        helped = _run(*cmd, "--help")
        assert helped.returncode == 0
        for flag in ("--stdio", "--tcp", "--host", "--port", "--log-file", "--log-level", "--version"):
            assert flag in helped.stdout
    bad = _run(exe, "--no-such-flag")
    assert bad.returncode != 0 and bad.stdout == ""


def _frame(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _parse_frames(data: bytes) -> list[dict]:
    """Every byte of stdout must belong to a well-formed LSP message."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"garbage on stdout: {data[:200]!r}"
        headers = dict(line.split(b": ", 1) for line in head.split(b"\r\n"))
        assert set(headers) <= {b"Content-Length", b"Content-Type"}, head
        length = int(headers[b"Content-Length"])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


def test_stdio_stream_is_pure_lsp_even_at_debug_level(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    log_file = tmp_path / "server.log"
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
         "params": {"command": "coder.input", "arguments": [{"text": "!echo to-the-client"}]}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [*SERVER, "--log-level", "debug", "--log-file", str(log_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=root,
        env=server_env(root),
    )
    # Send the requests one by one: exit must not overtake the command.
    replies: list[dict] = []
    buffer = b""
    try:
        for msg in messages:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(_frame(msg))
            proc.stdin.flush()
            if "id" not in msg:
                continue
            while not any(r.get("id") == msg["id"] for r in replies):
                chunk = proc.stdout.read1(65536)
                assert chunk, "the server closed stdout early"
                buffer += chunk
                with contextlib.suppress(AssertionError, ValueError, KeyError):
                    replies = _parse_frames(buffer)
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    frames = _parse_frames(buffer + stdout)
    by_id = {f["id"]: f for f in frames if "id" in f and "method" not in f}
    init = by_id[1]["result"]
    assert init["serverInfo"]["name"] == "coder-ls"
    commands = init["capabilities"]["executeCommandProvider"]["commands"]
    for cid in ("coder.input", "coder.shell", "coder.interrupt", "coder.listCommands", "coder.help", "coder.undo"):
        assert cid in commands
    assert by_id[2]["result"]["rawOutput"] == "to-the-client\n"
    assert proc.returncode == 0
    # debug logs went somewhere, just not to stdout
    assert b"DEBUG" in stderr or "DEBUG" in log_file.read_text()
    assert b"serving" in stderr
    assert "serving" in log_file.read_text()
    assert b"DEBUG" not in buffer + stdout


async def test_log_messages_reach_the_client_after_initialize(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        await s.execute("coder.help", {})
        await s.wait_for(lambda: s.client.log_messages, timeout=5)
        infos = [m for m in s.client.log_messages if m.type == types.MessageType.Info]
        assert infos
        assert all(m.type != types.MessageType.Log for m in s.client.log_messages)  # info and above only


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_tcp_mode_round_trip(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        shutil.which("coder-ls") or "coder-ls",
        "--tcp",
        "--port",
        str(port),
        cwd=str(root),
        env=server_env(root, {"CODER_LS_TOKEN": "round-trip-token"}),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    client = make_test_lsp_client()
    try:
        for _ in range(200):
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("coder-ls --tcp did not listen")
        init = await client.initialize_session(
            types.InitializeParams(
                capabilities=full_caps(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options={"token": "round-trip-token"},  # --tcp takes a token
            )
        )
        assert "coder.help" in init.capabilities.execute_command_provider.commands
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="coder.input", arguments=[{"text": "/help"}])
        )
        assert result["mode"] == "command" and "/undo" in result["reply"]
        shell = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="coder.shell", arguments=[{"command": "pwd"}])
        )
        assert shell["rawOutput"] == f"{root}\n"
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
    finally:
        with contextlib.suppress(Exception):
            await client.stop()
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
    assert proc.stdout is not None
    assert await proc.stdout.read() == b""  # TCP mode: nothing on stdout either


def test_a_client_gone_mid_write_leaves_no_server_behind(tmp_path):
    """An editor killed while the server writes to it (its end of the pipe closed): the
    server's next write fails, and it must still exit when its input ends. Before, the
    failed write logged an error inside the writer's lock; the log went to the client
    (`window/logMessage`) through the same writer and waited for that lock forever: every
    killed editor left a server behind."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})

    def frame(message: dict) -> bytes:
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root, env=server_env(root)
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        init = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        proc.stdin.flush()
        assert proc.stdout.read1(65536)  # the server answers
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proc.stdin.flush()
        time.sleep(0.5)  # its log now goes to the client too (`window/logMessage`)
        proc.stdout.close()  # the editor is gone: its end of the server's output is closed
        for i in range(2, 5):  # each answer is a write into the closed pipe
            command = {"command": "coder.listCommands", "arguments": [{}]}
            request = {"jsonrpc": "2.0", "id": i, "method": "workspace/executeCommand", "params": command}
            proc.stdin.write(frame(request))
            proc.stdin.flush()
        proc.stdin.close()
        assert proc.wait(timeout=20) is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
