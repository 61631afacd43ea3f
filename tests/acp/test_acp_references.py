"""`@` references in an ACP prompt go through the one resolver (issue 36, item 3): the
user's deny rule holds for a typed reference and for a workspace command's; a file the
editor embeds is its text, not a place to find references in."""

from __future__ import annotations

import json

from acp import helpers
from acp_support import acp_agent
from agent_e2e import all_text, api_env, last_user_text
from anthropic_server import reply

SECRET = "SECRET-KEY-LINE"


async def test_acp_prompts_and_commands_obey_the_users_deny_rule(ws, fake):
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.txt").write_text(f"{SECRET}\n")
    (ws / "notes.txt").write_text("PLAIN-NOTES\n")
    (ws / ".claude" / "commands").mkdir(parents=True)
    (ws / ".claude" / "commands" / "peek.md").write_text("Look at @secrets/key.txt")
    user = ws.parent / f".xdg-{ws.name}" / "coder"  # the harness's XDG_CONFIG_HOME: the user's own rules
    user.mkdir(parents=True)
    (user / "config.json").write_text(json.dumps({"rules": [{"tool": "read", "action": "deny", "path": "secrets/**"}]}))
    fake.push(reply("one"), reply("two"), reply("three"))
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        for prompt in (
            [helpers.text_block("read @secrets/key.txt and @notes.txt")],
            [helpers.text_block("/peek")],
            [
                helpers.text_block("what does this say?"),
                helpers.resource_block(
                    helpers.embedded_text_resource(f"file://{ws}/quoted.md", "quote: @secrets/key.txt @notes.txt")
                ),
            ],
        ):
            answer = await a.conn.prompt(session_id=sid, prompt=prompt)
            assert answer.stop_reason == "end_turn", answer
    first, _, third = fake.message_requests
    assert "PLAIN-NOTES" in all_text(first)  # a typed reference to a readable file attaches
    assert all(SECRET not in json.dumps(r.body) for r in fake.message_requests)
    last = last_user_text(third)  # the embedded text is the editor's, not a place to find references
    assert "quote: @secrets" in last and "PLAIN-NOTES" not in last
