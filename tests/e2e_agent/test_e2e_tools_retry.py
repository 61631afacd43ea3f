"""A stream that breaks after some text and is retried: the partial text of the failed
attempt is dropped everywhere: in the turn's reply and recorded message, in a compaction
summary, and on the client (an `assistantRestart` event tells it to clear what it showed)."""

from __future__ import annotations

import pytest
from agent_e2e import all_text, requests
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

PARTIAL = ["PARTIAL-ONE ", "PARTIAL-TWO "]


def broken() -> dict:
    """Streams the two partial deltas (events 2 and 3), then the connection drops."""
    return {"text": PARTIAL, "fault": "drop", "afterEvents": 4}


def streamed_after_last_restart(events: list[dict]) -> str:
    shown: list[str] = []
    for e in events:
        if e["type"] == "assistantRestart":
            shown.clear()
        elif e["type"] == "assistantDelta":
            shown.append(e["text"])
    return "".join(shown)


async def test_a_retried_turn_keeps_only_the_clean_attempt(agent):
    a = await agent()
    a.fake.push(broken(), reply("clean answer"))
    result = await a.turn("say something")
    assert result["status"] == "completed", result
    assert result["reply"] == "clean answer"
    deltas = "".join(e["text"] for e in a.s.events_of("assistantDelta"))
    assert "PARTIAL-ONE" in deltas  # the client did see the partial text stream
    assert a.s.events_of("assistantRestart"), "nothing told the client to drop the partial text"
    assert streamed_after_last_restart(a.s.events) == "clean answer"
    a.fake.push(reply("next"))
    await a.turn("and again")
    assert "PARTIAL" not in all_text(requests(a.fake)[-1])


async def test_a_retried_compaction_keeps_only_the_clean_summary(agent):
    a = await agent()
    a.fake.push(reply("Noted: OSPREY."))
    await a.turn("remember OSPREY")
    a.fake.push(broken(), reply("- keyword: OSPREY"))
    result = await a.s.execute("coder.compact", {})
    assert result["status"] == "completed", result
    assert "PARTIAL" not in result["data"]["summary"], result["data"]["summary"]
    a.fake.push(reply("OSPREY"))
    await a.turn("what was it?")
    text = all_text(requests(a.fake)[-1])
    assert "OSPREY" in text and "PARTIAL" not in text
