"""Notifications and following the agent (contract section 22), over a real LSP client
against the strict fake Messages API.

`coder.focus {focused: false}`: a turn that ends, or waits for the user, is announced with
`window/showMessage` (or `coder/notify` to a client that declares `experimental.coderNotify`);
focused, nothing is. `agent.follow`: each file the agent edits is opened with
`window/showDocument {takeFocus: false}`."""

from __future__ import annotations

from typing import Any

import pytest
from agent_e2e import api_env, calls, tool_call
from anthropic_server import reply
from harness import JsonRpcException, full_caps, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="package")


def coder_messages(s: Any) -> list[str]:
    return [m.message for m in s.client.messages if m.message.startswith("Coder")]


async def focus(s: Any, focused: bool) -> None:
    answer = await s.execute("coder.focus", {"focused": focused})
    assert answer == {"focused": focused}


async def test_unfocused_turn_end_is_announced_and_focused_is_not(agent):
    a = await agent()
    a.s.client.messages.clear()  # the shared server's earlier messages
    try:
        await focus(a.s, False)
        a.fake.push(reply("All tests pass now.\nDetails follow."))
        assert (await a.turn("fix the tests"))["status"] == "completed"
        await a.s.wait_for(lambda: coder_messages(a.s))
        assert coder_messages(a.s) == ["Coder finished: All tests pass now."]
        (shown,) = [m for m in a.s.client.messages if m.message.startswith("Coder")]
        assert shown.type == types.MessageType.Info

        await focus(a.s, True)
        a.fake.push(reply("Done again."))
        assert (await a.turn("once more"))["status"] == "completed"
        await a.s.execute("coder.sessions", {})  # a round trip after the turn: anything sent has arrived
        assert coder_messages(a.s) == ["Coder finished: All tests pass now."]

        # a slash command is not a turn: unfocused, nothing is announced for it
        await focus(a.s, False)
        assert (await a.s.execute("coder.help", {}))["status"] == "completed"
        await a.s.execute("coder.sessions", {})
        assert len(coder_messages(a.s)) == 1
    finally:
        await focus(a.s, True)


async def test_waiting_for_an_approval_while_unfocused_is_announced_once(agent):
    a = await agent(sandbox={"autoAllow": False})
    a.s.client.messages.clear()
    seen_when_asked: list[list[str]] = []

    def answer(params: types.ShowMessageRequestParams) -> str:
        seen_when_asked.append(coder_messages(a.s))
        return "Deny"

    a.s.answer_question = answer
    try:
        await focus(a.s, False)
        a.fake.push(calls(tool_call("bash", {"command": "touch waited.txt"}, "toolu_w1")), reply("it was denied"))
        assert (await a.turn("make a file"))["status"] == "completed"
        assert len(a.s.questions) == 1
        (before,) = seen_when_asked
        assert len(before) == 1 and before[0].startswith("Coder is waiting for your answer: "), before
        assert "touch waited.txt" in before[0]
        await a.s.wait_for(lambda: len(coder_messages(a.s)) == 2)
        assert coder_messages(a.s)[1] == "Coder finished: it was denied"
    finally:
        await focus(a.s, True)


async def test_follow_opens_each_edited_file_without_taking_the_focus(agent):
    a = await agent(permissions="yolo", agent={"follow": True})
    a.fake.push(
        calls(
            tool_call("write", {"path": "one.py", "content": "A = 1\n"}, "toolu_f1"),
            tool_call("write", {"path": "two.py", "content": "B = 2\n"}, "toolu_f2"),
        ),
        calls(tool_call("edit", {"path": "one.py", "oldString": "A = 1", "newString": "A = 3"}, "toolu_f3")),
        reply("wrote both"),
    )
    assert (await a.turn("write two files"))["status"] == "completed"
    await a.s.wait_for(lambda: len(a.s.client.shown_documents) >= 2)
    shown = a.s.client.shown_documents
    assert sorted(d.uri for d in shown) == sorted((a.root / n).as_uri() for n in ("one.py", "two.py"))
    assert all(d.take_focus is False for d in shown), shown

    # off (the default): nothing opens
    await a.configure({"permissions": "yolo"})
    a.fake.push(calls(tool_call("write", {"path": "three.py", "content": "C = 3\n"}, "toolu_f4")), reply("wrote"))
    assert (await a.turn("write a third"))["status"] == "completed"
    await a.s.execute("coder.sessions", {})
    assert a.s.client.shown_documents == []


