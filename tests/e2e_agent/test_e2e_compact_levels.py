"""Compaction in levels (contract section 19): old tool results are cleared first, with no
model call; the model summarises only when that was not enough."""

from __future__ import annotations

import pytest
from agent_e2e import all_text, requests, tool_results
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

BIG = "".join(f"line {n:05d} of the big file: " + "x" * 60 + "\n" for n in range(600))  # ~50 KB


def _read(call_id: str, path: str) -> dict:
    return {"toolCalls": [{"id": call_id, "name": "read", "input": {"path": path}}]}


async def test_a_full_window_clears_old_tool_results_before_summarising(agent):
    # a model the catalog does not know: its window is contextLimitTokens (20,000)
    a = await agent(
        permissions="yolo", model="claude-tiny-1", contextLimitTokens=20_000, compact={"keepToolResults": 1}
    )
    (a.root / "big.txt").write_text(BIG)
    (a.root / "small.txt").write_text("tiny\n")
    a.fake.push(_read("toolu_big", "big.txt"), reply("Read it."))
    await a.turn("read big.txt")
    # the next turn's first step reports a nearly full window (80% is the threshold); clearing
    # the big result (~12,000 tokens) brings it under half the window: no summary
    a.fake.push({**_read("toolu_small", "small.txt"), "usage": {"input_tokens": 17_000, "output_tokens": 10}})
    a.fake.push(reply("Done."))
    result = await a.turn("now read small.txt")
    assert result["status"] == "completed", result
    sent = requests(a.fake)
    assert len(sent) == 4, [all_text(r)[:80] for r in sent]  # no summary request
    assert not any("Summarise this conversation" in all_text(r) for r in sent)
    last = sent[-1]
    results = tool_results(last)
    big = str(results["toolu_big"]["content"])
    assert "line 00000" in big and "line 00599" not in big  # its first lines stay
    assert "cleared" in big  # and a note says what was cleared
    assert "tiny" in str(results["toolu_small"]["content"])  # the last step's result is intact
    event = a.s.events_of("contextCompacted")[-1]
    assert event["level"] == "clear" and event["tokensAfter"] < event["tokensBefore"]
    assert any("cleared" in e["message"] for e in a.s.events_of("notice"))

    # the cleared context is the session's from now on, and survives a /resume
    session = result["sessionId"]
    await a.s.execute("coder.new", {})
    resumed = await a.s.execute("coder.resume", {"args": session})
    assert resumed["status"] == "completed", resumed
    a.fake.push(reply("ok"))
    await a.turn("and now?")
    after = requests(a.fake)[-1]
    assert "line 00599" not in all_text(after) and "cleared" in str(tool_results(after)["toolu_big"]["content"])


async def test_a_clear_that_leaves_over_half_the_window_is_followed_by_a_summary(agent):
    a = await agent(
        permissions="yolo", model="claude-tiny-1", contextLimitTokens=20_000, compact={"keepToolResults": 1}
    )
    (a.root / "big.txt").write_text(BIG)
    a.fake.push(_read("toolu_big", "big.txt"), reply("Read it."))
    await a.turn("read big.txt")
    a.fake.push({**_read("toolu_r", "README.md"), "usage": {"input_tokens": 19_500, "output_tokens": 10}})
    a.fake.push(reply("- read big.txt and README.md"), reply("Done."))
    result = await a.turn("now the readme, and keep this long request in mind: " + "detail " * 8000)
    assert result["status"] == "completed", result
    sent = requests(a.fake)
    assert len(sent) == 5 and "Summarise this conversation" in all_text(sent[3])
    assert "line 00599" not in all_text(sent[3])  # the summary was asked of the cleared conversation
    levels = [e["level"] for e in a.s.events_of("contextCompacted")]
    assert levels[-2:] == ["clear", "summary"]


async def test_when_clearing_is_not_enough_the_model_summarises(agent):
    a = await agent(permissions="yolo", model="claude-haiku-4-5")
    a.fake.push({**_read("toolu_s", "README.md"), "usage": {"input_tokens": 170_000, "output_tokens": 10}})
    a.fake.push(reply("- read README.md"))  # the summary
    a.fake.push(reply("Done."))
    result = await a.turn("read the readme")
    assert result["status"] == "completed", result
    sent = requests(a.fake)
    assert len(sent) == 3 and "Summarise this conversation" in all_text(sent[1])
    event = a.s.events_of("contextCompacted")[-1]
    assert event["level"] == "summary" and event["tokensBefore"] == 170_010


async def test_compact_clear_runs_only_the_first_level_and_reports_tokens(agent):
    a = await agent(permissions="yolo", compact={"keepToolResults": 1})
    (a.root / "big.txt").write_text(BIG)
    a.fake.push(_read("toolu_b1", "big.txt"), _read("toolu_b2", "README.md"), reply("Both read."))
    await a.turn("read big.txt then README.md")
    result = await a.s.execute("coder.input", {"text": "/compact --clear"})
    assert (result["mode"], result["status"]) == ("command", "completed"), result
    data = result["data"]
    assert data["kind"] == "compacted" and data["level"] == "clear"
    assert data["tokensBefore"] > data["tokensAfter"] > 0
    assert data["cleared"] == 1
    assert "clear" in result["reply"] and str(data["tokensBefore"]) in result["reply"].replace(",", "")
    assert len(requests(a.fake)) == 3  # no model call
    a.fake.push(reply("ok"))
    await a.turn("next")
    results = tool_results(requests(a.fake)[-1])
    assert "cleared" in str(results["toolu_b1"]["content"]) and "line 00599" not in str(results["toolu_b1"])
    assert "# demo" in str(results["toolu_b2"]["content"])  # the last step kept


async def test_compact_clear_with_nothing_old_says_so(agent):
    a = await agent()
    a.fake.push(reply("hi"))
    await a.turn("hello")
    result = await a.s.execute("coder.input", {"text": "/compact --clear"})
    assert result["status"] == "completed" and "Nothing to clear" in result["reply"], result


async def test_compact_summary_reports_its_level_and_tokens(agent):
    a = await agent()
    a.fake.push(reply("Ulaanbaatar.", usage={"input_tokens": 5000, "output_tokens": 5}))
    await a.turn("capital of Mongolia? " + "context " * 400)
    a.fake.push(reply("- the capital is Ulaanbaatar"))
    result = await a.s.execute("coder.compact", {})
    data = result["data"]
    assert data["level"] == "summary" and data["tokensBefore"] == 5005 and 0 < data["tokensAfter"] < 5005
