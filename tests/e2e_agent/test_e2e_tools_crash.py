"""A server killed while a tool runs leaves a session whose log ends with the model's
tool call and no result. Resuming it and going on must still be a conversation the real
Messages API accepts (the strict fake checks it: every tool_use answered)."""

from __future__ import annotations

import asyncio

import pytest
from agent_e2e import api_env, calls, tool_call
from anthropic_server import reply
from harness import lsp_session, server_process

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_resume_after_a_kill_during_a_tool_call(ws, fake):
    fake.push(calls(tool_call("bash", {"command": "sleep 30"}, "toolu_slow")))
    # the user's preset (a workspace file's yolo would wait for /trust): the sleep really runs
    async with lsp_session(ws, env=api_env(fake), init_options={"permissions": "yolo"}) as s:
        _, answer = s.start("coder.input", {"text": "run the slow thing"})
        await s.wait_for(lambda: s.events_of("toolCallBegin"), timeout=20)
        sid = s.events_of("toolCallBegin")[0]["sessionId"]
        proc = server_process(s)
        proc.kill()
        await asyncio.wait_for(proc.wait(), 10)
        answer.cancel()

    fake.push(reply("resumed fine"))
    async with lsp_session(ws, env=api_env(fake)) as s:
        resumed = await s.execute("coder.resume", {"args": sid})
        assert resumed["status"] == "completed", resumed
        result = await s.execute("coder.input", {"text": "go on"})
        assert result["status"] == "completed", result
        assert result["reply"] == "resumed fine"
