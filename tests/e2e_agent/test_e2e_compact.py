"""Compaction over LSP: /compact on request, and by itself when the window fills up."""

from __future__ import annotations

import pytest
from agent_e2e import all_text, requests
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def _first_user_text(request) -> str:
    first = request.body["messages"][0]["content"]
    return first if isinstance(first, str) else "".join(b.get("text", "") for b in first)


async def test_compact_replaces_the_context_with_the_summary(agent):
    a = await agent()
    a.fake.push(reply("The capital of Mongolia is Ulaanbaatar."))
    await a.turn("what is the capital of Mongolia? remember the word PELICAN")
    a.fake.push(reply("- user asked about Mongolia's capital: Ulaanbaatar\n- keyword: PELICAN"))

    result = await a.s.execute("coder.compact", {"args": "keep the keyword"})
    assert (result["mode"], result["status"]) == ("command", "completed"), result
    assert result["data"]["kind"] == "compacted"
    assert result["data"]["messagesBefore"] == 2
    assert "PELICAN" in result["data"]["summary"]
    ask = requests(a.fake)[-1]
    assert "Summarise this conversation" in all_text(ask) and "keep the keyword" in all_text(ask)
    event = a.s.events_of("contextCompacted")[-1]
    assert event["messagesBefore"] == 2 and "PELICAN" in event["summary"]

    a.fake.push(reply("PELICAN"))
    await a.turn("what was the keyword?")
    after = requests(a.fake)[-1]
    messages = after.body["messages"]
    assert len(messages) == 1, messages  # the summary and the new question, merged into one user message
    assert "compacted" in _first_user_text(after) and "PELICAN" in _first_user_text(after)
    assert "what was the keyword?" in _first_user_text(after)
    assert "capital of Mongolia?" not in _first_user_text(after)  # the old exchange itself is gone


async def test_compact_with_an_empty_context_does_nothing(agent):
    a = await agent()
    result = await a.s.execute("coder.input", {"text": "/compact"})
    assert result["status"] == "completed" and "Nothing to compact" in result["reply"]
    assert requests(a.fake) == []


async def test_a_full_window_is_compacted_before_the_next_step(agent):
    a = await agent(permissions="yolo", model="claude-haiku-4-5")
    # the first step reports a nearly full window (claude-haiku-4-5: 200k) and calls a tool
    a.fake.push(
        {
            "toolCalls": [{"id": "toolu_ls", "name": "ls", "input": {"path": "."}}],
            "usage": {"input_tokens": 170_000, "output_tokens": 10},
        }
    )
    a.fake.push(reply("- listed the workspace; app.py and README.md exist"))  # the summary
    a.fake.push(reply("Done: the workspace has app.py and README.md."))
    result = await a.turn("list the workspace")
    assert result["status"] == "completed", result
    assert result["reply"] == "Done: the workspace has app.py and README.md."
    sent = requests(a.fake)
    assert len(sent) == 3
    assert "Summarise this conversation" in all_text(sent[1])
    final = sent[2].body["messages"]
    assert len(final) == 1 and "app.py and README.md exist" in _first_user_text(sent[2])
    notices = [e["message"] for e in a.s.events_of("notice")]
    assert any("85% full" in n for n in notices), notices
