"""Queueing (contract section 12): submissions of a session wait behind the running one,
in order, each told its place at once; read-only commands never wait; an interrupt from
any of the three paths cancels the running submission and every queued one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from e2e_support import wait_running, wait_until_gone
from harness import JsonRpcException, Session, full_caps, init_git, lsp_session


def of_submission(s: Session, submission_id: str) -> list[dict[str, Any]]:
    return [e for e in s.events if e.get("submissionId") == submission_id]


def queued_position(s: Session, submission_id: str) -> int | None:
    for e in of_submission(s, submission_id):
        if e["type"] == "queued":
            return int(e["position"])
    return None


async def started(s: Session, marker: str) -> None:
    await s.wait_for(lambda: any(marker in e.get("chunk", "") for e in s.events_of("shellOutput")))


async def test_queued_submissions_run_in_order_and_know_their_place(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        sid = (await s.execute("coder.input", {"text": "!true"}))["sessionId"]
        _, first = s.start("coder.input", {"text": "!echo first-start; sleep 1; echo first-end", "sessionId": sid})
        await started(s, "first-start")
        _, second = s.start("coder.input", {"text": "!echo second >> order.txt", "sessionId": sid})
        _, third = s.start("coder.shell", {"command": "echo third >> order.txt", "sessionId": sid})
        # both are told their place at once, while the first still runs
        await s.wait_for(lambda: len(s.events_of("queued")) == 2, timeout=5)
        assert not first.done()
        positions = sorted(e["position"] for e in s.events_of("queued"))
        assert positions == [1, 2]
        results = await asyncio.wait_for(asyncio.gather(first, second, third), 20)
        assert [r["status"] for r in results] == ["completed"] * 3
        assert queued_position(s, results[1]["submissionId"]) == 1
        assert queued_position(s, results[2]["submissionId"]) == 2
        assert queued_position(s, results[0]["submissionId"]) is None
        assert (root / "order.txt").read_text() == "second\nthird\n"
        finished = [e["submissionId"] for e in s.events_of("turnFinished")]
        assert finished[-3:] == [r["submissionId"] for r in results]
        # a queued submission's progress begins only when it starts: after the first ended
        tokens = [t for t in s.progress_tokens() if str(t).endswith(results[1]["submissionId"])]
        assert len(tokens) == 1


async def test_read_only_commands_never_wait(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30711"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        sid = (await s.execute("coder.input", {"text": "!true"}))["sessionId"]
        _, running = s.start("coder.input", {"text": f"!echo go; {marker}", "sessionId": sid})
        await started(s, "go")
        await wait_running(marker)
        for command, arg in [
            ("coder.sessions", {}),
            ("coder.diff", {}),
            ("coder.help", {}),
            ("coder.model", {}),
            ("coder.permissions", {}),
            ("coder.permissions", {"args": "strict"}),
            ("coder.listCommands", {}),
        ]:
            result = await asyncio.wait_for(s.execute(command, {**arg, "sessionId": sid}), 5)
            assert result["status"] == "completed", (command, result)
        assert not running.done()
        assert s.events_of("queued") == []
        stop = await s.execute("coder.interrupt", {"sessionId": sid})
        assert stop["status"] == "completed"
        assert (await asyncio.wait_for(running, 10))["status"] == "cancelled"
        assert await wait_until_gone(marker) == []


@pytest.mark.parametrize("path", ["progress", "cancelRequest", "interrupt"])
async def test_each_cancel_path_cancels_running_and_queued(tmp_path, path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = f"sleep 307{['progress', 'cancelRequest', 'interrupt'].index(path)}2"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        sid = (await s.execute("coder.input", {"text": "!true"}))["sessionId"]
        token = f"tok-{path}"
        s.client.progress_reports[token] = []
        msg_id, running = s.start("coder.input", {"text": f"!echo go; {marker}", "sessionId": sid}, token=token)
        await started(s, "go")
        await wait_running(marker)
        _, queued1 = s.start("coder.input", {"text": "!echo one > never1.txt", "sessionId": sid})
        _, queued2 = s.start("coder.input", {"text": "/clear", "sessionId": sid})
        await s.wait_for(lambda: len(s.events_of("queued")) == 2, timeout=5)
        match path:
            case "progress":
                s.cancel_progress(token)
            case "cancelRequest":
                s.cancel_request(msg_id)
            case "interrupt":
                answer = await s.execute("coder.interrupt", {"sessionId": sid})
                assert len(answer["data"]["cancelledSubmissions"]) == 3
        if path == "cancelRequest":
            with pytest.raises(JsonRpcException) as caught:
                await asyncio.wait_for(running, 10)
            assert caught.value.code == -32800
            first = caught.value.data
        else:
            first = await asyncio.wait_for(running, 10)
        assert first["status"] == "cancelled"
        for fut in (queued1, queued2):
            result = await asyncio.wait_for(fut, 10)
            assert result["status"] == "cancelled", result
            events = [e["type"] for e in of_submission(s, result["submissionId"])]
            assert events == ["queued", "turnFinished"]  # never ran
            assert of_submission(s, result["submissionId"])[-1]["status"] == "cancelled"
        assert not (root / "never1.txt").exists()
        assert await wait_until_gone(marker) == []
        # the session goes on, and a stale cancel of the old token touches nothing newer
        _, later = s.start("coder.input", {"text": "!sleep 0.3; echo later", "sessionId": sid})
        await asyncio.sleep(0.1)
        s.cancel_progress(token)
        s.cancel_request(msg_id)
        result = await asyncio.wait_for(later, 10)
        assert (result["status"], result["rawOutput"]) == ("completed", "later\n")


async def test_every_submission_ends_with_turn_finished(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        await s.execute("coder.input", {"text": "!echo x > b.txt"})
        inputs = [
            ("coder.input", {"text": "!echo hi"}),
            ("coder.input", {"text": "!false"}),
            ("coder.input", {"text": "!rm -rf /"}),
            ("coder.input", {"text": "/help"}),
            ("coder.input", {"text": "/nosuchcommand"}),
            ("coder.sessions", {}),
            ("coder.diff", {}),
            ("coder.model", {}),
            ("coder.permissions", {"args": "balanced"}),
            ("coder.undo", {}),
            ("coder.clear", {}),
            ("coder.compact", {}),
            ("coder.resume", {}),
            ("coder.new", {}),
        ]
        for command, arg in inputs:
            result = await s.execute(command, arg)
            await asyncio.sleep(0.05)
            events = of_submission(s, result["submissionId"])
            assert events, (command, arg)
            assert events[-1]["type"] == "turnFinished", (command, arg, events)
            assert events[-1]["status"] == result["status"], (command, arg, events[-1], result)
            assert [e["type"] for e in events].count("turnFinished") == 1


async def test_unknown_session_is_a_clear_error(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        for bad in ["0123456789abcdef0123456789abcdef", "../../etc/passwd", "not a session"]:
            result = await s.execute("coder.input", {"text": "!echo hi", "sessionId": bad})
            assert (result["mode"], result["status"]) == ("error", "failed"), result
            assert result["error"]["code"] == "unknown_session", result
            assert "/sessions" in result["reply"]
