"""Cancelling a turn: mid-stream (the model stream is closed), mid-tool (the shell's
processes are gone, the next turn still works), mid-approval (not a denial), and a stale
cancel that must not touch a newer submission."""

from __future__ import annotations

import asyncio
import os

import pytest
from agent_e2e import calls, result_text, tool_call, tool_results
from anthropic_server import hang, reply
from harness import JsonRpcException, server_process

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z":  # a zombie is already dead
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def sleepers(server_pid: int, argument: str) -> list[int]:
    found = []
    for pid in descendants(server_pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", argument.encode()]:
            found.append(pid)
    return found


async def test_cancel_mid_stream_closes_the_model_stream(agent):
    a = await agent()
    a.fake.push(hang(after_events=4))
    disconnects = len(a.fake.disconnects)
    token = "cancel-mid-stream"
    _, answer = a.s.start("coder.input", {"text": "talk to me"}, token=token)
    await a.s.wait_event("assistantDelta")
    await asyncio.sleep(0.1)
    assert not answer.done()
    a.s.cancel_progress(token)
    result = await asyncio.wait_for(answer, 10)
    assert result["status"] == "cancelled", result
    assert result["mode"] == "nl"
    # the server saw the client (coder-ls) close the stream
    await a.s.wait_for(lambda: len(a.fake.disconnects) > disconnects, timeout=5)
    assert a.fake.outcomes[-1] == "disconnected"
    await a.s.wait_for(lambda: a.s.progress_of(token) and a.s.progress_of(token)[-1].kind == "end")
    assert a.s.progress_of(token)[-1].message == "Cancelled"
    assert [e["status"] for e in a.s.events_of("turnFinished")] == ["cancelled"]
    # the session goes on
    a.fake.push(reply("still here"))
    again = await a.turn("are you there?")
    assert again["status"] == "completed" and again["reply"] == "still here"
    assert a.fake.message_requests[-1].body["messages"][0]["content"][0]["text"] == "talk to me"


async def test_cancel_request_mid_stream_answers_request_cancelled(agent):
    a = await agent()
    a.fake.push(hang(after_events=4))
    disconnects = len(a.fake.disconnects)
    msg_id, answer = a.s.start("coder.input", {"text": "talk"})
    await a.s.wait_event("assistantDelta")
    a.s.cancel_request(msg_id)
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(answer, 10)
    assert caught.value.code == -32800
    assert caught.value.data["status"] == "cancelled"
    await a.s.wait_for(lambda: len(a.fake.disconnects) > disconnects, timeout=5)
    await a.s.wait_event("turnFinished")
    assert a.s.events_of("turnFinished")[-1]["status"] == "cancelled"


async def test_cancel_mid_tool_kills_the_command_and_the_next_turn_works(agent):
    a = await agent(permissions="yolo")
    server_pid = server_process(a.s).pid
    a.fake.push(calls(tool_call("bash", {"command": "sleep 30"}, "toolu_sleep")))
    msg_id, answer = a.s.start("coder.input", {"text": "sleep a while"})
    await a.s.wait_event("toolCallBegin")
    await a.s.wait_for(lambda: sleepers(server_pid, "30"), timeout=5)
    a.s.cancel_request(msg_id)
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(answer, 10)
    assert caught.value.code == -32800
    assert caught.value.data["status"] == "cancelled"
    await a.s.wait_for(lambda: not sleepers(server_pid, "30"), timeout=5)
    assert [e["status"] for e in a.s.events_of("turnFinished")] == ["cancelled"]
    assert len(a.fake.message_requests) == 1
    # the following turn: the model learns the call was interrupted, the shell still works
    a.fake.push(calls(tool_call("bash", {"command": "echo alive"}, "toolu_alive")), reply("recovered"))
    result = await a.turn("what happened?")
    assert result["status"] == "completed", result
    assert result["reply"] == "recovered"
    following = a.fake.message_requests[1]
    block = tool_results(following)["toolu_sleep"]
    assert block.get("is_error") is True
    assert "interrupted" in result_text(block)
    roles = [m["role"] for m in following.body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assert "alive" in result_text(tool_results(a.fake.message_requests[2])["toolu_alive"])


async def test_interrupt_mid_approval_is_a_cancel_not_a_denial(agent):
    a = await agent(sandbox={"autoAllow": False})  # so `touch` is asked
    release = asyncio.Event()

    async def answer_late(params):
        await release.wait()
        return "Allow once"

    a.s.answer_question = answer_late
    a.fake.push(calls(tool_call("bash", {"command": "touch approved-late.txt"}, "toolu_q1")))
    token = "cancel-mid-approval"
    _, answer = a.s.start("coder.input", {"text": "touch it"}, token=token)
    await a.s.wait_for(lambda: a.s.questions)
    interrupted = await a.s.execute("coder.interrupt", {})
    assert interrupted["status"] == "completed"
    assert interrupted["data"]["cancelledSubmissions"]
    result = await asyncio.wait_for(answer, 10)
    assert result["status"] == "cancelled", result
    assert [e["status"] for e in a.s.events_of("turnFinished")] == ["cancelled"]
    assert [e["decision"] for e in a.s.events_of("approvalResolved")] == ["cancelled"]
    await a.s.wait_for(lambda: a.s.progress_of(token) and a.s.progress_of(token)[-1].kind == "end")
    assert a.s.progress_of(token)[-1].message == "Cancelled"
    # the user's late answer changes nothing
    release.set()
    await asyncio.sleep(0.3)
    assert not (a.root / "approved-late.txt").exists()
    # the model is told the call was interrupted, not that it was denied
    a.fake.push(reply("ok"))
    again = await a.turn("never mind")
    assert again["status"] == "completed"
    block = tool_results(a.fake.message_requests[-1])["toolu_q1"]
    text = result_text(block)
    assert "interrupted" in text
    assert "denied" not in text and "dismissed" not in text


async def test_stale_cancel_does_not_touch_a_newer_turn(agent):
    a = await agent()
    a.fake.push(reply("first"))
    old_token = "stale-token"
    first = await a.s.execute("coder.input", {"text": "one"}, token=old_token)
    assert first["status"] == "completed"
    a.fake.push(reply(["slow ", "second"], delayMs=100))
    _, answer = a.s.start("coder.input", {"text": "two"}, token="fresh-token")
    await a.s.wait_event("assistantDelta")
    a.s.cancel_progress(old_token)
    result = await asyncio.wait_for(answer, 10)
    assert result["status"] == "completed", result
    assert result["reply"] == "slow second"
