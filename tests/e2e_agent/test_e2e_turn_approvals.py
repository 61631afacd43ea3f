"""Approvals under the balanced preset: window/showMessageRequest with Allow once,
Allow for session, Always allow (a structured rule in .coder/config.json, honoured by
the next server), Deny, and a dismissed question.

The shell calls here are ones the preset asks about: `sandbox.autoAllow` is off (with it
they would run sandboxed, unasked) and none of them only reads (a reader never asks)."""

from __future__ import annotations

import json

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import full_caps, lsp_session

pytestmark = pytest.mark.asyncio(loop_scope="package")

CHOICES = ["Allow once", "Allow for session", "Always allow", "Deny"]
ASKED = {"sandbox": {"autoAllow": False}}  # the preset's questions, not the sandbox's autonomy


def titles(question) -> list[str]:
    return [a.title for a in question.actions or []]


async def test_allow_once_runs_the_call_and_asks_again_next_time(agent):
    a = await agent(**ASKED)
    a.s.answer_question = lambda p: "Allow once"
    a.fake.push(
        calls(tool_call("bash", {"command": "echo once-$((40+2))"}, "toolu_a1")),
        reply("ran it"),
        calls(tool_call("bash", {"command": "echo once-again-$((1))"}, "toolu_a2")),
        reply("ran it again"),
    )
    result = await a.turn("run echo")
    assert result["status"] == "completed", result
    (question,) = a.s.questions
    assert titles(question) == CHOICES
    assert "echo once-$((40+2))" in question.message and "bash" in question.message
    block = tool_results(a.fake.message_requests[1])["toolu_a1"]
    assert "once-42" in result_text(block) and not block.get("is_error")
    requested = a.s.events_of("approvalRequested")
    assert [e["callId"] for e in requested] == ["toolu_a1"]
    assert [e["decision"] for e in a.s.events_of("approvalResolved")] == ["allowOnce"]
    # allowed once only: the next similar call is asked again
    await a.turn("again")
    assert len(a.s.questions) == 2


async def test_allow_for_session_is_not_asked_again_in_the_session(agent):
    a = await agent(**ASKED)
    a.s.answer_question = lambda p: "Allow for session"
    a.fake.push(  # `echo` alone only reads: the `tee` makes each line one the preset asks about
        calls(tool_call("bash", {"command": "echo first-call | tee /dev/null"}, "toolu_s1")),
        calls(tool_call("bash", {"command": "echo second-call | tee /dev/null"}, "toolu_s2")),
        reply("both ran"),
        calls(tool_call("bash", {"command": "echo third-call --flag | tee /dev/null"}, "toolu_s3")),
        reply("third ran"),
    )
    result = await a.turn("run two echos")
    assert result["status"] == "completed", result
    assert len(a.s.questions) == 1
    second = tool_results(a.fake.message_requests[2])["toolu_s2"]
    assert "second-call" in result_text(second)
    result = await a.turn("and a third")
    assert result["reply"] == "third ran"
    assert len(a.s.questions) == 1  # same prefix, still granted
    assert "third-call" in result_text(tool_results(a.fake.message_requests[4])["toolu_s3"])
    # the grant is for `echo` and `tee`, not for every command
    a.fake.push(calls(tool_call("bash", {"command": "touch not-granted.txt"}, "toolu_s4")), reply("x"))
    a.s.answer_question = lambda p: "Deny"
    await a.turn("touch")
    assert len(a.s.questions) == 2
    assert not (a.root / "not-granted.txt").exists()
    # a new session has no grants
    await a.configure({"permissions": "balanced", **ASKED})
    a.s.answer_question = lambda p: "Allow once"
    a.fake.push(calls(tool_call("bash", {"command": "echo fresh-session | tee /dev/null"}, "toolu_s5")), reply("y"))
    await a.turn("echo in a new session")
    assert len(a.s.questions) == 1