async def test_a_client_that_declares_coder_notify_gets_coder_notify(fake, ws):
    caps = full_caps()
    caps.experimental = {"coderNotify": True}
    async with lsp_session(ws, caps=caps, env=api_env(fake)) as s:
        notified: list[dict[str, Any]] = []
        s.client.feature("coder/notify")(lambda ls, params: notified.append(dict(params._asdict())))
        with pytest.raises(JsonRpcException, match="focused"):
            await s.execute("coder.focus", {"focused": "no"})
        await focus(s, False)
        fake.push(reply("Refactored the parser."))
        result = await s.execute("coder.input", {"text": "refactor"})
        assert result["status"] == "completed"
        await s.wait_for(lambda: notified)
        (note,) = notified
        assert note["kind"] == "turnFinished" and note["status"] == "completed"
        assert note["message"] == "Coder finished: Refactored the parser."
        assert note["submissionId"] == result["submissionId"] and note["sessionId"] == result["sessionId"]
        assert coder_messages(s) == []  # not window/showMessage as well


async def test_the_models_question_while_unfocused_is_announced_before_it_is_asked(fake, ws):
    caps = {"capabilities": {"askUser": True, "notify": True}}  # declared in initializationOptions this time
    async with lsp_session(ws, env=api_env(fake), init_options=caps) as s:
        notified: list[dict[str, Any]] = []
        s.client.feature("coder/notify")(lambda ls, params: notified.append(dict(params._asdict())))
        seen_when_asked: list[list[str]] = []

        def answer(params: dict[str, Any]) -> dict[str, Any]:
            seen_when_asked.append([n["kind"] for n in notified])
            return {"answers": [{"selected": ["pytest"]}]}

        s.answer_ask = answer
        question = {"question": "Which runner?", "options": [{"label": "pytest"}, {"label": "unittest"}]}
        fake.push(calls(tool_call("ask_user", {"questions": [question]}, "toolu_q1")), reply("pytest it is"))
        await focus(s, False)
        result = await s.execute("coder.input", {"text": "set up tests"})
        assert result["status"] == "completed", result
        assert seen_when_asked == [["question"]]
        await s.wait_for(lambda: len(notified) == 2)
        assert notified[0]["message"] == "Coder has a question for you: Which runner?"
        assert notified[0]["submissionId"] == result["submissionId"]
        assert [n["kind"] for n in notified] == ["question", "turnFinished"]


async def test_an_edit_left_to_the_users_review_while_unfocused_is_announced_once(fake, ws):
    caps = full_caps()
    caps.experimental = {"coderNotify": True}
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.change_annotation_support = types.ChangeAnnotationsSupportOptions(
        groups_on_label=True
    )  # the editor reviews the agent's edits (section 15)
    async with lsp_session(ws, caps=caps, env=api_env(fake), init_options={"sandbox": {"autoAllow": False}}) as s:
        notified: list[dict[str, Any]] = []
        s.client.feature("coder/notify")(lambda ls, params: notified.append(dict(params._asdict())))
        seen_when_reviewed: list[list[str]] = []

        def review(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            seen_when_reviewed.append([n["kind"] for n in notified])
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="rejected")

        s.answer_edit = review
        edit = {"path": "app.py", "oldString": "return a - b", "newString": "return a + b"}
        fake.push(calls(tool_call("edit", edit, "toolu_e1")), reply("left as it was"))
        await focus(s, False)
        assert (await s.execute("coder.input", {"text": "fix add"}))["status"] == "completed"
        assert seen_when_reviewed == [["review"]]
        assert notified[0]["message"].startswith("Coder is waiting for you to review an edit: ")
        await s.wait_for(lambda: len(notified) == 2)
        assert [n["kind"] for n in notified] == ["review", "turnFinished"]
