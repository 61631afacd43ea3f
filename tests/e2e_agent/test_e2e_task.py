"""`/task` end to end (contract section 14) against the strict fake, requests routed by
content: a plan with a dependency runs in order and ends with a report; a failing step is
isolated (its dependant skipped, the rest goes on); an interrupt pauses and `/task
resume` runs only what had not completed; a used-up budget pauses; an invalid plan goes
back to the planner."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest
from agent_e2e import calls, tool_call
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")

PLAN = "Plan how to reach this goal"


def plan(*steps: dict) -> dict:
    return {"when": PLAN, **calls(tool_call("plan", {"steps": list(steps)}, "plan1"))}


def step(sid: str, deps: list[str] | None = None) -> dict:
    return {"id": sid, "title": f"Step {sid}", "prompt": f"do {sid.upper()} now", "dependsOn": deps or []}


def routed(when: str, spec: dict) -> dict:
    return {**spec, "when": when}


def first_text(request) -> str:
    return json.dumps(request.body["messages"][0])


def request_index(fake, text: str) -> int:
    """The request of the step whose prompt holds `text` (a step's own first message)."""
    return next(i for i, r in enumerate(fake.message_requests) if text in first_text(r))


async def test_a_plan_runs_in_dependency_order_and_ends_with_a_report(agent):
    a = await agent()
    a.fake.push(
        plan(step("a"), step("b", ["a"]), step("c")),
        routed(PLAN, reply("planned")),
        routed("do A now", reply("A done: 3 files")),
        routed("do C now", reply("C done")),
        routed("do B now", reply("B done")),
        routed("Write the final report", reply("# Report\nAll three steps done.")),
    )
    result = await a.turn("/task build the thing")
    assert result["status"] == "completed", (result, [r.body["messages"][-1] for r in a.fake.message_requests])
    data = result["data"]
    assert data["kind"] == "task" and data["status"] == "completed" and data["completed"] == 3
    assert data["percentage"] == 100 and "Report: .coder/tasks/" in result["reply"]
    report = a.root / data["report"]
    assert report.read_text() == "# Report\nAll three steps done."
    assert request_index(a.fake, "do B now") > request_index(a.fake, "do A now")
    b_request = json.dumps(a.fake.message_requests[request_index(a.fake, "do B now")].body["messages"])
    assert "A done: 3 files" in b_request  # a dependency's result is in the step's prompt
    updates = a.s.events_of("taskUpdated")
    assert updates[-1]["status"] == "completed" and updates[-1]["percentage"] == 100
    # the planner is bracketed like every subagent, so a client can show it end
    started = {e["agentId"]: e["agent"] for e in a.s.events_of("subagentStarted")}
    finished = {e["agentId"]: e["status"] for e in a.s.events_of("subagentFinished")}
    planner = next(i for i, name in started.items() if name == "planner")
    assert finished[planner] == "completed" and set(finished) == set(started), (started, finished)
    shown = sorted(e["prompt"] for e in a.s.events_of("subagentStarted"))  # what a client lists
    assert shown == ["Plan: build the thing", "Step a: Step a", "Step b: Step b", "Step c: Step c",
                     "Write the report of the task: build the thing"], shown  # fmt: skip
    reports = [r for t in a.s.progress_tokens() for r in a.s.progress_of(t)]
    percentages = [r.percentage for r in reports if getattr(r, "percentage", None)]
    assert 100 in percentages
    status = await a.turn(f"/task status {data['id']}")
    assert [s["status"] for s in status["data"]["steps"]] == ["completed"] * 3
    listed = await a.turn("/task list")
    assert data["id"] in [t["id"] for t in listed["data"]["tasks"]]
    # every change was also appended to the session log, versioned
    log = next((a.root / ".coder" / "sessions").glob(f"{result['sessionId']}*.jsonl"))
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    tasks = [e for e in entries if e.get("type") == "task"]
    assert tasks and all(e["version"] == 1 for e in tasks) and tasks[-1]["task"]["status"] == "completed"


async def test_a_failed_step_skips_its_dependants_and_the_rest_goes_on(agent):
    a = await agent()
    a.fake.push(
        plan(step("a"), step("b", ["a"]), step("c")),
        routed(PLAN, reply("planned")),
        routed("do A now", {"status": 400, "errorType": "invalid_request_error", "message": "bad A"}),
        routed("do C now", reply("C done")),
        routed("Write the final report", reply("# Report\nA failed.")),
    )
    result = await a.turn("/task fragile work")
    assert result["status"] == "failed", result
    steps = {s["id"]: s["status"] for s in result["data"]["steps"]}
    assert steps == {"a": "failed", "b": "skipped", "c": "completed"}
    assert "not completed: a, b" in result["reply"]
    assert not any("do B now" in first_text(r) for r in a.fake.message_requests)


async def test_an_interrupt_pauses_and_resume_runs_only_what_is_left(agent):
    a = await agent()
    a.fake.push(
        plan(step("a"), step("b", ["a"])),
        routed(PLAN, reply("planned")),
        routed("do A now", reply("A done")),
        routed("do B now", {"fault": "hang", "afterEvents": 1}),
    )
    _, answer = a.s.start("coder.input", {"text": "/task two steps"})
    await a.s.wait_for(lambda: any("do B now" in first_text(r) for r in a.fake.message_requests), 15)
    await a.s.execute("coder.interrupt", {})
    result = await asyncio.wait_for(answer, 10)
    assert result["status"] == "cancelled", result
    status = await a.turn("/task status")
    assert status["data"]["status"] == "paused"
    assert [s["status"] for s in status["data"]["steps"]] == ["completed", "pending"]
    a.fake.requests.clear()
    a.fake.push(routed("do B now", reply("B done")), routed("Write the final report", reply("# Report\ndone")))
    resumed = await a.turn("/task resume")
    assert resumed["status"] == "completed" and resumed["data"]["completed"] == 2, resumed
    sent = [first_text(r) for r in a.fake.message_requests]
    assert not any("do A now" in m for m in sent) and not any(PLAN in m for m in sent)  # only what was left


async def test_a_used_up_budget_pauses_before_any_step(agent):
    a = await agent()
    a.fake.push(plan(step("a")), routed(PLAN, reply("planned")))
    result = await a.turn("/task tiny budget --budget 1")
    assert result["data"]["status"] == "paused" and "budget" in result["reply"], result
    assert not any("do A now" in first_text(r) for r in a.fake.message_requests)


async def test_an_invalid_plan_goes_back_to_the_planner(agent):
    a = await agent()
    a.fake.push(
        plan(step("a", ["b"]), step("b", ["a"])),
        routed(PLAN, calls(tool_call("plan", {"steps": [step("a")]}, "plan2"))),
        routed(PLAN, reply("planned")),
        routed("do A now", reply("A done")),
        routed("Write the final report", reply("# Report")),
    )
    result = await a.turn("/task circular")
    assert result["status"] == "completed", result
    second_planner = json.dumps(a.fake.message_requests[1].body["messages"])
    assert "go round in a circle" in second_planner


async def test_a_server_killed_mid_task_resumes_only_what_had_not_completed(ws, fake):
    from agent_e2e import api_env
    from harness import lsp_session, server_process

    fake.push(
        plan(step("a"), step("b", ["a"])),
        routed(PLAN, reply("planned")),
        routed("do A now", reply("A done")),
        routed("do B now", {"fault": "hang", "afterEvents": 1}),
    )
    async with lsp_session(ws, env=api_env(fake)) as s:
        _, answer = s.start("coder.input", {"text": "/task survive a crash"})
        await s.wait_for(lambda: any("do B now" in first_text(r) for r in fake.message_requests), 15)
        proc = server_process(s)
        proc.kill()  # SIGKILL: no cleanup runs
        await asyncio.wait_for(proc.wait(), 10)
        answer.cancel()
    fake.requests.clear()
    fake.push(routed("do B now", reply("B done")), routed("Write the final report", reply("# Report")))
    async with lsp_session(ws, env=api_env(fake)) as s:
        status = await s.execute("coder.input", {"text": "/task status"})
        assert status["data"]["status"] == "paused", status  # found "running" on disk: cut off
        assert [x["status"] for x in status["data"]["steps"]] == ["completed", "pending"]
        resumed = await s.execute("coder.input", {"text": "/task resume"})
        assert resumed["status"] == "completed" and resumed["data"]["completed"] == 2, resumed
    sent = [first_text(r) for r in fake.message_requests]
    assert not any("do A now" in m for m in sent) and not any(PLAN in m for m in sent)


async def test_a_step_failing_on_a_retryable_error_is_tried_again_then_isolated(agent):
    a = await agent(tasks={"maxRetries": 2})
    server_error = routed("do A now", {"status": 500, "retryAfter": 0.01, "message": "boom"})
    # the provider tries each request 5 times itself; the task tries the step 3 times
    a.fake.push(plan(step("a"), step("b", ["a"]), step("c")), routed(PLAN, reply("planned")))
    a.fake.push(*[server_error] * 15, routed("do C now", reply("C done")))
    a.fake.push(routed("Write the final report", reply("# Report")))
    result = await a.turn("/task flaky upstream")
    assert result["status"] == "failed", result
    steps = {s["id"]: (s["status"], s["attempts"]) for s in result["data"]["steps"]}
    assert steps == {"a": ("failed", 3), "b": ("skipped", 0), "c": ("completed", 1)}
    tries = [r for r in a.fake.message_requests if "do A now" in first_text(r)]
    assert len(tries) == 15


async def test_bad_task_input_gets_a_clear_error_and_runs_nothing(agent):
    a = await agent()
    for text, says in (
        ("/task", "/task <goal>"),
        ("/task fix it --budget lots", "--budget takes a number"),
        ("/task --budget 100", "needs a goal"),
        ("/task status no-such-task", "no task matching 'no-such-task'"),
        ("/task resume no-such-task", "no task matching 'no-such-task'"),
    ):
        result = await a.turn(text)
        assert result["mode"] == "error" and says in result["error"]["message"], (text, result)
    assert a.fake.message_requests == []


async def test_a_twenty_step_plan_reports_every_step_in_its_percentage(agent):
    """20 steps (a chain of 5 and 15 on their own, one failing for good, its dependants
    skipped): the work-done percentage and `taskUpdated` rise with every finished step,
    never go back, count failed and skipped steps as finished, and end at 100."""
    a = await agent()
    steps = [step(f"s{i:02d}", [f"s{i - 1:02d}"] if 1 <= i < 5 else None) for i in range(20)]
    bad = {"status": 400, "errorType": "invalid_request_error", "message": "bad step"}
    a.fake.push(
        plan(*steps),
        routed(PLAN, reply("planned")),
        *[
            routed(f"do S{i:02d} now", bad if i == 2 else reply(f"S{i:02d} done"))
            for i in range(20)
            if i not in (3, 4)  # skipped: they depend on s02
        ],
        routed("Write the final report", reply("# Report\n17 of 20 done.")),
    )
    result = await a.turn("/task twenty things")
    data = result["data"]
    assert (data["completed"], data["failed"], data["skipped"], data["total"]) == (17, 1, 2, 20), data
    assert data["percentage"] == 100 and result["status"] == "failed"  # not every step completed
    updates = [u for u in a.s.events_of("taskUpdated") if u["taskId"] == data["id"]]
    pcts = [u["percentage"] for u in updates]
    assert pcts == sorted(pcts) and pcts[-1] == 100, pcts
    # every finished step moves it by 5 points; the two dependants of s02 are skipped
    # together (10 points), the only larger step
    marks = sorted(set(pcts))
    jumps = sorted(b - a for a, b in itertools.pairwise(marks))
    assert marks[0] == 0 and jumps == [5] * 18 + [10], f"{marks} {jumps}"
    assert updates[0]["status"] == "planning" and updates[0]["total"] == 0
    for u in updates[1:]:  # the same figure as the counts it comes with
        assert u["total"] == 20 and u["percentage"] >= (100 * (u["completed"] + u["failed"])) // 20, u
    token = f"coder/{result['submissionId']}"  # the task's own work-done progress
    progress = [r.percentage for r in a.s.progress_of(token) if getattr(r, "percentage", None) is not None]
    assert progress == sorted(progress) and progress[-1] == 100 and len(set(progress)) >= 19, progress
    status = await a.turn(f"/task status {data['id']}")
    assert [s["status"] for s in status["data"]["steps"]].count("skipped") == 2
