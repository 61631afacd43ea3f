"""`/compact --keep-last N` keeps the last N exchanges verbatim after the summary (also
after a resume); `/init` is a built-in prompt command that a file can replace."""

from __future__ import annotations

import json

import pytest
from agent_e2e import all_text
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def three_exchanges(a) -> None:
    a.fake.push(reply("ALPHA-ANSWER"), reply("BRAVO-ANSWER"), reply("CHARLIE-ANSWER"))
    for q in ("alpha question", "bravo question", "charlie question"):
        await a.turn(q)


async def test_compact_keep_last_keeps_the_last_exchanges_verbatim(agent):
    a = await agent()
    await three_exchanges(a)
    a.fake.push(reply("- asked alpha and bravo"))
    result = await a.s.execute("coder.input", {"text": "/compact --keep-last 1 mention alpha"})
    assert result["status"] == "completed", result
    assert result["data"]["messagesBefore"] == 4
    ask = a.fake.message_requests[-1]
    assert "alpha question" in all_text(ask) and "bravo question" in all_text(ask)
    assert "charlie question" not in all_text(ask) and "mention alpha" in all_text(ask)

    a.fake.push(reply("delta answer"))
    await a.turn("delta question")
    messages = a.fake.message_requests[-1].body["messages"]
    text = json.dumps(messages)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert "asked alpha and bravo" in text and "charlie question" in text and "CHARLIE-ANSWER" in text
    assert "alpha question" not in text and "BRAVO-ANSWER" not in text

    # the log keeps the kept exchanges: a resumed session has the same context
    sid = result["sessionId"]
    await a.s.execute("coder.new", {})
    resumed = await a.s.execute("coder.resume", {"args": sid})
    assert resumed["status"] == "completed", resumed
    a.fake.push(reply("echo"))
    await a.turn("echo question")
    after = json.dumps(a.fake.message_requests[-1].body["messages"])
    assert "asked alpha and bravo" in after and "CHARLIE-ANSWER" in after and "delta answer" in after
    assert "alpha question" not in after


async def test_compact_keep_last_more_than_there_is_and_bad_numbers(agent):
    a = await agent()
    await three_exchanges(a)
    result = await a.s.execute("coder.input", {"text": "/compact --keep-last 5"})
    assert result["status"] == "completed" and "Nothing to compact" in result["reply"]
    bad = await a.s.execute("coder.input", {"text": "/compact --keep-last two"})
    assert bad["status"] == "failed" and bad["error"]["code"] == "invalid_argument"
    assert len(a.fake.message_requests) == 3  # no summary was asked for
    a.fake.push(reply("- everything"))
    result = await a.s.execute("coder.input", {"text": "/compact --keep-last=0"})
    assert result["data"]["messagesBefore"] == 6


async def test_init_asks_the_agent_to_write_agents_md(agent):
    a = await agent()
    catalog = {c["name"]: c for c in (await a.s.execute("coder.listCommands", {}))["data"]["commands"]}
    assert (catalog["init"]["kind"], catalog["init"]["source"]) == ("prompt", "builtin")
    a.fake.push(reply("Wrote AGENTS.md."))
    result = await a.turn("/init focus on the tests")
    assert (result["mode"], result["reply"]) == ("nl", "Wrote AGENTS.md.")
    prompt = all_text(a.fake.message_requests[0])
    assert "AGENTS.md" in prompt and "focus on the tests" in prompt


async def test_a_file_replaces_init(agent, shared_session):
    """The user's own file (the harness's XDG_CONFIG_HOME); a workspace's never replaces a
    built-in (tests/security/test_untrusted_commands.py)."""
    root = shared_session.root
    path = root.parent / f".xdg-{root.name}" / "coder" / "commands" / "init.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\ndescription: our own init\n---\nOUR-INIT $ARGUMENTS\n")
    try:
        a = await agent()
        catalog = {c["name"]: c for c in (await a.s.execute("coder.listCommands", {}))["data"]["commands"]}
        assert (catalog["init"]["source"], catalog["init"]["description"]) == ("user", "our own init")
        a.fake.push(reply("done"))
        await a.turn("/init now")
        assert "OUR-INIT now" in all_text(a.fake.message_requests[0])
    finally:
        path.unlink()
