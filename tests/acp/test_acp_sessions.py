"""Over ACP, the parts an editor shows: thoughts, the plan, edits landing in the editor
through `fs/write_text_file`, a subagent as its own tool calls, `/task` in the plan;
then `session/load` in a new process (history replayed) and `/undo` there."""

from __future__ import annotations

import json

from acp import helpers
from acp_support import RecordingClient, acp_agent
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply


def user_settings(root, **settings):
    path = root.parent / f".xdg-{root.name}" / "coder" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))


async def test_thoughts_plan_editor_writes_and_a_subagent(ws, fake):
    user_settings(ws, permissions="yolo", thinkingBudget=1024, maxOutputTokens=8192)
    app = ws / "app.py"
    todos = {"todos": [{"content": "fix add", "status": "in_progress"}, {"content": "check mul"}]}
    fake.push(
        {"when": "find mul", **reply("mul is fine")},
        reply("", thinking="I will plan first.", signature="sig-1", toolCalls=[tool_call("todoWrite", todos, "td1")]),
        calls(tool_call("read", {"path": "app.py"}, "r1"), tool_call("read", {"path": "../outside.txt"}, "r2")),
        calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "e1")),
        calls(tool_call("task", {"agent": "explore", "prompt": "find mul"}, "t1")),
        reply("Done."),
    )
    client = RecordingClient(save_on_write=False)  # the editor keeps the edit in its buffer
    (ws.parent / "outside.txt").write_text("secret outside the workspace\n")
    client.buffers[str(app)] = APP + "# an unsaved line\n"  # typed in the editor, not saved
    async with acp_agent(ws, api_env(fake), fs=True, client=client) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("fix add and check mul")])
        assert answer.stop_reason == "end_turn"
        assert "I will plan first." in client.text(sid, "agent_thought_chunk")
        plan = client.of(sid, "plan")[0]
        assert [(e.content, e.status) for e in plan.entries] == [("fix add", "in_progress"), ("check mul", "pending")]
        # the read saw the unsaved buffer; nothing outside the workspace was asked for
        read = tool_results(fake.message_requests[2])
        assert "an unsaved line" in result_text(read["r1"]) and read["r2"].get("is_error")
        assert str(ws.parent / "outside.txt") not in client.reads and str(app) in client.reads
        # the edit was made on the buffer and went to the editor; the disk holds it too
        ((path, text),) = client.writes
        assert path == str(app) and "a + b" in text and "an unsaved line" in text
        assert app.read_text() == text
        (edit_end,) = [u for u in client.of(sid, "tool_call_update") if u.tool_call_id == "e1"]
        (diff,) = [c for c in edit_end.content if c.type == "diff"]
        assert "an unsaved line" in diff.old_text and "a - b" in diff.old_text and diff.new_text == text
        # the subagent: its tool calls are its own, nested under the task call by _meta
        (task_start,) = [u for u in client.of(sid, "tool_call") if u.tool_call_id == "t1"]
        assert task_start.kind == "think"
        task_updates = [u for u in client.of(sid, "tool_call_update") if u.tool_call_id == "t1"]
        assert any("explore started" in str(u.content) for u in task_updates)
        assert any("mul is fine" in str(u.content) for u in task_updates)
        assert task_updates[-1].status == "completed"


async def test_session_load_replays_history_and_undo_works_over_acp(ws, fake):
    user_settings(ws, permissions="yolo")
    app = ws / "app.py"
    fake.push(
        calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "e1")),
        reply("Fixed add."),
    )
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("please fix add")])
    assert "a + b" in app.read_text()
    async with acp_agent(ws, api_env(fake)) as b:
        loaded = await b.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "yolo"
        assert "please fix add" in b.client.text(sid, "user_message_chunk")
        assert "Fixed add." in b.client.text(sid)
        answer = await b.conn.prompt(session_id=sid, prompt=[helpers.text_block("/undo")])
        assert answer.stop_reason == "end_turn"
        assert app.read_text() == APP
        assert "app.py" in b.client.text(sid)
        unknown = "0" * 32
        try:
            await b.conn.load_session(cwd=str(ws), session_id=unknown, mcp_servers=[])
        except Exception as exc:  # RequestError
            assert getattr(exc, "code", None) == -32602 and unknown in str(getattr(exc, "data", ""))
        else:
            raise AssertionError("an unknown session was loaded")
