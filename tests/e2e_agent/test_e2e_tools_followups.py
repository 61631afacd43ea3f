"""Conversations the strict fake must accept after the unusual endings of a tool loop:
maxSteps reached with calls pending, several calls in one reply with one denied, a call
whose input is not an object of the schema, a tool that does not exist."""

from __future__ import annotations

import pytest
from agent_e2e import calls, requests, tool_call, tool_results
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_max_steps_mid_loop_then_another_turn(agent):
    a = await agent(permissions="yolo", maxSteps=1)
    a.fake.push(calls(tool_call("ls", {}, "toolu_m1")))
    first = await a.turn("look around")
    assert first["status"] in ("completed", "failed"), first
    a.fake.push(reply("fine"))
    second = await a.turn("and now?")
    assert second["status"] == "completed", second


async def test_several_calls_one_denied(agent):
    a = await agent(permissions="balanced", sandbox={"autoAllow": False})  # so `touch` is asked
    a.s.answer_question = lambda p: next(x for x in p.actions if x.title == "Deny")
    a.fake.push(
        calls(
            tool_call("ls", {}, "toolu_d1"),
            tool_call("bash", {"command": "touch nope"}, "toolu_d2"),  # `echo` only reads: never asked
            tool_call("read", {"path": "README.md"}, "toolu_d3"),
        ),
        reply("ok"),
    )
    result = await a.turn("do three things")
    assert result["status"] == "completed", result
    results = tool_results(requests(a.fake)[1])
    assert set(results) == {"toolu_d1", "toolu_d2", "toolu_d3"}
    assert results["toolu_d2"].get("is_error")


async def test_bad_input_and_unknown_tool(agent):
    a = await agent(permissions="yolo")
    a.fake.push(
        calls(
            tool_call("read", {"path": 42}, "toolu_b1"),
            tool_call("no_such_tool", {"x": 1}, "toolu_b2"),
            tool_call("edit", {"path": "README.md"}, "toolu_b3"),
        ),
        reply("recovered"),
    )
    result = await a.turn("try things")
    assert result["status"] == "completed", result
    results = tool_results(requests(a.fake)[1])
    assert set(results) == {"toolu_b1", "toolu_b2", "toolu_b3"}
    assert all(r.get("is_error") for r in results.values())
