"""An MCP server over streamable HTTP (server-everything in its `streamableHttp` mode, started
by the test): its image reaches the model as an image block, and the permission rules and
approvals name its tools `mcp__<server>__<tool>` and `mcp__<server>` as users write them."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from lsprotocol import types
from mcp_support import everything_js, free_port, pids_with

from tests.harness import lsp_session

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("ignore:Unknown progress token")]


def _start(mode: str) -> tuple[subprocess.Popen[bytes], int]:
    entry, port = everything_js(), free_port()
    proc = subprocess.Popen(
        [shutil.which("node") or "node", str(entry), mode],
        env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if proc.poll() is not None:
            pytest.fail(f"server-everything ({mode}) exited at start")
        import time

        time.sleep(0.05)
    return proc, port


@pytest.fixture
def http_server() -> Iterator[tuple[str, str]]:
    """server-everything over streamable HTTP and over the older SSE transport."""
    (http, http_port), (sse, sse_port) = _start("streamableHttp"), _start("sse")
    try:
        yield f"http://127.0.0.1:{http_port}/mcp", f"http://127.0.0.1:{sse_port}/sse"
    finally:
        for proc in (http, sse):
            proc.kill()
            proc.wait()


async def test_http_tools_images_and_rules(ws: Path, fake: Any, http_server: tuple[str, str]) -> None:
    http_url, sse_url = http_server
    marker = f"hang-{uuid.uuid4().hex}"
    config = {
        "mcpServers": {
            "web": {"type": "http", "url": http_url, "headers": {"X-Test": "${USER:-someone}"}},
            "old": {"type": "sse", "url": sse_url},
            "hang": {"command": "sh", "args": ["-c", "sleep 60", marker]},  # never answers initialize
        },
        "rules": [
            {"tool": "mcp__web__get-sum", "action": "deny"},
            {"tool": "mcp__web__get-tiny-image", "action": "allow"},
            {"tool": "mcp__we", "action": "allow"},  # not a prefix rule: covers nothing
            {"tool": "mcp__old", "action": "allow"},  # the whole server
        ],
    }
    path = ws.parent / f".xdg-{ws.name}" / "coder" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))
    async with lsp_session(ws, env={**api_env(fake), "MCP_TIMEOUT": "2000"}) as s:
        fake.push(
            calls(
                tool_call("mcp__web__get-tiny-image", {}, "t1"),
                tool_call("mcp__web__get-sum", {"a": 1, "b": 2}, "t2"),
                tool_call("mcp__web__echo", {"message": "asked"}, "t3"),
                tool_call("mcp__old__get-sum", {"a": 20, "b": 22}, "t4"),
            ),
            reply("done"),
        )
        # the two reachable servers first: under CI's load connecting one (the mcp client's
        # imports, the HTTP session) can take longer than the 2 s start timeout set here
        # for `hang`, and this test is about the tools, images and rules, not that race
        for _ in range(300):
            listing = await s.execute("coder.input", {"text": "/mcp"})
            states = {x["name"]: x["state"] for x in listing["data"]["servers"]}
            if states["web"] == states["old"] == "ready":
                break
            await asyncio.sleep(0.1)
        assert states["web"] == states["old"] == "ready", states
        started = asyncio.get_running_loop().time()
        result = await asyncio.wait_for(s.execute("coder.input", {"text": "go"}), 60)
        assert result["status"] == "completed", result
        assert asyncio.get_running_loop().time() - started < 15  # the hung server held it 2 s, no more
        for _ in range(100):  # the attempt under way ends at its start timeout
            status = await s.execute("coder.input", {"text": "/mcp"})
            hang = {x["name"]: x for x in status["data"]["servers"]}["hang"]
            if hang["lastError"]:
                break
            await asyncio.sleep(0.1)
        assert hang["state"] in ("restarting", "starting") and "start timeout" in hang["lastError"], hang
        assert len(pids_with(marker)) <= 2  # the timed-out attempt was killed (one attempt at a time)
        results = tool_results(fake.message_requests[-1])
        image = results["t1"]["content"]
        assert isinstance(image, list), image
        kinds = [b["type"] for b in image]
        assert "image" in kinds and image[kinds.index("image")]["source"]["media_type"] == "image/png", kinds
        assert results["t2"]["is_error"] and "Not allowed" in result_text(results["t2"]), results["t2"]
        asked = [q.message for q in s.questions]
        assert any("mcp__web__echo" in q for q in asked), asked  # balanced: an MCP tool asks
        assert results["t3"]["is_error"], results["t3"]  # the question was dismissed: denied
        assert "42" in result_text(results["t4"]), results["t4"]  # over SSE, allowed by the rule below

        # a rule naming the whole server covers its tools; a deny of one still wins
        rules = [{"tool": "mcp__web", "action": "allow"}, {"tool": "mcp__web__get-sum", "action": "deny"}]
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"rules": rules}})
        )
        s.questions.clear()
        fake.push(
            calls(
                tool_call("mcp__web__echo", {"message": "unasked"}, "u1"),
                tool_call("mcp__web__get-sum", {"a": 1, "b": 2}, "u2"),
            ),
            reply("done"),
        )
        await s.execute("coder.input", {"text": "/new"})
        result = await asyncio.wait_for(s.execute("coder.input", {"text": "again"}), 60)
        results = tool_results(fake.message_requests[-1])
        assert "unasked" in result_text(results["u1"]) and not s.questions, (results, s.questions)
        assert results["u2"]["is_error"], results["u2"]
