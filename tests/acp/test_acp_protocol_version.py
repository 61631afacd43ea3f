"""The editor contract's version over ACP (contract section 24): the agent answers `initialize`
with `_meta.coder.protocolVersion`; a client that sends its own (`_meta.coder.protocolVersion`)
of another MAJOR is told, in its first session's transcript, both versions and what to update,
and goes on working; a client that sends nothing (every ACP client but ours) hears nothing."""

from __future__ import annotations

import asyncio

import pytest
from acp import helpers
from acp_support import acp_agent, wait_for

from coder_ls import PROTOCOL_VERSION
from coder_ls.protocolversion import MISMATCH_PREFIX


@pytest.mark.parametrize("meta", [None, {"coder": {"protocolVersion": PROTOCOL_VERSION}}])
async def test_the_agent_says_its_version_and_a_client_of_the_same_major_hears_nothing(ws, meta):
    async with acp_agent(ws, meta=meta) as a:
        assert a.init.field_meta == {"coder": {"protocolVersion": PROTOCOL_VERSION}}
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await wait_for(lambda: a.client.of(sid, "available_commands_update"))
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("/help")])
        assert answer.stop_reason == "end_turn"
        await asyncio.sleep(0.2)
        assert MISMATCH_PREFIX not in a.client.text(sid)


@pytest.mark.parametrize(("theirs", "todo"), [("2.0", "update coder-ls"), ("0.1", "update the editor's Coder")])
async def test_a_client_of_another_major_is_told_what_to_update_in_its_first_session(ws, theirs, todo):
    async with acp_agent(ws, meta={"coder": {"protocolVersion": theirs}}) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        said = await wait_for(lambda: MISMATCH_PREFIX in a.client.text(sid) and a.client.text(sid))
        assert f"protocol {PROTOCOL_VERSION}" in said and f"speaks {theirs}" in said and todo in said
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("/help")])
        assert answer.stop_reason == "end_turn"
        other = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await wait_for(lambda: a.client.of(other, "available_commands_update"))
        await asyncio.sleep(0.2)
        assert MISMATCH_PREFIX not in a.client.text(other)  # said once
