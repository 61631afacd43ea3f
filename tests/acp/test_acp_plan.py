"""Plan mode over ACP (contract section 22, `coder_ls/acp/plan.py`): the mode `plan` is
offered beside the presets; choosing it plans (every write denied, nobody asked); the plan
the turn ends with is answered by a `session/request_permission` before `session/prompt`
returns: Approve in a preset runs it, Reject ends plan mode, a cancel leaves it waiting;
another mode leaves plan mode."""

from __future__ import annotations

from acp import helpers
from acp_support import acp_agent, wait_for
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply

PLAN = "1. Create `planned.txt` holding `done`."
CHOICES = ["Approve (balanced)", "Approve (auto-edit)", "Approve (strict)", "Approve (yolo)", "Keep planning", "Reject"]


def modes(a, sid: str) -> list[str]:
    return [u.current_mode_id for u in a.client.of(sid, "current_mode_update")]


async def test_plan_mode_is_offered_and_an_approved_plan_runs_in_the_chosen_preset(ws, fake):
    fake.push(
        calls(
            tool_call("write", {"path": "early.txt", "content": "x"}, "toolu_pw"),
            tool_call("read", {"path": "app.py"}, "toolu_pr"),
        ),
        calls(tool_call("exit_plan_mode", {"plan": PLAN}, "toolu_px")),
        calls(tool_call("write", {"path": "planned.txt", "content": "done\n"}, "toolu_pl")),
        reply("Done."),
    )
    async with acp_agent(ws, api_env(fake)) as a:
        new = await a.conn.new_session(cwd=str(ws), mcp_servers=[])
        sid = new.session_id
        assert [m.id for m in new.modes.available_modes] == ["strict", "balanced", "auto-edit", "yolo", "plan"]
        assert new.modes.current_mode_id == "balanced"
        await a.conn.set_session_mode(session_id=sid, mode_id="plan")
        await wait_for(lambda: modes(a, sid)[-1:] == ["plan"])
        a.client.answer = lambda q: "Approve (auto-edit)"
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("create planned.txt")])
        assert answer.stop_reason == "end_turn"
        (question,) = a.client.questions  # the plan's only: the write while planning was denied unasked
        call, options = question
        assert PLAN in call.content[0].content.text and call.kind == "switch_mode"
        assert [o.name for o in options] == CHOICES and options[-1].kind == "reject_once"
        denied = tool_results(fake.message_requests[1])["toolu_pw"]
        assert denied.get("is_error") and "plan mode" in result_text(denied)
        assert not (ws / "early.txt").exists()
        assert (ws / "planned.txt").read_text() == "done\n"  # auto-edit: written unasked
        assert "approved your plan" in str(fake.message_requests[2].body["messages"])
        assert modes(a, sid)[-1] == "auto-edit"
        assert "Done." in a.client.text(sid)


async def test_reject_ends_plan_mode_a_cancel_leaves_the_plan_waiting_and_another_mode_leaves_it(ws, fake):
    fake.push(reply(PLAN), reply(PLAN))
    async with acp_agent(ws, api_env(fake)) as a:
        sid = (await a.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await a.conn.set_session_mode(session_id=sid, mode_id="plan")
        a.client.answer = lambda q: "Reject"
        rejected = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("plan it")])
        assert rejected.stop_reason == "end_turn" and "Plan rejected" in a.client.text(sid)
        assert modes(a, sid)[-1] == "balanced" and len(fake.message_requests) == 1
        # a cancelled question: nothing runs, the prompt still ends, the plan waits
        await a.conn.set_session_mode(session_id=sid, mode_id="plan")
        a.client.answer = lambda q: None
        waiting = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("plan again")])
        assert waiting.stop_reason == "end_turn" and "The plan waits" in a.client.text(sid)
        assert modes(a, sid)[-1] == "plan" and len(fake.message_requests) == 2
        # choosing a preset leaves plan mode: the next turn writes
        await a.conn.set_session_mode(session_id=sid, mode_id="yolo")
        await wait_for(lambda: modes(a, sid)[-1:] == ["yolo"])
        fake.push(calls(tool_call("write", {"path": "after.txt", "content": "ok\n"}, "toolu_after")), reply("ok"))
        a.client.questions.clear()
        done = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("write after.txt")])
        assert done.stop_reason == "end_turn" and a.client.questions == []
        assert (ws / "after.txt").read_text() == "ok\n"
