"""Extended thinking through a tool loop: the thinking block comes back first, signed, in
the replayed assistant message; budget and max_tokens stay valid for the real API (the
strict fake checks all of it)."""

from __future__ import annotations

import pytest
from agent_e2e import requests, tool_call
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


@pytest.mark.parametrize(("budget", "max_out"), [(1024, 8192), (100, 8192), (8192, 4096)])
async def test_a_thinking_tool_loop_is_valid_for_the_api(agent, budget, max_out):
    # a model that thinks on a token budget (the 5 generation and the default alias think adaptively)
    a = await agent(permissions="yolo", model="claude-haiku-4-5", thinkingBudget=budget, maxOutputTokens=max_out)
    a.fake.push(
        reply("", thinking="I should list the files.", signature="sig-1", toolCalls=[tool_call("ls", {}, "toolu_th1")]),
        reply("There are files.", thinking="Done.", signature="sig-2"),
    )
    result = await a.turn("what is here?")
    assert result["status"] == "completed", result
    assert result["reply"] == "There are files."
    first, second = requests(a.fake)
    thinking = first.body["thinking"]
    assert thinking["type"] == "enabled" and 1024 <= thinking["budget_tokens"] < first.body["max_tokens"]
    replayed = second.body["messages"][1]["content"]
    assert replayed[0] == {"type": "thinking", "thinking": "I should list the files.", "signature": "sig-1"}
