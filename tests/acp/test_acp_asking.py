"""`ask_user` over ACP (session/request_permission, one question at a time) and the section-19
commands' replies as agent message text."""

from __future__ import annotations

import json

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


async def test_section_19_commands_reply_as_agent_message_text(ws, fake):
    fake.push(
        calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "e1")),
        reply("Fixed."),
    )
    async with acp_agent(ws, api_env(fake)) as a:
        a.client.answer = lambda q: "Allow once"
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("fix add")])
        assert "a + b" in (ws / "app.py").read_text()
        replies = {}
        for command in ("/context", "/cost", "/diff turn", "/export", "/rewind", "/rewind 1"):
            a.client.clear()
            answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block(command)])
            assert answer.stop_reason == "end_turn"
            assert {u.session_update for u in a.client.updates[sid]} == {"agent_message_chunk"}, command
            replies[command] = a.client.text(sid)
        assert "tokens" in replies["/context"] and "messages" in replies["/context"]
        assert "$" in replies["/cost"] and "Last turn" in replies["/cost"]
        assert "+    return a + b" in replies["/diff turn"]
        exported = replies["/export"].split(" to ", 1)[1].split(" (", 1)[0]
        assert "fix add" in open(exported).read()  # noqa: ASYNC230 (a small file, once)
        assert "fix add" in replies["/rewind"] and "Rewound" in replies["/rewind 1"]
        assert "a - b" in (ws / "app.py").read_text()  # /rewind restored the file
        assert len(fake.message_requests) == 2  # slash commands reach the engine, not the model


async def test_a_users_hook_that_denies_is_said_as_a_thought(ws, fake):
    home = ws.parent / "home"
    (home / ".claude").mkdir(parents=True)
    deny = "cat > /dev/null; echo 'no shell today' >&2; exit 2"
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": deny}]}]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    fake.push(calls(tool_call("bash", {"command": "touch ran"}, "b1")), reply("Blocked."))
    async with acp_agent(ws, {**api_env(fake), "HOME": str(home)}) as a:
        a.client.answer = lambda q: "Allow once"
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("touch it")])
        assert answer.stop_reason == "end_turn"
        thought = a.client.text(sid, "agent_thought_chunk")
        assert "[hook PreToolUse" in thought and "deny" in thought, thought
        assert "no shell today" in result_text(tool_results(fake.message_requests[-1])["b1"])
        assert not (ws / "ran").exists()
