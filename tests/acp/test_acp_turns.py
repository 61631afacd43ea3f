"""`coder-ls --acp` driven by the official SDK's client side: initialize, sessions, a prompt
whose tool call edits a file (kind, location, diff), slash commands and `!cmd`, cancel."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError, helpers
from acp_support import acp_agent, wait_for
from agent_e2e import api_env, calls, tool_call, tool_results
from anthropic_server import hang, reply

CHOICES = ["Allow once", "Allow for session", "Always allow", "Deny"]


async def test_initialize_offers_the_api_key_from_the_environment_and_sessions(ws, fake):
    (ws / ".coder").mkdir()
    (ws / ".coder" / "config.json").write_text('{"maxSteps": "many"}')
    async with acp_agent(ws, api_env(fake)) as a:
        init = a.init
        (method,) = init.auth_methods
        assert method.id == "anthropic-api-key" and [v.name for v in method.vars] == ["ANTHROPIC_API_KEY"]
        caps = init.agent_capabilities
        assert caps.load_session and caps.prompt_capabilities.embedded_context
        assert caps.prompt_capabilities.image and not caps.prompt_capabilities.audio  # audio: refused below
        await a.conn.authenticate(method_id="anthropic-api-key")
        new = await a.conn.new_session(cwd=str(ws), mcp_servers=[])
        assert new.modes.current_mode_id == "balanced"
        assert [m.id for m in new.modes.available_modes] == ["strict", "balanced", "auto-edit", "yolo", "plan"]
        (update,) = await wait_for(lambda: a.client.of(new.session_id, "available_commands_update"))
        names = {c.name for c in update.available_commands}
        assert {"help", "undo", "model", "permissions", "new"} <= names
        # the folder's bad setting is said in the session, not only in a log
        problem = await wait_for(lambda: "[error]" in a.client.text(new.session_id) and a.client.text(new.session_id))
        assert "maxSteps" in problem
        for bad in ("relative/dir", str(ws / "missing")):
            with pytest.raises(RequestError) as err:
                await a.conn.new_session(cwd=bad, mcp_servers=[])
            assert err.value.code == -32602 and "cwd" in str(err.value)
        with pytest.raises(RequestError) as err:
            await a.conn.prompt(session_id="nope", prompt=[helpers.text_block("hi")])
        assert err.value.code == -32602 and "unknown session" in str(err.value)
        with pytest.raises(RequestError) as err:
            await a.conn.prompt(session_id=new.session_id, prompt=[helpers.audio_block("aGk=", "audio/wav")])
        assert err.value.code == -32602 and "audio" in str(err.value)
        assert fake.message_requests == []


async def test_prompt_with_a_file_streams_text_and_an_edit_with_its_diff_after_a_permission(ws, fake):
    app = ws / "app.py"
    fake.push(
        calls(
            tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "toolu_e1"),
            text="Fixing.",
        ),
        reply(["Fix", "ed."]),
    )
    async with acp_agent(ws, api_env(fake)) as a:
        a.client.answer = lambda q: "Allow once"
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await a.conn.prompt(
            session_id=sid,
            prompt=[helpers.text_block("fix add"), helpers.resource_link_block("app.py", app.as_uri())],
        )
        assert answer.stop_reason == "end_turn"
        assert "Fixing." in a.client.text(sid) and "Fixed." in a.client.text(sid)
        (start,) = [u for u in a.client.of(sid, "tool_call") if u.tool_call_id == "toolu_e1"]
        assert start.kind == "edit" and [loc.path for loc in start.locations] == [str(app)]
        ((call, options),) = a.client.questions
        assert call.tool_call_id == "toolu_e1" and "app.py" in call.title
        assert [(o.name, o.kind) for o in options] == [
            ("Allow once", "allow_once"),
            ("Allow for session", "allow_always"),
            ("Always allow", "allow_always"),
            ("Deny", "reject_once"),
        ]
        (end,) = [u for u in a.client.of(sid, "tool_call_update") if u.status == "completed"]
        (diff,) = [c for c in end.content if c.type == "diff"]
        assert diff.path == str(app) and "a - b" in diff.old_text and "a + b" in diff.new_text
    assert "return a + b" in app.read_text()
    first = fake.message_requests[0].body["messages"][0]
    assert f"Attached file: {app}" in str(first["content"])


async def test_slash_commands_and_the_shell_work_as_over_lsp(ws, fake):
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("/help")])
        assert answer.stop_reason == "end_turn" and "/undo" in a.client.text(sid)
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("!echo hi-$((40+2))")])
        (start,) = [u for u in a.client.of(sid, "tool_call") if u.kind == "execute"]
        (done,) = [u for u in a.client.of(sid, "tool_call_update") if u.status is not None]
        assert done.tool_call_id == start.tool_call_id and done.status == "completed"
        assert "hi-42" in done.content[0].content.text and done.title == "!echo hi-$((40+2))"
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("!false")])
        assert [u.status for u in a.client.of(sid, "tool_call_update") if u.status][-1] == "failed"
        for bad in (
            [helpers.text_block("!cat"), helpers.resource_link_block("app.py", (ws / "app.py").as_uri())],
            [helpers.text_block("!echo a\x00b")],
            [helpers.text_block("   ")],
        ):
            with pytest.raises(RequestError) as err:
                await a.conn.prompt(session_id=sid, prompt=bad)
            assert err.value.code == -32602 and err.value.data["message"]
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("/nosuchcommand")])
        assert answer.stop_reason == "end_turn" and "nosuchcommand" in a.client.text(sid)
        # a command file of the user's appears: the next input brings the new list
        commands = ws.parent / f".xdg-{ws.name}" / "coder" / "commands"
        commands.mkdir(parents=True)
        (commands / "greet.md").write_text("---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS\n")
        await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("!true")])
        latest = a.client.of(sid, "available_commands_update")[-1]
        assert "greet" in {c.name for c in latest.available_commands}
    assert fake.message_requests == []


async def test_cancel_interrupts_the_turn_and_the_next_prompt_runs(ws, fake):
    fake.push(hang(after_events=4), reply("after the cancel"))
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        turn = asyncio.ensure_future(a.conn.prompt(session_id=sid, prompt=[helpers.text_block("talk")]))
        await wait_for(lambda: a.client.text(sid))
        await a.conn.cancel(session_id=sid)
        answer = await asyncio.wait_for(turn, 15)
        assert answer.stop_reason == "cancelled"
        assert fake.wait_for_disconnect(5)
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("again")])
        assert answer.stop_reason == "end_turn" and "after the cancel" in a.client.text(sid)


async def test_a_rejected_permission_is_a_denial_a_cancelled_one_cancels_the_turn(ws, fake):
    (ws / ".coder").mkdir(exist_ok=True)  # the workspace narrows: nothing runs unasked for the sandbox's sake
    (ws / ".coder" / "config.json").write_text('{"sandbox": {"autoAllow": false}}')
    fake.push(  # `echo` only reads (never asked): `touch` is asked
        calls(tool_call("bash", {"command": "touch first"}, "toolu_b1")),
        reply("denied, fine"),
        calls(tool_call("bash", {"command": "touch second"}, "toolu_b2")),
        reply("never sent"),
    )
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        a.client.answer = lambda q: "Deny"
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("run first")])
        assert answer.stop_reason == "end_turn"
        denied = tool_results(fake.message_requests[1])["toolu_b1"]
        assert denied.get("is_error") and "denied" in str(denied["content"]) and not (ws / "first").exists()
        a.client.answer = lambda q: None  # the client answers `cancelled` (its user cancelled the turn)
        answer = await asyncio.wait_for(a.conn.prompt(session_id=sid, prompt=[helpers.text_block("run second")]), 15)
        assert answer.stop_reason == "cancelled"
        assert len(fake.message_requests) == 3  # the model was not told "denied": no request after the cancel
        assert not (ws / "second").exists()


async def test_modes_are_the_permission_presets(ws, fake):
    fake.push(calls(tool_call("bash", {"command": "echo unasked-$((40+2))"}, "toolu_m1")), reply("done"))
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as err:
            await a.conn.set_session_mode(session_id=sid, mode_id="godmode")
        assert err.value.code == -32602 and "balanced" in str(err.value)
        await a.conn.set_session_mode(session_id=sid, mode_id="yolo")
        (mode,) = await wait_for(lambda: a.client.of(sid, "current_mode_update"))
        assert mode.current_mode_id == "yolo"
        a.client.answer = lambda q: "Deny"
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("run it")])
        assert answer.stop_reason == "end_turn" and a.client.questions == []
        assert "unasked-42" in str(tool_results(fake.message_requests[1])["toolu_m1"]["content"])
