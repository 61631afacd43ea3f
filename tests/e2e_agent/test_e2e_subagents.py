"""Subagents end to end (contract section 13) against the strict fake, each subagent's
requests routed by their content: one, several within `agents.maxConcurrency`, a chain
with `{previous}`, a failure that leaves its siblings alone, the events they carry,
`/agents` with a `.claude/agents` file, read-only `explore`, the depth limit, and an
interrupt that stops them all."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import calls, result_text, tool_call, tool_results
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")


def routed(when: str, spec: dict) -> dict:
    return {**spec, "when": when}


def names(request) -> list[str]:
    return [t["name"] for t in request.body.get("tools", [])]


def task_result(a, call_id: str) -> str:
    return result_text(tool_results(a.fake.message_requests[-1])[call_id])


async def test_one_subagent_answers_with_its_own_context_and_events(agent):
    a = await agent()
    a.fake.push(
        routed("find the add function", reply("add is in app.py, line 1")),
        calls(tool_call("task", {"agent": "explore", "prompt": "find the add function"}, "t1")),
        reply("It is in app.py."),
    )
    result = await a.turn("where is add? use a subagent")
    assert result["status"] == "completed", result
    main1, sub, _ = a.fake.message_requests
    assert sorted(names(sub)) == ["glob", "grep", "ls", "read"]  # explore: read-only, no task tool
    assert "where is add" not in str(sub.body["messages"])  # a fresh context
    assert "task" in names(main1)
    assert "[1] explore (completed):\nadd is in app.py, line 1" in task_result(a, "t1")
    started = a.s.events_of("subagentStarted")
    finished = a.s.events_of("subagentFinished")
    assert len(started) == len(finished) == 1
    agent_id = started[0]["agentId"]
    assert started[0]["agent"] == "explore" and started[0]["parentCallId"] == "t1"
    assert finished[0]["status"] == "completed" and finished[0]["usage"]["steps"] == 1
    theirs = [e for e in a.s.events if e.get("agentId") == agent_id]
    assert any(e["type"] == "assistantMessage" for e in theirs)
    assert all(e["parentCallId"] == "t1" for e in theirs)
    main_message = [e for e in a.s.events if e["type"] == "assistantMessage" and "agentId" not in e]
    assert main_message and main_message[-1]["text"] == "It is in app.py."
    assert "add is in app.py, line 1" not in str([m for m in main1.body["messages"]])


async def test_parallel_subagents_stay_within_the_cap(agent):
    a = await agent(agents={"maxConcurrency": 2})
    prompts = [f"count the lines of part {i}" for i in range(4)]
    a.fake.push(*[routed(p, {"text": f"part {i}: 10", "delayMs": 60}) for i, p in enumerate(prompts)])
    a.fake.push(calls(tool_call("task", {"tasks": [{"prompt": p} for p in prompts]}, "t2")), reply("40 lines."))
    a.fake.max_in_flight = 0
    result = await a.turn("count all parts in parallel")
    assert result["status"] == "completed", result
    assert a.fake.max_in_flight == 2
    text = task_result(a, "t2")
    assert all(f"[{i + 1}] general (completed):\npart {i}: 10" in text for i in range(4)), text


async def test_a_chain_passes_the_previous_answer(agent):
    a = await agent()
    a.fake.push(
        routed("name a number", reply("21")),
        routed("double 21", reply("42")),
        calls(tool_call("task", {"chain": [{"prompt": "name a number"}, {"prompt": "double {previous}"}]}, "t3")),
        reply("42 it is."),
    )
    result = await a.turn("chain it")
    assert result["status"] == "completed", result
    text = task_result(a, "t3")
    assert "[1] general (completed):\n21" in text and "[2] general (completed):\n42" in text


async def test_a_failed_subagent_leaves_the_others_alone(agent):
    a = await agent()
    a.fake.push(
        routed("task A", {"status": 400, "errorType": "invalid_request_error", "message": "bad request A"}),
        routed("task B", reply("B done")),
        calls(tool_call("task", {"tasks": [{"prompt": "task A"}, {"prompt": "task B"}]}, "t4")),
        reply("one failed"),
    )
    result = await a.turn("run both")
    assert result["status"] == "completed", result
    text = task_result(a, "t4")
    assert "[1] general (failed):\nfailed:" in text and "[2] general (completed):\nB done" in text
    statuses = sorted(e["status"] for e in a.s.events_of("subagentFinished"))
    assert statuses == ["completed", "failed"]


@pytest.fixture
def reviewer(shared_session) -> Iterator[Path]:
    root = shared_session.root  # the user's own (a workspace's `model:` waits for /trust)
    path = root.parent / f".xdg-{root.name}" / "coder" / "agents" / "reviewer.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: claude-opus-4-6\n---\n"
                    "You review code and list problems.\n")  # fmt: skip
    yield path
    path.unlink(missing_ok=True)


async def test_agents_lists_definitions_and_a_defined_one_runs_as_defined(agent, reviewer):
    a = await agent()
    listed = await a.turn("/agents")
    agents = {x["name"]: x for x in listed["data"]["agents"]}
    assert agents["reviewer"] == {
        "name": "reviewer", "description": "Reviews code", "tools": ["read", "grep"],
        "model": "claude-opus-4-6", "source": "user",
    }  # fmt: skip
    assert agents["general"]["tools"] is None and agents["explore"]["source"] == "builtin"
    a.fake.push(
        routed("review app.py", reply("looks fine")),
        calls(tool_call("task", {"agent": "reviewer", "prompt": "review app.py"}, "t5")),
        reply("reviewed"),
    )
    await a.turn("get it reviewed")
    sub = a.fake.message_requests[1]
    assert sub.body["model"] == "claude-opus-4-6" and sorted(names(sub)) == ["grep", "read"]
    system = sub.body["system"] if isinstance(sub.body["system"], str) else str(sub.body["system"])
    assert "You review code and list problems." in system


async def test_an_unknown_agent_is_an_error_listing_the_agents(agent):
    a = await agent()
    a.fake.push(calls(tool_call("task", {"agent": "nope", "prompt": "x"}, "t6")), reply("ok"))
    await a.turn("go")
    block = tool_results(a.fake.message_requests[-1])["t6"]
    assert block.get("is_error") and "no agent named nope" in result_text(block) and "explore" in result_text(block)


async def test_an_interrupt_stops_every_subagent(agent):
    a = await agent()
    a.fake.push(
        routed("sleeper A", {"fault": "hang", "afterEvents": 1}),
        routed("sleeper B", {"fault": "hang", "afterEvents": 1}),
        calls(tool_call("task", {"tasks": [{"prompt": "sleeper A"}, {"prompt": "sleeper B"}]}, "t7")),
    )
    _, answer = a.s.start("coder.input", {"text": "start both"})
    await a.s.wait_for(lambda: len(a.s.events_of("subagentStarted")) == 2, timeout=10)
    await a.s.wait_for(lambda: len(a.fake.message_requests) == 3, timeout=10)
    await a.s.execute("coder.interrupt", {})
    result = await asyncio.wait_for(answer, 10)
    assert result["status"] == "cancelled", result
    await a.s.wait_for(lambda: len(a.s.events_of("subagentFinished")) == 2, timeout=10)
    assert {e["status"] for e in a.s.events_of("subagentFinished")} == {"cancelled"}


@pytest.fixture
def forked(shared_session) -> Iterator[Path]:
    path = shared_session.root / ".coder" / "commands" / "survey.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\ndescription: Survey the code\ncontext: fork\nagent: explore\n---\nSurvey $ARGUMENTS\n")
    yield path
    path.unlink(missing_ok=True)


async def test_a_forked_command_keeps_the_main_context_clean(agent, forked):
    a = await agent()
    a.fake.push(reply("before"))
    await a.turn("remember the word pelican")
    a.fake.push(
        routed("Survey the tests", calls(tool_call("grep", {"pattern": "def "}, "g1"))),
        routed("Survey the tests", reply("There are two functions.")),
        reply("ok"),
    )
    result = await a.turn("/survey the tests")
    assert result["status"] == "completed" and result["reply"] == "There are two functions.", result
    sub_first = a.fake.message_requests[1]
    assert "pelican" not in str(sub_first.body["messages"])  # a fresh context
    assert sorted(names(sub_first)) == ["glob", "grep", "ls", "read"]  # as explore
    assert [e["agent"] for e in a.s.events_of("subagentStarted")] == ["explore"]
    await a.turn("and now?")
    last = str(a.fake.message_requests[-1].body["messages"])
    assert "as a subagent (explore); it answered" in last and "There are two functions." in last
    assert '"def "' not in last and "g1" not in last  # not the subagent's own steps


async def start_stuck_and_quick(a, call_id: str) -> tuple[asyncio.Future, str]:
    """A turn whose task call runs a subagent that hangs beside one that answers: (the
    turn's answer, the stuck subagent's id), once both have started."""
    a.fake.push(
        routed("stuck task", {"fault": "hang", "afterEvents": 1}),
        routed("quick task", reply("quick done")),
        calls(tool_call("task", {"tasks": [{"prompt": "stuck task"}, {"prompt": "quick task"}]}, call_id)),
        reply("one was stopped, the other finished"),
    )
    _, answer = a.s.start("coder.input", {"text": "do both"})
    await a.s.wait_for(lambda: len(a.s.events_of("subagentStarted")) == 2, timeout=10)
    stuck = next(e["agentId"] for e in a.s.events_of("subagentStarted") if e["prompt"] == "stuck task")
    return answer, stuck


async def test_cancelling_one_subagents_progress_stops_it_alone(agent):
    a = await agent()
    answer, stuck = await start_stuck_and_quick(a, "t8")
    token = f"coder/{stuck}"
    await a.s.wait_for(lambda: a.s.progress_of(token), timeout=10)
    assert a.s.progress_of(token)[0].title == "Coder: general" and a.s.progress_of(token)[0].cancellable
    a.s.cancel_progress(token)
    result = await asyncio.wait_for(answer, 15)
    assert result["status"] == "completed" and result["reply"] == "one was stopped, the other finished", result
    text = task_result(a, "t8")
    assert "[1] general (cancelled):\ncancelled by the user" in text and "[2] general (completed):\nquick done" in text
    await a.s.wait_for(lambda: a.s.progress_of(token)[-1].kind == "end", timeout=5)
    assert a.s.progress_of(token)[-1].message == "Cancelled"


async def test_the_stop_of_one_subagent_by_its_id_stops_it_alone(agent):
    """`coder.interrupt {agentId}`: the Stop button of a client that shows subagents (the
    VS Code chat panel), which works without work-done progress support."""
    a = await agent()
    answer, stuck = await start_stuck_and_quick(a, "t9")
    stopped = await a.s.execute("coder.interrupt", {"agentId": stuck})
    assert stopped["status"] == "completed" and stopped["data"]["cancelledAgents"] == [stuck], stopped
    assert stopped["data"]["cancelledSubmissions"] == []  # the turn itself goes on
    result = await asyncio.wait_for(answer, 15)
    assert result["status"] == "completed" and result["reply"] == "one was stopped, the other finished", result
    text = task_result(a, "t9")
    assert "[1] general (cancelled):\ncancelled by the user" in text and "[2] general (completed):\nquick done" in text
    finished = {e["agentId"]: e["status"] for e in a.s.events_of("subagentFinished")}
    assert finished[stuck] == "cancelled" and sorted(finished.values()) == ["cancelled", "completed"]
    # a Stop that races the subagent's end is answered, not an error
    late = await a.s.execute("coder.interrupt", {"agentId": stuck})
    assert late["status"] == "completed" and late["data"]["cancelledAgents"] == [], late
    assert "not running" in late["reply"]
