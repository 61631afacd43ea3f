"""The ACP client's `mcpServers` (session/new) connected through the MCP client: the user's own
servers (the client is their editor), started without /trust, their tools `mcp__<server>__<tool>`."""

from __future__ import annotations

import sys

import pytest
from acp import RequestError, helpers
from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio
from acp_support import acp_agent
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply

TIME_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]


def time_server(name: str = "time") -> McpServerStdio:
    """mcp-server-time (PyPI, in the venv), as an editor lists it in `session/new`."""
    return McpServerStdio(name=name, command=sys.executable, args=TIME_ARGS, env=[])


async def test_the_clients_mcp_servers_start_without_trust_and_reach_the_model(ws, fake):
    # the workspace's own .mcp.json names a server: it waits for /trust, the client's does not
    (ws / ".mcp.json").write_text('{"mcpServers": {"repo": {"command": "sh", "args": ["-c", "touch pwned"]}}}')
    fake.push(
        calls(tool_call("mcp__time__get_current_time", {"timezone": "Europe/Paris"}, "t1")),
        reply("It is late."),
    )
    async with acp_agent(ws, {**api_env(fake), "MCP_TIMEOUT": "30000"}) as a:
        mcp = a.init.agent_capabilities.mcp_capabilities
        assert mcp.http and mcp.sse
        for bad, why in (
            ([time_server("a__b")], "name"),
            ([time_server(), time_server()], "twice"),
            ([HttpMcpServer(type="http", name="web", url="file:///etc/passwd", headers=[])], "http"),
        ):
            with pytest.raises(RequestError) as err:
                await a.conn.new_session(cwd=str(ws), mcp_servers=bad)
            assert err.value.code == -32602 and why in str(err.value), err.value
        server = time_server()
        server.env = [EnvVariable(name="TZ", value="UTC")]
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
        a.client.answer = lambda q: "Allow once"  # trusted to start is not allowed to run unasked
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("what time is it in Paris?")])
        assert answer.stop_reason == "end_turn"
        ((call, _),) = a.client.questions
        assert "mcp__time__get_current_time" in call.title, call.title
        first, second = fake.message_requests[-2:]
        offered = {t["name"] for t in first.body["tools"]}
        assert "mcp__time__get_current_time" in offered and not any(n.startswith("mcp__repo__") for n in offered)
        result = tool_results(second)["t1"]
        assert "Europe/Paris" in result_text(result) and not result.get("is_error"), result
        assert "It is late." in a.client.text(sid)
        with pytest.raises(RequestError) as err:  # session/load checks its servers the same way
            await a.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[time_server("no way")])
        assert err.value.code == -32602 and "no way" in str(err.value)
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("/mcp")])
        shown = a.client.text(sid)
        assert "time" in shown and "repo" in shown and "untrusted" in shown, shown
    assert not (ws / "pwned").exists()
