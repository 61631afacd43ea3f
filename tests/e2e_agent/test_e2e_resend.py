"""Edit and resend over LSP (contract section 22): `coder.input {text, replaces}` forks the
session before that submission, the files follow `/rewind --code`, the original stays."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agent_e2e import requests
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def _write(call_id: str, path: str, content: str) -> dict:
    return {"toolCalls": [{"id": call_id, "name": "write", "input": {"path": path, "content": content}}]}


def _bash(call_id: str, command: str) -> dict:
    return {"toolCalls": [{"id": call_id, "name": "bash", "input": {"command": command}}]}


def _sent(request: Any) -> str:
    return json.dumps(request.body["messages"])


async def _two_submissions(a, tag: str) -> tuple[dict, dict]:
    """1: the agent writes one-TAG.txt; 2: it writes two-TAG.txt and, through its shell,
    appends to one-TAG.txt."""
    a.fake.push(_write(f"toolu_{tag}1", f"one-{tag}.txt", "ONE\n"), reply("First done."))
    first = await a.turn(f"first: make one-{tag}.txt ALPHA-{tag}")
    assert first["status"] == "completed", first
    a.fake.push(
        _write(f"toolu_{tag}2", f"two-{tag}.txt", "TWO\n"),
        _bash(f"toolu_{tag}3", f"echo SIDE >> one-{tag}.txt"),
        reply("Second done."),
    )
    second = await a.turn(f"second: make two-{tag}.txt BETA-{tag}")
    assert second["status"] == "completed", second
    assert (a.root / f"one-{tag}.txt").read_text() == "ONE\nSIDE\n"
    return first, second


async def test_resend_the_second_submission_forks_before_it_and_keeps_the_original(agent):
    a = await agent(permissions="yolo", workflow={"autoVerifyAfterEdit": False})
    _, second = await _two_submissions(a, "rs")
    original = second["sessionId"]
    before = len(requests(a.fake))
    a.fake.push(_write("toolu_rs4", "three-rs.txt", "THREE\n"), reply("Resent done."))
    result = await a.turn("second again: make three-rs.txt GAMMA-rs", replaces=second["submissionId"])
    assert result["status"] == "completed", result
    fork = result["sessionId"]
    assert fork != original

    # the model saw the first exchange whole (its tool call and result) and not the second
    sent = _sent(requests(a.fake)[before])
    assert "ALPHA-rs" in sent and "First done." in sent and "toolu_rs1" in sent
    assert "BETA-rs" not in sent and "toolu_rs2" not in sent and "Second done." not in sent
    assert "GAMMA-rs" in sent
    # the files: back to before the second submission, then the new text's edit
    assert (a.root / "one-rs.txt").read_text() == "ONE\n"
    assert not (a.root / "two-rs.txt").exists()
    assert (a.root / "three-rs.txt").read_text() == "THREE\n"

    # every event of the new run carries the fork's id; the fork says where it came from
    events = [e for e in a.s.events if e.get("submissionId") == result["submissionId"]]
    assert events and {e["sessionId"] for e in events} == {fork}, events
    changed = [e for e in events if e["type"] == "sessionChanged"]
    assert changed and changed[0]["reason"] == "fork" and changed[0]["previousSessionId"] == original
    assert events[-1]["type"] == "turnFinished"

    # both sessions are listed; the fork is the current one
    listed = {s["id"]: s for s in (await a.s.execute("coder.sessions", {}))["data"]["sessions"]}
    assert original in listed and fork in listed and listed[fork]["current"]

    # the fork goes on from its own history
    a.fake.push(reply("ok"))
    nxt = await a.turn("and now?")
    assert nxt["sessionId"] == fork
    sent = _sent(requests(a.fake)[-1])
    assert "ALPHA-rs" in sent and "GAMMA-rs" in sent and "BETA-rs" not in sent

    # the original is resumable with its full history, the model sees all of it
    resumed = await a.s.execute("coder.resume", {"args": original})
    assert resumed["status"] == "completed", resumed
    texts = " ".join(h["text"] for h in resumed["data"]["history"])
    assert "ALPHA-rs" in texts and "BETA-rs" in texts and "Second done." in texts and "GAMMA-rs" not in texts
    a.fake.push(reply("ok"))
    back = await a.turn("what happened?")
    assert back["sessionId"] == original
    sent = _sent(requests(a.fake)[-1])
    assert "ALPHA-rs" in sent and "BETA-rs" in sent and "toolu_rs2" in sent and "GAMMA-rs" not in sent


async def test_resend_the_first_submission_starts_from_nothing_and_keeps_what_the_user_changed(agent):
    a = await agent(permissions="yolo", workflow={"autoVerifyAfterEdit": False})
    first, _ = await _two_submissions(a, "rf")
    (a.root / "two-rf.txt").write_text("the user's own edit\n")  # changed since: kept, as /rewind --code
    before = len(requests(a.fake))
    a.fake.push(_write("toolu_rf4", "one-rf.txt", "NEW\n"), reply("Resent done."))
    result = await a.turn("first again: DELTA-rf", replaces=first["submissionId"])
    assert result["status"] == "completed", result
    assert result["sessionId"] != first["sessionId"]

    body = requests(a.fake)[before].body["messages"]
    assert [m["role"] for m in body] == ["user"], body  # nothing came before the first submission
    sent = json.dumps(body)
    assert "DELTA-rf" in sent and "ALPHA-rf" not in sent and "BETA-rf" not in sent

    assert (a.root / "one-rf.txt").read_text() == "NEW\n"  # removed by the rewind, then written anew
    assert (a.root / "two-rf.txt").read_text() == "the user's own edit\n"
    notices = [e["message"] for e in a.s.events_of("notice") if e.get("submissionId") == result["submissionId"]]
    assert any("two-rf.txt" in n for n in notices), notices  # the kept file is named

    listed = await a.s.execute("coder.sessions", {})
    fork = next(s for s in listed["data"]["sessions"] if s["id"] == result["sessionId"])
    assert fork["title"].startswith("first again")  # not the replaced text's title

    # the fork's checkpoint was taken after the files went back: /undo there undoes the new text only
    undo = await a.s.execute("coder.undo", {})
    assert undo["status"] == "completed" and undo["data"]["submissionId"] == result["submissionId"], undo
    assert undo["data"]["removed"] == ["one-rf.txt"] and undo["data"]["restored"] == [], undo
    assert not (a.root / "one-rf.txt").exists() and not (a.root / "two-rf.txt").read_text().startswith("TWO")


async def test_bad_replaces_is_refused_and_nothing_is_lost(agent):
    a = await agent(permissions="yolo", workflow={"autoVerifyAfterEdit": False})
    first, second = await _two_submissions(a, "rb")
    mine = second["sessionId"]
    ids = {s["id"] for s in (await a.s.execute("coder.sessions", {}))["data"]["sessions"]}
    sent_before = len(requests(a.fake))

    for replaces, text, code in (
        ("no-such-submission", "again", "unknown_submission"),
        (first["submissionId"], "   ", "empty_input"),
        (first["submissionId"], "from a link", "origin_refused"),  # it takes files back: typed only
    ):
        origin = "link" if code == "origin_refused" else "typed"
        r = await a.turn(text, replaces=replaces, origin=origin)
        assert r["status"] == "failed" and r["error"]["code"] == code, r
        assert r["sessionId"] == mine and "Nothing was changed" in r["error"]["message"]

    # another session's submission, named from a new session
    await a.s.execute("coder.new", {})
    a.fake.push(reply("Other done."))
    other = await a.turn("in another session")
    r = await a.turn("steal it", replaces=first["submissionId"])
    assert r["status"] == "failed" and r["error"]["code"] == "unknown_submission", r
    assert r["sessionId"] == other["sessionId"]
    r = await a.turn("steal it", replaces=first["submissionId"], sessionId=other["sessionId"])
    assert r["status"] == "failed" and r["error"]["code"] == "unknown_submission", r

    # while a turn runs in the session
    a.s.events.clear()  # `wait_event` below must see the slow turn's first delta
    a.fake.push(reply(["slow ", "one"], delayMs=150))
    _, running = a.s.start("coder.input", {"text": "slow", "sessionId": mine})
    await a.s.wait_event("assistantDelta")
    r = await a.turn("again", replaces=second["submissionId"], sessionId=mine)
    assert r["status"] == "failed" and r["error"]["code"] == "busy", r
    assert (await asyncio.wait_for(running, 15))["status"] == "completed"

    # nothing was lost: the files, the sessions, the original's conversation
    assert (a.root / "one-rb.txt").read_text() == "ONE\nSIDE\n" and (a.root / "two-rb.txt").exists()
    now = {s["id"] for s in (await a.s.execute("coder.sessions", {}))["data"]["sessions"]}
    assert now - ids == {other["sessionId"]}  # the /new one, no fork
    assert len(requests(a.fake)) == sent_before + 2  # the other session's turn and the slow one
    a.fake.push(reply("ok"))
    await a.turn("still there?", sessionId=mine)
    sent = _sent(requests(a.fake)[-1])
    assert "ALPHA-rb" in sent and "BETA-rb" in sent and "slow" in sent
