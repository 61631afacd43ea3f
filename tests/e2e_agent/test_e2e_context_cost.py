"""`/context` and `/cost` (alias `/usage`) over LSP, against the strict fake (contract section 19)."""

from __future__ import annotations

import pytest
from agent_e2e import requests
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_context_counts_each_part_through_the_token_counting_api(agent):
    a = await agent()
    a.fake.push(reply("Ulaanbaatar.", usage={"input_tokens": 1200, "output_tokens": 7}))
    await a.turn("what is the capital of Mongolia? " + "padding words " * 200)
    result = await a.s.execute("coder.input", {"text": "/context"})
    assert (result["mode"], result["status"]) == ("command", "completed"), result
    data = result["data"]
    assert data["kind"] == "context" and data["source"] == "api"
    parts = {p["name"]: p["tokens"] for p in data["parts"]}
    assert list(parts) == ["system", "instructions", "tools", "skills", "agents", "mcp", "messages", "images"]
    # the whole request was counted by the API, the same request a turn sends
    assert a.fake.count_requests, "no count_tokens request"
    assert data["total"] in a.fake.counted
    full = [r for r in a.fake.count_requests if r.body.get("tools") and r.body.get("system")]
    assert full and "padding words" in str(full[-1].body["messages"])
    assert parts["system"] > 100 and parts["tools"] > 100 and parts["messages"] > 200
    assert parts["mcp"] == 0 and parts["images"] == 0
    assert data["window"] > 0 and 0 < data["percent"] <= 100
    assert data["lastResponseTokens"] == 1207  # what the last response reported: input + output
    assert "messages" in result["reply"] and "%" in result["reply"]
    assert len(requests(a.fake)) == 1  # counting made no model call


async def test_context_after_a_tool_loop_sends_a_valid_count_request(agent):
    a = await agent(permissions="yolo")
    a.fake.push({"toolCalls": [{"id": "toolu_ls1", "name": "ls", "input": {"path": "."}}]})
    a.fake.push(reply("There are two files."))
    await a.turn("list the files")
    result = await a.s.execute("coder.context", {})
    assert result["status"] == "completed", result
    full = [r for r in a.fake.count_requests if r.body.get("tools") and r.body.get("system")]  # the whole request
    kinds = [b["type"] for m in full[-1].body["messages"] for b in m["content"]]
    assert "tool_use" in kinds and "tool_result" in kinds
    assert not any(k in r.body for r in a.fake.count_requests for k in ("max_tokens", "stream"))


async def test_context_of_an_empty_session_still_counts_the_fixed_parts(agent):
    a = await agent()
    result = await a.s.execute("coder.input", {"text": "/context"})
    assert result["status"] == "completed", result
    parts = {p["name"]: p["tokens"] for p in result["data"]["parts"]}
    assert parts["messages"] == 0 and parts["system"] > 0 and parts["tools"] > 0


async def test_cost_sums_the_session_and_the_last_turn_and_prices_them(agent):
    a = await agent(
        model="claude-haiku-4-5",
        pricing={"claude-haiku-4-5": {"input": 2.0, "output": 10.0, "cacheRead": 0.5, "cacheWrite": 4.0}},
    )
    a.fake.push(
        reply(
            "one",
            usage={
                "input_tokens": 1000,
                "output_tokens": 100,
                "cache_read_input_tokens": 2000,
                "cache_creation_input_tokens": 500,
            },
        )
    )
    await a.turn("first question")
    a.fake.push(reply("two", usage={"input_tokens": 300, "output_tokens": 50}))
    await a.turn("second question")
    result = await a.s.execute("coder.input", {"text": "/cost"})
    assert (result["mode"], result["status"]) == ("command", "completed"), result
    data = result["data"]
    assert data["kind"] == "cost" and data["estimate"] is True
    s, last = data["session"], data["lastTurn"]
    assert (s["input"], s["output"], s["cacheRead"], s["cacheWrite"]) == (1300, 150, 2000, 500)
    assert (last["input"], last["output"], last["cacheRead"], last["cacheWrite"]) == (300, 50, 0, 0)
    # 1300*2 + 150*10 + 2000*0.5 + 500*4 per million
    assert s["usd"] == pytest.approx((1300 * 2 + 150 * 10 + 2000 * 0.5 + 500 * 4) / 1e6)
    assert last["usd"] == pytest.approx((300 * 2 + 50 * 10) / 1e6)
    assert "estimate" in result["reply"].lower()
    alias = await a.s.execute("coder.input", {"text": "/usage"})
    assert alias["data"] == data


async def test_cost_of_an_unpriced_model_gives_tokens_and_no_price(agent):
    a = await agent(model="claude-haiku-4-5", pricing={})
    a.fake.push(reply("one", usage={"input_tokens": 10, "output_tokens": 5}))
    await a.turn("hello")
    result = await a.s.execute("coder.cost", {})
    assert result["data"]["session"]["input"] == 10
    assert result["data"]["session"].get("usd") is None
    assert "no price" in result["reply"].lower()


async def test_a_new_session_starts_its_cost_from_zero(agent):
    a = await agent()
    result = await a.s.execute("coder.cost", {})
    assert result["status"] == "completed", result
    assert result["data"]["session"]["input"] == 0 and result["data"]["lastTurn"]["output"] == 0


async def test_context_falls_back_to_an_estimate_checked_against_the_last_response(agent):
    a = await agent()
    a.fake.push(reply("Fine.", usage={"input_tokens": 900, "output_tokens": 3}))
    await a.turn("how are you? " + "filler " * 300)
    a.fake.count_status = 529  # the counting endpoint is overloaded
    result = await a.s.execute("coder.context", {})
    assert result["status"] == "completed", result
    data = result["data"]
    assert data["source"] == "estimate" and "estimate" in data["note"]
    assert data["lastResponseTokens"] == 903 and "903" in result["reply"]
    parts = {p["name"]: p["tokens"] for p in data["parts"]}
    assert parts["messages"] > 300 and data["total"] == sum(parts.values())
    assert len(requests(a.fake)) == 1


async def test_context_and_cost_take_no_argument(agent):
    a = await agent()
    for name in ("context", "cost", "usage"):
        result = await a.s.execute("coder.input", {"text": f"/{name} everything"})
        assert result["status"] == "failed" and result["error"]["code"] == "invalid_argument", result
    assert a.fake.count_requests == []


async def test_context_while_a_tool_call_waits_for_approval_still_counts_through_the_api(agent):
    """The context then ends with a tool call that has no result yet: the count request must
    still be one the API accepts (the strict fake refuses an unanswered tool_use)."""
    import asyncio

    a = await agent(permissions="strict")
    release = asyncio.Event()

    async def later(params):
        await release.wait()
        return "Deny"

    a.s.answer_question = later
    a.fake.push({"toolCalls": [{"id": "toolu_wait", "name": "bash", "input": {"command": "touch x"}}]})
    a.fake.push(reply("Not allowed, fine."))
    turn = asyncio.ensure_future(a.turn("touch x"))
    await a.s.wait_for(lambda: a.s.questions, timeout=30)
    result = await a.s.execute("coder.context", {})
    release.set()
    assert (await turn)["status"] == "completed"
    assert result["status"] == "completed" and result["data"]["source"] == "api", result
    full = [r for r in a.fake.count_requests if r.body.get("tools") and r.body.get("system")]
    assert "toolu_wait" in str(full[-1].body["messages"])
