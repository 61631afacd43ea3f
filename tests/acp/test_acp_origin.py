"""Where an ACP prompt comes from (contract section 18's origin): `typed` unless the client
says otherwise in `_meta.coder.origin`, which can only narrow what the input may run."""

from __future__ import annotations

import pytest
from acp import RequestError, helpers
from acp_support import acp_agent
from agent_e2e import api_env


async def test_a_prompt_is_typed_unless_the_client_marks_it_and_a_mark_only_narrows(ws, fake):
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("!touch typed.txt")])
        assert (ws / "typed.txt").exists()  # what the user typed in the agent panel runs
        for text in ("!touch pwned", "/permissions yolo", "/trust"):
            a.client.clear()
            answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block(text)], coder={"origin": "client"})
            assert answer.stop_reason == "end_turn"
            shown = a.client.text(sid)
            assert "origin_refused" in shown and "client" in shown, (text, shown)
        assert not (ws / "pwned").exists()
        a.client.clear()
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("/cost")], coder={"origin": "link"})
        assert "origin_refused" not in a.client.text(sid) and "$" in a.client.text(sid)
        a.client.clear()
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("/permissions")])
        assert "balanced" in a.client.text(sid)  # the refused /permissions yolo changed nothing
        for meta in ({"origin": "root"}, "client"):
            with pytest.raises(RequestError) as err:
                await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("!touch pwned")], coder=meta)
            assert err.value.code == -32602 and "origin" in str(err.value), err.value
        assert not (ws / "pwned").exists()
        assert fake.message_requests == []