async def test_deny_tells_the_model_and_runs_nothing(agent):
    a = await agent(**ASKED)
    a.s.answer_question = lambda p: "Deny"
    a.fake.push(
        calls(tool_call("bash", {"command": "touch denied.txt"}, "toolu_d1")),
        reply("understood"),
    )
    result = await a.turn("touch a file")
    assert result["status"] == "completed", result
    assert result["reply"] == "understood"
    assert not (a.root / "denied.txt").exists()
    block = tool_results(a.fake.message_requests[1])["toolu_d1"]
    assert block.get("is_error") is True
    assert "denied" in result_text(block)
    assert [e["decision"] for e in a.s.events_of("approvalResolved")] == ["deny"]


async def test_dismissed_question_is_a_denial(agent):
    a = await agent()
    a.s.answer_question = lambda p: None
    a.fake.push(
        calls(tool_call("write", {"path": "dismissed.txt", "content": "x\n"}, "toolu_n1")),
        reply("fine"),
    )
    result = await a.turn("write a file")
    assert result["status"] == "completed", result
    assert len(a.s.questions) == 1
    assert "dismissed.txt" in a.s.questions[0].message
    assert not (a.root / "dismissed.txt").exists()
    assert a.s.edits == []
    block = tool_results(a.fake.message_requests[1])["toolu_n1"]
    assert block.get("is_error") is True
    assert "dismissed" in result_text(block)
    assert [e["decision"] for e in a.s.events_of("approvalResolved")] == ["deny"]


async def test_always_allow_stores_a_structured_rule_honoured_by_a_new_server(ws, fake):
    (ws / "src").mkdir()
    fake.push(  # `git status` only reads (never asked): `git count-objects` is a command the preset asks about
        calls(tool_call("bash", {"command": "git count-objects -v"}, "toolu_g1")),
        calls(tool_call("write", {"path": "src/one.py", "content": "ONE = 1\n"}, "toolu_g2")),
        reply("done"),
    )
    async with lsp_session(ws, caps=full_caps(), env=api_env(fake), init_options=ASKED) as s:
        s.answer_question = lambda p: "Always allow"
        result = await s.execute("coder.input", {"text": "status and write"})
        assert result["status"] == "completed", result
        assert len(s.questions) == 2
        assert [e["decision"] for e in s.events_of("approvalResolved")] == ["alwaysAllow", "alwaysAllow"]
    assert "size-pack" in result_text(tool_results(fake.message_requests[1])["toolu_g1"])
    config = json.loads((ws / ".coder" / "config.json").read_text())
    rules = [{k: v for k, v in r.items() if v is not None} for r in config["rules"]]
    assert {"tool": "bash", "action": "allow", "command": "git count-objects"} in rules, rules
    assert {"tool": "write", "action": "allow", "path": "src/**"} in rules, rules
    assert "git count-objects -v" not in json.dumps(config)  # never the raw command
    for rule in config["rules"]:
        assert set(rule) <= {"tool", "action", "command", "path"}

    # a new server reads the rules: similar calls are not asked
    fake.push(
        calls(
            tool_call("bash", {"command": "git count-objects -vH"}, "toolu_g3"),
            tool_call("write", {"path": "src/two.py", "content": "TWO = 2\n"}, "toolu_g4"),
        ),
        reply("done again"),
    )
    async with lsp_session(ws, caps=full_caps(), env=api_env(fake), init_options=ASKED) as s:
        s.answer_question = lambda p: "Deny"
        result = await s.execute("coder.input", {"text": "again"})
        assert result["status"] == "completed", result
        assert s.questions == []
        results = tool_results(fake.message_requests[-1])
        assert not results["toolu_g3"].get("is_error") and not results["toolu_g4"].get("is_error")
        assert (ws / "src" / "two.py").read_text() == "TWO = 2\n"
        # outside the rules it still asks
        fake.push(calls(tool_call("write", {"path": "top.py", "content": "x\n"}, "toolu_g5")), reply("no"))
        await s.execute("coder.input", {"text": "write top"})
        assert len(s.questions) == 1
        assert not (ws / "top.py").exists()
