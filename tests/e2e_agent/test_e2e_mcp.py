"""MCP servers' tools, end to end: a real LSP client drives the real server, the real SDK
talks to the strict fake Messages API, and the MCP servers are real ones nobody here wrote
(`@modelcontextprotocol/server-everything` over stdio, `mcp-server-time` from PyPI).

What a user notices: the servers do not start on `initialize`, their tools reach the model
as `mcp__<server>__<tool>` with their schemas, the calls run (after the approval the preset
asks for), a bad input never reaches the server, an error is an error result, progress
shows, Cancel cancels the call, a server that dies is restarted, and none is left running
after our server is killed."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import api_env, calls, last_user_text, progress_messages, result_text, tool_call, tool_results
from anthropic_server import reply
from mcp_support import everything_stdio, pids_with, time_server, write_user_servers

from tests.harness import lsp_session, server_process

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("ignore:Unknown progress token")]


def servers(marker: str) -> dict[str, Any]:
    everything = everything_stdio()
    everything["args"] = [*everything["args"], f"--marker={marker}"]  # ignored by the server
    everything["env"] = {"CODER_TEST_OWN": "own-${MARKER_HOME:-default}"}
    return {"everything": everything, "time": time_server()}


async def wait_for(predicate: Any, timeout: float = 15.0) -> Any:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    return predicate()


def notices(s: Any) -> list[str]:
    return [e["message"] for e in s.events_of("notice")]


async def test_tools_reach_the_model_and_run(ws: Path, fake: Any) -> None:
    marker = uuid.uuid4().hex
    write_user_servers(ws, servers(marker))
    async with lsp_session(ws, env={**api_env(fake), "MCP_TIMEOUT": "30000"}) as s:
        await asyncio.sleep(0.5)
        assert pids_with(marker) == [], "a server started on initialize"
        await s.execute("coder.input", {"text": "/permissions yolo"})
        fake.push(
            calls(
                tool_call("mcp__everything__echo", {"message": "hello from the model"}, "t1"),
                tool_call("mcp__everything__get-sum", {"a": 2, "b": 40}, "t2"),
                tool_call("mcp__everything__get-sum", {"a": "two", "b": 40}, "t3"),
                tool_call("mcp__time__get_current_time", {"timezone": "Europe/Paris"}, "t4"),
                tool_call("mcp__time__get_current_time", {"timezone": "Not/AZone"}, "t5"),
                tool_call("mcp__everything__get-env", {}, "t6"),
            ),
            reply("done"),
        )
        result = await s.execute("coder.input", {"text": "use the servers"})
        assert result["status"] == "completed", result
        first, second = fake.message_requests[-2:]
        offered = {t["name"]: t for t in first.body["tools"]}
        assert {"mcp__everything__echo", "mcp__everything__get-sum", "mcp__time__get_current_time"} <= set(offered)
        assert set(offered["mcp__everything__get-sum"]["input_schema"]["properties"]) == {"a", "b"}
        results = tool_results(second)
        assert "hello from the model" in result_text(results["t1"]) and not results["t1"].get("is_error")
        assert "42" in result_text(results["t2"]), results["t2"]
        assert results["t3"]["is_error"] and "a" in result_text(results["t3"]), results["t3"]
        assert "Europe/Paris" in result_text(results["t4"]) and not results["t4"].get("is_error"), results["t4"]
        assert results["t5"].get("is_error"), results["t5"]
        env = result_text(results["t6"])  # the server's environment: its own env, no secret of ours
        assert "own-default" in env and "CODER_TEST_OWN" in env, env[:500]
        assert "test-key" not in env and "ANTHROPIC_API_KEY" not in env, env[:500]
        assert pids_with(marker), "the stdio server is not running after its first use"

        # the servers' prompts are commands, their arguments the hint (what completion shows)
        listed = await s.execute("coder.listCommands", {})
        by_name = {c["name"]: c for c in listed["data"]["commands"]}
        prompt = by_name.get("mcp__everything__args-prompt")
        assert prompt is not None and prompt["source"] == "mcp", sorted(by_name)
        assert prompt["argumentHint"] == "<city> [state]", prompt
        fake.push(reply("sunny"))
        result = await s.execute("coder.input", {"text": '/mcp__everything__args-prompt "New York" NY'})
        assert result["status"] == "completed", result
        assert "What's weather in New York, NY?" in last_user_text(fake.message_requests[-1])
        missing = await s.execute("coder.input", {"text": "/mcp__everything__args-prompt"})
        assert missing["mode"] == "error" and "city" in missing["reply"], missing
        # resources: `@server:uri` attaches one; the model lists and reads them with tools
        uri = "demo://resource/static/document/architecture.md"
        fake.push(
            calls(
                tool_call("list_mcp_resources", {"server": "everything"}, "r1"),
                tool_call("read_mcp_resource", {"server": "everything", "uri": uri}, "r2"),
                tool_call("read_mcp_resource", {"server": "nobody", "uri": uri}, "r3"),
            ),
            reply("read"),
        )
        result = await s.execute("coder.input", {"text": f"summarise @everything:{uri} and mail bob@example.com"})
        assert result["status"] == "completed", result
        first, second = fake.message_requests[-2:]
        assert "Everything Server" in last_user_text(first) and "bob@example.com" in last_user_text(first)
        results = tool_results(second)
        assert uri in result_text(results["r1"]) and "Everything Server" in result_text(results["r2"])
        assert results["r3"]["is_error"], results["r3"]
        # list_changed: a tool that adds a resource makes the server say so; the list is fetched again
        before = await s.execute("coder.input", {"text": "/mcp"})
        count = {x["name"]: x["resources"] for x in before["data"]["servers"]}["everything"]
        gzip = {"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"}
        fake.push(calls(tool_call("mcp__everything__gzip-file-as-resource", gzip, "g1")), reply("zipped"))
        await s.execute("coder.input", {"text": "zip it"})
        assert "hello.gz" in result_text(tool_results(fake.message_requests[-1])["g1"])

        async def resources_now() -> int:
            status = await s.execute("coder.input", {"text": "/mcp"})
            return int({x["name"]: x["resources"] for x in status["data"]["servers"]}["everything"])

        for _ in range(50):
            if await resources_now() > count:
                break
            await asyncio.sleep(0.1)
        assert await resources_now() == count + 1

        status = await s.execute("coder.input", {"text": "/mcp"})
        assert "everything (user, stdio): ready" in status["reply"] and "mcp__time__get_current_time" in status["reply"]


async def test_progress_cancel_restart_reconnect_and_no_orphans(ws: Path, fake: Any) -> None:
    marker = uuid.uuid4().hex
    write_user_servers(ws, servers(marker))
    async with lsp_session(ws, env=api_env(fake)) as s:
        await s.execute("coder.input", {"text": "/permissions yolo"})
        long = {"duration": 30, "steps": 30}
        fake.push(calls(tool_call("mcp__everything__trigger-long-running-operation", long, "t1")))
        turn = asyncio.ensure_future(s.execute("coder.input", {"text": "run the long one"}))
        shown = await wait_for(lambda: [m for m in progress_messages(s) if "everything:" in m])
        assert shown, progress_messages(s)
        started = asyncio.get_running_loop().time()
        await s.execute("coder.interrupt", {})
        result = await asyncio.wait_for(turn, 10)
        assert result["status"] == "cancelled", result
        assert asyncio.get_running_loop().time() - started < 5  # not the 30 s of the operation
        # the server is still usable: the cancel went to the request, not the connection
        fake.push(calls(tool_call("mcp__everything__echo", {"message": "after"}, "t2")), reply("ok"))
        result = await s.execute("coder.input", {"text": "again"})
        assert "after" in result_text(tool_results(fake.message_requests[-1])["t2"])

        fake.push(calls(tool_call("mcp__everything__echo", {"message": "one"}, "e1")), reply("ok"))
        await s.execute("coder.input", {"text": "first"})
        before = pids_with(marker)
        assert before
        for pid in before:
            os.kill(pid, signal.SIGKILL)
        assert await wait_for(lambda: (p := pids_with(marker)) and set(p).isdisjoint(before)), "not restarted"
        fake.push(calls(tool_call("mcp__everything__echo", {"message": "two"}, "e2")), reply("ok"))
        await s.execute("coder.input", {"text": "second"})
        assert "two" in result_text(tool_results(fake.message_requests[-1])["e2"])
        # /mcp reconnect: a new process, the old one gone; an unknown name is a clear error
        before = pids_with(marker)
        again = await s.execute("coder.input", {"text": "/mcp reconnect everything"})
        assert again["status"] == "completed", again
        assert await wait_for(lambda: (p := pids_with(marker)) and set(p).isdisjoint(before)), "not reconnected"
        unknown = await s.execute("coder.input", {"text": "/mcp reconnect nobody"})
        assert unknown["error"]["code"] == "unknown_mcp_server", unknown
        fake.push(calls(tool_call("mcp__everything__echo", {"message": "three"}, "e3")), reply("ok"))
        await s.execute("coder.input", {"text": "third"})
        assert "three" in result_text(tool_results(fake.message_requests[-1])["e3"])
        server_process(s).kill()  # SIGKILL: no shutdown, no cleanup of ours runs
        gone = await wait_for(lambda: not pids_with(marker), 10)
        assert gone, f"left running after our server was killed: {pids_with(marker)}"
