"""Agent turns in the submission frame: read-only commands answer while a turn runs,
`/clear` waits for the turn (the context stays valid for the real API), and a failure
in automatic compaction still ends the turn properly and keeps `/undo` working."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_e2e import blocks, calls, tool_call
from anthropic_server import hang, reply, status_error

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def of_submission(s: Any, submission_id: str) -> list[dict[str, Any]]:
    return [e for e in s.events if e.get("submissionId") == submission_id]


def orphaned_tool_results(body: dict[str, Any]) -> list[str]:
    """tool_result ids without a tool_use in the assistant message right before them."""
    orphans: list[str] = []
    messages = body["messages"]
    for n, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else []
        results = [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]
        if not results:
            continue
        previous = messages[n - 1] if n > 0 else None
        uses = set()
        if previous is not None and previous["role"] == "assistant" and isinstance(previous["content"], list):
            uses = {b["id"] for b in previous["content"] if b.get("type") == "tool_use"}
        orphans += [r for r in results if r not in uses]
    return orphans


async def test_read_only_commands_answer_while_a_turn_runs(agent):
    a = await agent()
    a.fake.push(hang(after_events=4))
    _, turn = a.s.start("coder.input", {"text": "think for a long time"})
    await a.s.wait_event("assistantDelta")
    for command, arg in [
        ("coder.sessions", {}),
        ("coder.diff", {}),
        ("coder.model", {}),
        ("coder.help", {}),
        ("coder.permissions", {}),
        ("coder.listCommands", {}),
    ]:
        result = await asyncio.wait_for(a.s.execute(command, arg), 5)
        assert result["status"] == "completed", (command, result)
    assert not turn.done()
    await a.s.execute("coder.interrupt", {})
    result = await asyncio.wait_for(turn, 10)
    assert result["status"] == "cancelled"
    last = of_submission(a.s, result["submissionId"])[-1]
    assert (last["type"], last["status"]) == ("turnFinished", "cancelled")


async def test_clear_during_a_turn_waits_and_leaves_a_valid_context(agent):
    a = await agent(permissions="yolo")
    a.fake.push(
        calls(tool_call("bash", {"command": "sleep 1; echo slept"}, "toolu_sleepy")),
        reply("done sleeping"),
    )
    _, turn = a.s.start("coder.input", {"text": "sleep a second"})
    await a.s.wait_event("toolCallBegin")
    _, clear = a.s.start("coder.clear", {})
    queued = await a.s.wait_event("queued", timeout=5)
    assert queued["position"] == 1
    assert not clear.done()
    first = await asyncio.wait_for(turn, 15)
    assert (first["status"], first["reply"]) == ("completed", "done sleeping")
    cleared = await asyncio.wait_for(clear, 10)
    assert cleared["status"] == "completed"
    assert queued["submissionId"] == cleared["submissionId"]
    a.fake.push(reply("fresh start"))
    after = await a.turn("hello again")
    assert after["status"] == "completed", after
    for request in a.fake.message_requests:
        assert orphaned_tool_results(request.body) == [], request.body["messages"]
    last = a.fake.message_requests[-1].body["messages"]
    assert len(last) == 1 and "hello again" in "".join(b.get("text", "") for b in blocks(a.fake.message_requests[-1]))


async def test_a_failed_automatic_compaction_ends_the_turn_and_undo_still_works(agent):
    a = await agent(permissions="yolo")
    target = a.root / "written-before-compaction.txt"
    a.fake.push(
        {
            "toolCalls": [{"id": "toolu_w", "name": "write", "input": {"path": target.name, "content": "new\n"}}],
            "usage": {"input_tokens": 170_000, "output_tokens": 10},
        },
        status_error(400, message="the summary request was refused"),
    )
    result = await a.turn("write the file")
    assert result["status"] == "failed", result
    assert result["error"]["code"] != "internal_error", result
    events = of_submission(a.s, result["submissionId"])
    assert events[-1]["type"] == "turnFinished" and events[-1]["status"] == "failed", events[-3:]
    await a.s.wait_for(lambda: target.exists())
    undo = await a.s.execute("coder.undo", {})
    assert undo["status"] == "completed", undo
    assert undo["data"]["submissionId"] == result["submissionId"], undo
    assert not target.exists()


async def test_a_turn_queued_behind_a_turn_runs_after_it(agent):
    a = await agent()
    a.fake.push(reply(["slow ", "one"], delayMs=150), reply("two"))
    _, first = a.s.start("coder.input", {"text": "first"})
    await a.s.wait_event("assistantDelta")
    _, second = a.s.start("coder.input", {"text": "second"})
    queued = await a.s.wait_event("queued", timeout=5)
    assert queued["position"] == 1
    r1, r2 = await asyncio.wait_for(asyncio.gather(first, second), 15)
    assert (r1["reply"], r2["reply"]) == ("slow one", "two")
    second_request = a.fake.message_requests[-1].body["messages"]
    assert [m["role"] for m in second_request] == ["user", "assistant", "user"]
    for r in (r1, r2):
        assert of_submission(a.s, r["submissionId"])[-1]["type"] == "turnFinished"


async def test_model_switched_during_a_turn_applies_from_the_next_request(agent):
    a = await agent(permissions="yolo", model="claude-sonnet-4-5")
    a.fake.push(
        calls(tool_call("bash", {"command": "sleep 0.5; echo ok"}, "toolu_wait")),
        reply("finished"),
    )
    _, turn = a.s.start("coder.input", {"text": "wait a bit"})
    await a.s.wait_event("toolCallBegin")
    switched = await asyncio.wait_for(a.s.execute("coder.model", {"args": "claude-haiku-4-5"}), 5)
    assert switched["status"] == "completed" and not turn.done()
    result = await asyncio.wait_for(turn, 15)
    assert result["status"] == "completed", result
    models = [r.body["model"] for r in a.fake.message_requests]
    assert models == ["claude-sonnet-4-5", "claude-haiku-4-5"]
    await a.s.execute("coder.model", {"args": "claude-sonnet-4-5"})


async def test_a_code_action_ends_with_turn_finished(agent):
    a = await agent()
    uri = (a.root / "app.py").as_uri()
    a.fake.push(reply("It adds badly."))
    argument = {
        "uri": uri,
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}},
        "action": "explain",
    }
    result = await a.s.execute("coder.codeAction", argument)
    assert (result["status"], result["reply"]) == ("completed", "It adds badly.")
    events = of_submission(a.s, result["submissionId"])
    assert events[-1]["type"] == "turnFinished" and events[-1]["status"] == "completed"
