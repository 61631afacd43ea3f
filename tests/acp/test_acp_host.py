"""The ACP edge below the end-to-end tests (milliseconds): the order of updates through the
real SDK, and the event -> update mapping for what the e2e tests do not reach (`/task` in
the plan, a subagent's ids, a shell command without output, text not streamed twice)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from acp import helpers
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp_support import RecordingClient, wait_for

from coder_ls.acp.host import AcpHost, Routes, permission_options
from coder_ls.acp.updates import SessionView, translate
from coder_ls.engine.host import ClientCaps
from coder_ls.protocol.events import (
    AssistantDelta,
    AssistantMessage,
    ShellFinished,
    TaskUpdated,
    TodoItem,
    TodoUpdated,
    ToolCallBegin,
    ToolCallEnd,
)


class NoAgent:
    def on_connect(self, conn: object) -> None:
        pass


async def test_updates_reach_the_client_in_the_order_they_were_sent(tmp_path):
    a, b = socket.socketpair()
    reader_a, writer_a = await asyncio.open_connection(sock=a)
    reader_b, writer_b = await asyncio.open_connection(sock=b)
    client = RecordingClient()
    agent_conn = AgentSideConnection(NoAgent(), writer_a, reader_a)
    client_conn = ClientSideConnection(client, writer_b, reader_b)
    routes = Routes()
    routes.add("s1", "s1", Path(tmp_path))
    host = AcpHost(agent_conn, ClientCaps(), routes, lambda acp_id: None)
    try:
        for i in range(300):
            host.send("s1", helpers.update_agent_message_text(f"{i},"))
        await host.flush()
        await wait_for(lambda: len(client.updates.get("s1", [])) == 300)
        assert client.text("s1") == "".join(f"{i}," for i in range(300))
    finally:
        await client_conn.close()
        await agent_conn._conn.close()
        writer_a.close()
        writer_b.close()


def test_permission_options_map_the_choices_to_acp_kinds():
    options = permission_options(["Allow once", "Allow for session", "Always allow", "Deny"])
    assert [(o.option_id, o.kind) for o in options] == [
        ("0", "allow_once"),
        ("1", "allow_always"),
        ("2", "allow_always"),
        ("3", "reject_once"),
    ]
    # every other question's last choice is its refusal (the sandbox retry, /undo --all)
    assert [o.kind for o in permission_options(["Run outside the sandbox", "Keep the failure"])] == [
        "allow_once",
        "reject_once",
    ]


def test_todos_and_tasks_share_the_plan():
    view = SessionView(root="/ws")
    (plan,) = translate(TodoUpdated(todos=[TodoItem(content="write it", status="in_progress")]), view)
    assert [(e.content, e.status) for e in plan.entries] == [("write it", "in_progress")]
    task = TaskUpdated(task_id="t7", status="running", completed=1, failed=0, total=4, percentage=25, tokens_used=9)
    (plan,) = translate(task, view)
    assert [e.content for e in plan.entries] == ["write it", "/task t7: running, 1/4 steps (25%)"]
    assert plan.entries[1].status == "in_progress" and plan.entries[1].priority == "high"
    done = TaskUpdated(task_id="t7", status="completed", completed=4, failed=0, total=4, percentage=100, tokens_used=9)
    (plan,) = translate(done, view)
    assert len(plan.entries) == 2 and plan.entries[1].status == "completed"


def test_a_subagents_calls_are_its_own_and_name_their_parent():
    view = SessionView(root="/ws")
    translate(ToolCallBegin(call_id="t1", tool="task", input={"prompt": "look"}), view)
    sub = ToolCallBegin(call_id="toolu_1", tool="read", input={"path": "a.py"}, agent_id="ag1", parent_call_id="t1")
    (start,) = translate(sub, view)
    assert start.tool_call_id == "ag1/toolu_1" and start.kind == "read"
    assert start.field_meta == {"coder": {"agentId": "ag1", "parentToolCallId": "t1"}}
    assert [loc.path for loc in start.locations] == ["/ws/a.py"]
    # the same model call id in the main agent is another call
    (main,) = translate(ToolCallBegin(call_id="toolu_1", tool="ls", input={}), view)
    assert main.tool_call_id == "toolu_1"
    end = ToolCallEnd(call_id="toolu_1", output="x", agent_id="ag1", parent_call_id="t1")
    (update,) = translate(end, view)
    assert update.tool_call_id == "ag1/toolu_1" and update.status == "completed"


def test_text_is_sent_once_and_a_silent_shell_command_still_shows():
    view = SessionView(root="/ws")
    assert len(translate(AssistantDelta(text="Hel"), view)) == 1
    assert translate(AssistantMessage(text="Hello"), view) == []  # already streamed
    (whole,) = translate(AssistantMessage(text="Not streamed"), view)
    assert whole.content.text == "Not streamed"
    start, done = translate(ShellFinished(command="true", exit_code=0, submission_id="s9"), view)
    assert start.session_update == "tool_call" and start.kind == "execute"
    assert done.status == "completed" and done.title == "!true" and "[exit code: 0]" in done.content[0].content.text


class AnsweringClient:
    """The client side of `session/request_permission`, answering with a fixed outcome."""

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome
        self.asked: list[object] = []

    async def request_permission(self, session_id: str, tool_call: object, options: list[object]) -> object:
        from acp.schema import RequestPermissionResponse

        self.asked.append(tool_call)
        return RequestPermissionResponse(outcome=self.outcome)

    async def session_update(self, session_id: str, update: object) -> None:
        return None


async def _ask(outcome: object, interrupted: list[str]) -> str | None:
    from coder_ls.acp.host import PROMPT_SESSION

    routes = Routes()
    routes.add("s1", "s1", Path("/ws"))
    host = AcpHost(AnsweringClient(outcome), ClientCaps(), routes, interrupted.append)  # type: ignore[arg-type]
    token = PROMPT_SESSION.set("s1")
    try:
        return await asyncio.wait_for(host.ask("info", "run it?", ["Allow once", "Deny"]), 0.5)
    finally:
        PROMPT_SESSION.reset(token)


async def test_an_answer_that_was_not_offered_is_no_answer_and_cancelled_interrupts():
    from acp.schema import AllowedOutcome, DeniedOutcome

    interrupted: list[str] = []
    assert await _ask(AllowedOutcome(outcome="selected", option_id="0"), interrupted) == "Allow once"
    for forged in ("7", "-1", "allow", ""):
        assert await _ask(AllowedOutcome(outcome="selected", option_id=forged), interrupted) is None
    assert interrupted == []
    # `cancelled` is the user cancelling the turn: the session is interrupted, the question
    # never resolves to a choice (the interrupt cancels it)
    try:
        await _ask(DeniedOutcome(outcome="cancelled"), interrupted)
    except TimeoutError:
        pass
    else:
        raise AssertionError("a cancelled question resolved")
    assert interrupted == ["s1"]
