"""A server killed mid-turn: the edits that reached disk are still undoable.

The turn's undo record is made durable before its first change can land; the next server
turns it into a full record (the work tree as found against the snapshot before the turn),
and `/undo` there reverts the crashed turn, not the one before it.
"""

from __future__ import annotations

import asyncio

import pytest
from agent_e2e import api_env, calls, tool_call
from harness import init_git, lsp_session, server_process

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def test_undo_after_a_kill_mid_turn_reverts_the_crashed_turn(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": "X = 0\n", "notes.txt": "notes\n"})
    fake.push(
        calls(tool_call("write", {"path": "app.py", "content": "X = 1\n"}, "toolu_w1")),
        calls(tool_call("write", {"path": "added.py", "content": "Y = 2\n"}, "toolu_w2")),
        calls(tool_call("bash", {"command": "sleep 30"}, "toolu_slow")),
    )
    async with lsp_session(root, env=api_env(fake), init_options={"permissions": "yolo"}) as s:
        earlier = await s.execute("coder.input", {"text": "!echo earlier > notes.txt"})
        assert earlier["status"] == "completed", earlier
        _, answer = s.start("coder.input", {"text": "change things"})
        await s.wait_for(lambda: [e for e in s.events_of("toolCallBegin") if e.get("tool") == "bash"], timeout=30)
        assert (root / "app.py").read_text() == "X = 1\n" and (root / "added.py").exists()
        proc = server_process(s)
        proc.kill()
        await asyncio.wait_for(proc.wait(), 10)
        answer.cancel()

    async with lsp_session(root, env=api_env(fake)) as s:
        undone = await s.execute("coder.undo", {})
        assert undone["status"] == "completed", undone
        assert undone["data"]["restored"] == ["app.py"], undone
        assert undone["data"]["removed"] == ["added.py"], undone
        assert (root / "app.py").read_text() == "X = 0\n"
        assert not (root / "added.py").exists()
        assert (root / "notes.txt").read_text() == "earlier\n"  # the turn before is the next /undo
        again = await s.execute("coder.undo", {})
        assert again["data"]["restored"] == ["notes.txt"], again
        assert (root / "notes.txt").read_text() == "notes\n"


async def test_a_resumed_session_undoes_its_crashed_turn_and_no_one_elses(tmp_path, fake):
    root = init_git(tmp_path / "ws", {"app.py": "X = 0\n", "other.py": "O = 0\n"})
    fake.push(
        calls(tool_call("write", {"path": "app.py", "content": "X = 1\n"}, "toolu_w1")),
        calls(tool_call("bash", {"command": "sleep 30"}, "toolu_slow")),
    )
    async with lsp_session(root, env=api_env(fake), init_options={"permissions": "yolo"}) as s:
        _, answer = s.start("coder.input", {"text": "change app.py"})
        await s.wait_for(lambda: [e for e in s.events_of("toolCallBegin") if e.get("tool") == "bash"], timeout=30)
        sid = s.events_of("toolCallBegin")[0]["sessionId"]
        proc = server_process(s)
        proc.kill()
        await asyncio.wait_for(proc.wait(), 10)
        answer.cancel()

    async with lsp_session(root, env=api_env(fake)) as other, lsp_session(root, env=api_env(fake)) as s:
        # another window, running, with a later submission of its own
        done = await other.execute("coder.input", {"text": "!echo O > other.py"})
        assert done["status"] == "completed", done
        resumed = await s.execute("coder.resume", {"args": sid})
        assert resumed["status"] == "completed", resumed
        undone = await s.execute("coder.undo", {})
        assert undone["data"]["restored"] == ["app.py"], undone
        assert (root / "app.py").read_text() == "X = 0\n"
        assert (root / "other.py").read_text() == "O\n"  # the other window's, not this session's
        again = await s.execute("coder.undo", {})
        assert again["reply"] == "Nothing to undo.", again
        assert (root / "other.py").read_text() == "O\n"
