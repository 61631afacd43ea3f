"""Text a model request cannot carry as is: a lone surrogate in a prompt (valid in JSON
as `\\ud800`, not in UTF-8) becomes U+FFFD instead of an internal error."""

from __future__ import annotations

import pytest
from agent_e2e import calls, last_user_text, requests, tool_call
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_a_lone_surrogate_in_a_prompt_is_replaced(agent):
    a = await agent()
    a.fake.push(reply("understood"))
    result = await a.turn("what is \ud800 this character?")
    assert result["status"] == "completed", result
    assert result["reply"] == "understood"
    sent = last_user_text(requests(a.fake)[0])
    assert "what is \ufffd this character?" in sent


async def test_a_nul_in_a_prompt_reaches_the_model(agent):
    a = await agent()
    a.fake.push(reply("seen"))
    result = await a.turn("a\x00b")
    assert result["status"] == "completed", result
    assert "a\x00b" in last_user_text(requests(a.fake)[0])


async def test_whitespace_only_model_text_before_a_tool_call_is_not_replayed(agent):
    """Models often stream "\\n\\n" before a tool call: replaying it as a text block is
    refused by the real API (text blocks must contain non-whitespace text)."""
    a = await agent(permissions="yolo")
    a.fake.push(calls(tool_call("ls", {}, "toolu_ws1"), text="\n\n"), reply("listed"))
    result = await a.turn("list")
    assert result["status"] == "completed", result
    assert result["reply"] == "listed"


async def test_whitespace_only_partial_text_of_a_failed_stream_is_not_replayed(agent):
    a = await agent()
    a.fake.push(
        {
            "text": ["  ", "\n"],
            "status": 200,
            "fault": "error_event",
            "afterEvents": 4,
            "errorType": "invalid_request_error",
        }
    )
    await a.turn("first")
    a.fake.push(reply("second answer"))
    result = await a.turn("second")
    assert result["status"] == "completed", result
