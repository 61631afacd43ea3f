"""Plan mode end to end (contract section 22): `/plan [prompt]` reads and searches, never
writes, and ends with `planProposed {submissionId, plan}` (the `exit_plan_mode` tool's plan,
or the model's final text); `coder.plan {submissionId, action}` answers it: `approve` runs
the plan in the preset the user picks (`mode`) in the same session, `revise` sends the
feedback and stays in plan mode, `reject` ends it.

A real LSP client drives the real server (tests/harness.py); the real SDK talks to the
strict fake Messages endpoint; the sandbox is the real bubblewrap. The unit-level attack
corpus is tests/security/test_plan_mode_writes.py; here the same attempts go through the
whole server: the tool results say no, nobody is asked, no edit reaches the editor and the
work tree stays as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_e2e import all_text, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, lsp_session
from lsprotocol import types

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

PLAN = "## Plan\n\n1. Create `planned.txt` holding `done`.\n"


def status(root: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def attempts(tag: str) -> list[dict[str, Any]]:
    """Writes a model may try while planning: each file tool, shell lines that write in
    the ways the policy's corpora name (a redirection, `sed -i`, `git commit`, `touch`, an
    interpreter), a background shell, a subagent."""
    return [
        tool_call("write", {"path": f"{tag}-w.txt", "content": "x"}, f"toolu_{tag}_w"),
        tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, f"toolu_{tag}_e"),
        tool_call(
            "multiEdit", {"path": "app.py", "edits": [{"oldString": "a * b", "newString": "0"}]}, f"toolu_{tag}_m"
        ),
        tool_call("bash", {"command": f"echo x > {tag}-r.txt"}, f"toolu_{tag}_r"),
        tool_call("bash", {"command": "sed -i 's/a - b/a + b/' app.py"}, f"toolu_{tag}_s"),
        tool_call("bash", {"command": "git commit -qam wip --allow-empty"}, f"toolu_{tag}_g"),
        tool_call("bash", {"command": f"touch {tag}-t.txt"}, f"toolu_{tag}_t"),
        tool_call("bash", {"command": f"python3 -c \"open('{tag}-p.txt','w')\""}, f"toolu_{tag}_p"),
        tool_call("bash", {"command": f"cat app.py > {tag}-c.txt", "background": True}, f"toolu_{tag}_b"),
        tool_call("task", {"prompt": f"create {tag}-task.txt", "agent": "general"}, f"toolu_{tag}_k"),
    ]


def plan_events(s: Session) -> list[dict[str, Any]]:
    return s.events_of("planProposed")


async def test_plan_denies_every_write_then_hands_over_the_plan(agent):
    a = await agent(permissions="yolo", rules=[{"tool": "*", "action": "allow"}])  # nothing else would stop them
    before = status(a.root)
    tries = attempts("p1")
    a.fake.push(
        calls(tool_call("read", {"path": "app.py"}, "toolu_p1_read"), tool_call("bash", {"command": "ls"}, "toolu_ls")),
        calls(*tries),
        calls(tool_call("exit_plan_mode", {"plan": PLAN}, "toolu_p1_exit")),
    )
    result = await a.turn("/plan make add() add")
    assert result["status"] == "completed", result
    assert len(a.fake.message_requests) == 3, "the turn goes on after exit_plan_mode"
    first = tool_results(a.fake.message_requests[1])
    assert "def add" in result_text(first["toolu_p1_read"]) and "app.py" in result_text(first["toolu_ls"])
    denied = tool_results(a.fake.message_requests[2])
    for t in tries:
        block = denied[t["id"]]
        assert block.get("is_error") and "plan mode" in result_text(block), (t, block)
    assert a.s.questions == [] and a.s.edits == [] and a.s.asked == []
    assert status(a.root) == before
    (event,) = plan_events(a.s)
    assert event["plan"] == PLAN and event["submissionId"] == result["submissionId"]
    assert "plan mode" in all_text(a.fake.message_requests[0])  # the model is told


async def test_the_final_text_is_the_plan_and_revise_stays_in_plan_mode_and_reject_ends_it(agent):
    a = await agent(permissions="auto-edit")
    before = status(a.root)
    a.fake.push(reply("1. Read app.py\n2. Fix add()"))
    first = await a.turn("/plan fix add")
    assert first["status"] == "completed", first
    (proposed,) = plan_events(a.s)
    assert proposed["plan"] == "1. Read app.py\n2. Fix add()"
    tries = attempts("p2")
    a.fake.push(calls(*tries), calls(tool_call("exit_plan_mode", {"plan": "1. Fix add() only"}, "toolu_p2_exit")))
    revised = await a.s.execute(
        "coder.plan", {"submissionId": proposed["submissionId"], "action": "revise", "feedback": "only add()"}
    )
    assert revised["status"] == "completed", revised
    assert "only add()" in all_text(a.fake.message_requests[-2])
    # the chat shows what the user did, not the instruction the model gets
    assert [e["text"] for e in a.s.events_of("userMessage")][-1] == "Revise the plan: only add()"
    denied = tool_results(a.fake.message_requests[-1])
    assert all(denied[t["id"]].get("is_error") for t in tries), denied
    assert a.s.edits == [] and status(a.root) == before
    second = plan_events(a.s)[-1]
    assert second["plan"] == "1. Fix add() only" and second["submissionId"] == revised["submissionId"]
    stale = await a.s.execute("coder.plan", {"submissionId": proposed["submissionId"], "action": "approve"})
    assert stale["status"] == "failed" and stale["error"]["code"] == "unknown_plan", stale
    rejected = await a.s.execute("coder.plan", {"submissionId": second["submissionId"], "action": "reject"})
    assert rejected["status"] == "completed" and "rejected" in rejected["reply"], rejected
    # plan mode is over: the preset (auto-edit) writes again
    a.fake.push(
        calls(tool_call("write", {"path": "after-reject.txt", "content": "ok\n"}, "toolu_p2_after")), reply("ok")
    )
    after = await a.turn("write after-reject.txt")
    assert after["status"] == "completed", after
    assert (a.root / "after-reject.txt").read_text() == "ok\n"
    assert len(plan_events(a.s)) == 2


async def test_plan_off_leaves_plan_mode_without_a_plan(agent):
    """`/plan off`: plan mode ends, the preset is the configuration's again, the plan that
    waited can no longer be approved, and writes work; outside plan mode it says so."""
    a = await agent(permissions="auto-edit")
    not_planning = await a.turn("/plan off")
    assert not_planning["status"] == "completed" and "not in plan mode" in not_planning["reply"], not_planning
    assert len(a.fake.message_requests) == 0  # `off` is not a prompt
    a.fake.push(reply("1. Write off.txt"))
    first = await a.turn("/plan write off.txt")
    (proposed,) = plan_events(a.s)
    assert first["status"] == "completed", first
    off = await a.turn("/plan off")
    assert off["status"] == "completed" and "Plan mode off" in off["reply"], off
    assert [e["preset"] for e in a.s.events_of("permissionsChanged")][-1] == "auto-edit"
    assert len(a.fake.message_requests) == 1, "/plan off ran a turn"
    late = await a.s.execute("coder.plan", {"submissionId": proposed["submissionId"], "action": "approve"})
    assert late["status"] == "failed" and late["error"]["code"] == "unknown_plan", late
    a.fake.push(calls(tool_call("write", {"path": "off.txt", "content": "ok\n"}, "toolu_off_w")), reply("ok"))
    after = await a.turn("write off.txt")
    assert after["status"] == "completed", after
    assert (a.root / "off.txt").read_text() == "ok\n"  # writes again, unasked in auto-edit
    assert len(plan_events(a.s)) == 1


async def test_plan_off_cannot_leave_the_plan_preset_the_configuration_sets(agent):
    a = await agent(permissions="plan")
    off = await a.turn("/plan off")
    assert off["status"] == "completed" and "Every session plans" in off["reply"], off
    a.fake.push(calls(tool_call("write", {"path": "still.txt", "content": "x"}, "toolu_still_w")), reply("no"))
    after = await a.turn("write still.txt")
    assert after["status"] == "completed", after
    assert not (a.root / "still.txt").exists()
    assert "plan mode" in result_text(tool_results(a.fake.message_requests[-1])["toolu_still_w"])


async def test_a_bad_answer_is_invalid_params(agent):
    a = await agent()
    for bad in (
        {"action": "approve"},
        {"submissionId": "x", "action": "go"},
        {"submissionId": "x", "action": "approve", "mode": "plan"},
    ):
        with pytest.raises(Exception, match=r"coder\.plan"):
            await a.s.execute("coder.plan", bad)


async def configure(s: Session, settings: dict[str, Any]) -> None:
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"coder": settings}))
    result = await s.execute("coder.new", {})
    assert result["status"] == "completed", result


async def test_approve_runs_the_plan_in_the_chosen_preset_in_the_same_session(ws: Path, fake: FakeAnthropicServer):
    async with lsp_session(ws, env=api_env(fake)) as s:
        await configure(s, {"permissions": "strict"})
        fake.push(
            calls(tool_call("write", {"path": "planned.txt", "content": "early\n"}, "toolu_early")),
            calls(tool_call("exit_plan_mode", {"plan": PLAN}, "toolu_exit")),
        )
        planned = await s.execute("coder.input", {"text": "/plan create planned.txt"})
        assert planned["status"] == "completed", planned
        assert not (ws / "planned.txt").exists() and s.questions == []
        (event,) = s.events_of("planProposed")
        fake.push(calls(tool_call("write", {"path": "planned.txt", "content": "done\n"}, "toolu_late")), reply("done"))
        approved = await s.execute(
            "coder.plan", {"submissionId": event["submissionId"], "action": "approve", "mode": "auto-edit"}
        )
        assert approved["status"] == "completed", approved
        assert approved["sessionId"] == planned["sessionId"]
        assert (ws / "planned.txt").read_text() == "done\n"
        assert s.questions == []  # auto-edit, as the user chose: strict would have asked
        request = fake.message_requests[-2]
        assert "approved your plan" in all_text(request) and "Create `planned.txt`" in all_text(request)
        assert "toolu_early" in str(request.body["messages"])  # the same session's conversation
        assert [e["preset"] for e in s.events_of("permissionsChanged")][-1] == "auto-edit"
        # the chat shows what the user did (its Edit and resend would resend that), not the
        # model's instruction with the whole plan in it
        said = [e["text"] for e in s.events_of("userMessage") if e.get("submissionId") == approved["submissionId"]]
        assert said == ["Approved the plan (auto-edit)"], said
