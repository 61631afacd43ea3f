"""`ask_user` over ACP (session/request_permission, one question at a time) and the section-19
commands' replies as agent message text."""

from __future__ import annotations

from acp import helpers
from acp_support import acp_agent
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply

QUESTIONS = [
    {"question": "Which database?", "header": "DB", "options": [{"label": "Postgres"}, {"label": "SQLite"}]},
    {"question": "Add tests?", "options": [{"label": "Yes"}, {"label": "No", "description": "skip them"}]},
]


async def test_ask_user_asks_one_question_at_a_time_as_permission_requests(ws, fake):
    fake.push(calls(tool_call("ask_user", {"questions": QUESTIONS}, "q1")), reply("Noted."))
    async with acp_agent(ws, api_env(fake)) as a:
        answers = iter(["SQLite", "Other…"])
        a.client.answer = lambda q: next(answers)
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("set it up")])
        assert answer.stop_reason == "end_turn"
        (first, first_options), (second, second_options) = a.client.questions
        assert "Which database?" in first.title and "Add tests?" in second.title
        assert [o.name for o in first_options] == ["Postgres", "SQLite", "Other…"]
        assert [o.name for o in second_options] == ["Yes", "No", "Other…"]
        # an answer is not a permission: "Other…" (the last choice) is no refusal
        assert {o.kind for o in first_options + second_options} == {"allow_once"}
        text = result_text(tool_results(fake.message_requests[-1])["q1"])
        assert "Which database? → SQLite" in text and "Add tests?" in text and "next message" in text, text
        assert "Noted." in a.client.text(sid)


async def test_context_and_cost_reply_as_agent_message_text(ws, fake):
    fake.push(reply("Hello."))
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("hi")])
        a.client.clear()
        for command, expected in (("/context", "tokens"), ("/cost", "$")):
            answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block(command)])
            assert answer.stop_reason == "end_turn"
            shown = a.client.text(sid)
            assert expected in shown, (command, shown)
            a.client.clear()
        assert len(fake.message_requests) == 1  # slash commands reach the engine, not the model
