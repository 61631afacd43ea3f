"""The model's `ask_user` tool (contract section 19): a client with its own UI answers
`coder/askUser`; any other client gets one `window/showMessageRequest` per question.
No answer in time, or a dismissed question, ends the tool with "the user did not answer";
an interrupt ends the turn. Questions and answers are in the session log."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import full_caps, lsp_session
from lsprotocol import types

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

QUESTIONS = [
    {
        "question": "Which test runner should AGENTS.md name?",
        "header": "Tests",
        "options": [
            {"label": "pytest", "description": "the pytest suite under tests/"},
            {"label": "unittest", "description": "python -m unittest"},
        ],
    },
    {
        "question": "Which checks should run before a commit?",
        "options": [{"label": "ruff"}, {"label": "mypy"}, {"label": "none"}],
        "multiSelect": True,
    },
]


def ask(call_id: str, questions=None) -> dict:
    return calls(tool_call("ask_user", {"questions": QUESTIONS if questions is None else questions}, call_id))


def answer_of(fake, call_id: str) -> str:
    return result_text(tool_results(fake.message_requests[-1])[call_id])


async def test_a_client_with_its_own_ui_answers_and_the_log_keeps_both(ws, fake):
    async with lsp_session(ws, env=api_env(fake), init_options={"capabilities": {"askUser": True}}) as s:
        s.answer_ask = lambda p: {
            "answers": [{"selected": ["pytest"]}, {"selected": ["ruff", "mypy"], "other": "and pytest -x"}]
        }
        fake.push(ask("toolu_ask1"), reply("AGENTS.md will say so"))
        result = await s.execute("coder.input", {"text": "/init"})
        assert result["status"] == "completed", result
        (asked,) = s.asked
        assert asked["submissionId"] == result["submissionId"]
        assert [q["question"] for q in asked["questions"]] == [q["question"] for q in QUESTIONS]
        assert asked["questions"][1]["multiSelect"] is True
        text = answer_of(fake, "toolu_ask1")
        assert "Which test runner should AGENTS.md name? → pytest" in text
        assert "ruff, mypy; (in their own words) and pytest -x" in text
        assert "ask_user" in json.dumps(fake.message_requests[0].body["messages"][0]) or "ask_user" in json.dumps(
            fake.message_requests[0].body["tools"]
        )
        log = (ws / ".coder" / "sessions" / f"{result['sessionId']}.jsonl").read_text()
        assert "Which checks should run before a commit?" in log and "and pytest -x" in log
        assert s.questions == []  # never a message request when the client has its own UI


async def test_no_answer_in_time_or_a_null_answer_is_not_answered(ws, fake):
    caps = full_caps()
    caps.experimental = {"coderAskUser": True}
    async with lsp_session(ws, caps=caps, env=api_env(fake)) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"approvals": {"timeoutSeconds": 1}}})
        )

        release = asyncio.Event()  # the "user" answers only when the test ends

        async def never(p):
            await release.wait()

        s.answer_ask = never
        fake.push(ask("toolu_ask2"), reply("fine"))
        result = await s.execute("coder.input", {"text": "set things up"})
        assert result["status"] == "completed", result
        assert "The user did not answer" in answer_of(fake, "toolu_ask2")
        release.set()

        s.answer_ask = lambda p: {"answers": None}
        fake.push(ask("toolu_ask3"), reply("fine"))
        await s.execute("coder.input", {"text": "again"})
        assert "The user did not answer" in answer_of(fake, "toolu_ask3")

        s.answer_ask = lambda p: {"answers": [{"selected": ["pytest"]}]}  # one answer for two questions
        fake.push(ask("toolu_ask4"), reply("fine"))
        await s.execute("coder.input", {"text": "and again"})
        assert "The user did not answer" in answer_of(fake, "toolu_ask4")


async def test_escape_while_asked_interrupts_the_turn(ws, fake):
    async with lsp_session(ws, env=api_env(fake), init_options={"capabilities": {"askUser": True}}) as s:

        release = asyncio.Event()

        async def later(p):
            await release.wait()

        s.answer_ask = later
        fake.push(ask("toolu_ask5"))
        turn = asyncio.ensure_future(s.execute("coder.input", {"text": "ask me"}))
        await asyncio.wait_for(s.question_arrived.wait(), 10)
        await s.execute("coder.interrupt", {})
        result = await asyncio.wait_for(turn, 10)
        assert result["status"] == "cancelled", result
        release.set()


async def test_other_clients_get_one_message_request_per_question(agent):
    a = await agent()
    answers = iter(["unittest", "Other…"])
    a.s.answer_question = lambda p: next(answers)
    a.fake.push(ask("toolu_ask6"), reply("ok"))
    result = await a.turn("what should we use?")
    assert result["status"] == "completed", result
    assert len(a.s.questions) == 2
    first = a.s.questions[0]
    assert "(1/2): [Tests] Which test runner" in first.message
    assert [x.title for x in first.actions] == ["pytest", "unittest", "Other…"]
    text = answer_of(a.fake, "toolu_ask6")
    assert "→ unittest" in text and "type their answer as their next message" in text

    a.s.questions.clear()
    a.s.answer_question = lambda p: None  # dismissed
    a.fake.push(ask("toolu_ask7"), reply("ok"))
    await a.turn("and now?")
    assert len(a.s.questions) == 1 and "The user did not answer" in answer_of(a.fake, "toolu_ask7")


@pytest.mark.parametrize(
    "questions, why",
    [
        ([], "length >= 1"),
        ([QUESTIONS[0]] * 5, "length <= 4"),
        ([{"question": "Pick?", "options": [{"label": "only one"}]}], "length >= 2"),
        ([{"question": "Pick?", "options": [{"label": "a"}, {"label": "Other"}]}], "always offered"),
        ([{"question": "Pick?", "options": [{"label": "a"}, {"label": "a"}]}], "same label"),
    ],
    ids=["none", "five", "one-option", "own-other", "duplicate"],
)
async def test_malformed_questions_are_a_tool_error_and_nobody_is_asked(agent, questions, why):
    a = await agent()
    a.fake.push(ask("toolu_bad", questions), reply("ok"))
    result = await a.turn("ask badly")
    assert result["status"] == "completed", result
    block = tool_results(a.fake.message_requests[-1])["toolu_bad"]
    assert block.get("is_error") is True and why in result_text(block), block
    assert a.s.questions == []
