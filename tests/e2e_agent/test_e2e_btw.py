"""`/btw <question>` (contract section 12): a side question answered while a turn runs,
from the context as it is, without tools, recorded nowhere, cancellable alone."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_e2e import all_text, calls, tool_call
from anthropic_server import hang, reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

QUESTION = "what does PELICAN-7 stand for?"


async def start_slow_turn(a, seconds: float = 3):
    a.fake.push(calls(tool_call("bash", {"command": f"sleep {seconds}; echo slept"}, "toolu_slow")))
    _, turn = a.s.start("coder.input", {"text": "run the slow check, PELICAN-7 is the code name"}, token="slow")
    await a.s.wait_event("toolCallBegin")
    return turn


async def test_btw_answers_during_a_running_turn_and_leaves_no_trace(agent):
    a = await agent(permissions="yolo")
    turn = await start_slow_turn(a)
    a.fake.push(reply("It is the code name you gave."), reply("The check passed."), reply("next"))

    side = await asyncio.wait_for(a.s.execute("coder.input", {"text": f"/btw {QUESTION}"}), 10)
    assert not turn.done()  # answered while the turn still runs: it did not wait in line
    assert (side["status"], side["mode"], side["reply"]) == ("completed", "nl", "It is the code name you gave.")
    assert side["data"]["kind"] == "usage"

    result = await asyncio.wait_for(turn, 15)
    assert (result["status"], result["reply"]) == ("completed", "The check passed."), result
    first, aside, after = a.fake.message_requests
    # the same prefix as the turn: system prompt and tools
    assert json.dumps(aside.body["system"]) == json.dumps(first.body["system"])
    assert json.dumps(aside.body["tools"]) == json.dumps(first.body["tools"])
    # the context as it was (the pending tool call left out), then the question
    assert "PELICAN-7 is the code name" in all_text(aside)
    assert aside.body["messages"][-1]["role"] == "user" and QUESTION in all_text(aside)
    assert "toolu_slow" not in json.dumps(aside.body["messages"])
    # the running turn was not disturbed and never saw the question
    assert QUESTION not in json.dumps(after.body) and "slept" in all_text(after)

    nxt = await a.turn("anything else?")
    assert nxt["reply"] == "next"
    last = json.dumps(a.fake.message_requests[-1].body["messages"])
    assert QUESTION not in last and "code name you gave" not in last
    # and the user's view (events) carries no trace of the side question in the session log
    assert all(QUESTION not in e.get("text", "") for e in a.s.events_of("userMessage"))


async def test_cancelling_btw_cancels_it_alone(agent):
    a = await agent(permissions="yolo")
    turn = await start_slow_turn(a, seconds=2)
    a.fake.push(hang(after_events=2), reply("The check passed."))
    _, side = a.s.start("coder.input", {"text": f"/btw {QUESTION}"}, token="btw-token")
    await a.s.wait_for(lambda: len(a.fake.message_requests) == 2)
    await asyncio.sleep(0.2)
    a.s.cancel_progress("btw-token")
    cancelled = await asyncio.wait_for(side, 10)
    assert cancelled["status"] == "cancelled"
    assert not turn.done()
    result = await asyncio.wait_for(turn, 15)
    assert (result["status"], result["reply"]) == ("completed", "The check passed."), result
    await a.s.wait_for(lambda: a.s.progress_of("btw-token") and a.s.progress_of("btw-token")[-1].kind == "end")
    assert a.s.progress_of("btw-token")[0].title == "coder"


async def test_btw_on_an_idle_session_and_without_a_question(agent):
    a = await agent()
    a.fake.push(reply("Nothing yet."))
    result = await a.turn("/btw what have we done so far?")
    assert result["reply"] == "Nothing yet."
    assert len(a.fake.message_requests[0].body["messages"]) == 1
    empty = await a.turn("/btw")
    assert empty["status"] == "failed" and empty["error"]["code"] == "invalid_argument"
