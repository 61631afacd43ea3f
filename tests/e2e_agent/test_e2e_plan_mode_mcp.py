"""Plan mode and MCP tools (contract section 22): a tool its server annotates
`readOnlyHint: true` may run while planning (asked about like any MCP tool), one that is
not read-only is denied without a question. The server is the reference
`@modelcontextprotocol/server-everything` (tests/e2e_agent/mcp_support.py), whose `echo`
is read-only and `toggle-simulated-logging` is not, as its authors annotated them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from harness import lsp_session
from mcp_support import everything_stdio, write_user_servers

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("ignore:Unknown progress token")]


async def test_only_a_read_only_mcp_tool_runs_while_planning(ws: Path, fake: Any) -> None:
    write_user_servers(ws, {"everything": everything_stdio()})
    async with lsp_session(ws, env={**api_env(fake), "MCP_TIMEOUT": "30000"}) as s:
        s.answer_question = lambda p: "Allow once"
        fake.push(
            calls(
                tool_call("mcp__everything__echo", {"message": "read me"}, "t_echo"),
                tool_call("mcp__everything__toggle-simulated-logging", {}, "t_toggle"),
            ),
            calls(tool_call("exit_plan_mode", {"plan": "1. nothing"}, "t_exit")),
        )
        result = await asyncio.wait_for(s.execute("coder.input", {"text": "/plan look around"}), 90)
        assert result["status"] == "completed", result
        results = tool_results(fake.message_requests[-1])
        assert "read me" in result_text(results["t_echo"]) and not results["t_echo"].get("is_error")
        denied = results["t_toggle"]
        assert denied.get("is_error") and "readOnlyHint" in result_text(denied), denied
        asked = [q.message for q in s.questions]
        assert len(asked) == 1 and "mcp__everything__echo" in asked[0], asked  # the denied one is not asked
        assert [e["plan"] for e in s.events_of("planProposed")] == ["1. nothing"]
