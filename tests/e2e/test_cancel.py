"""The three ways to cancel (progress cancel, `$/cancelRequest`, coder.interrupt) and stale cancels."""

from __future__ import annotations

import asyncio

import pytest
from e2e_support import begin_tokens, end_message, pid_alive, progress_kinds, wait_running, wait_until_gone
from harness import JsonRpcException, full_caps, init_git, lsp_session
from lsprotocol import types


def _long(marker: str) -> str:
    """A command whose process group has a foreground and a background sleep."""
    return f"!echo started; sleep 3{marker[-4:]}7 & echo $! > bg.pid; {marker}; echo finished"


async def _until_started(s) -> None:
    await s.wait_for(lambda: any("started" in e["chunk"] for e in s.events_of("shellOutput")))


async def test_progress_cancel_on_server_created_token(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30501"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        _, fut = s.start("coder.input", {"text": _long(marker)})
        await _until_started(s)
        await wait_running(marker)
        [token] = await s.wait_for(lambda: begin_tokens(s))
        begin = s.progress_of(token)[0]
        assert isinstance(begin, types.WorkDoneProgressBegin)
        assert begin.cancellable is True
        assert marker in (begin.message or "")

        s.cancel_progress(token)
        result = await asyncio.wait_for(fut, 10)
        assert result["status"] == "cancelled"
        assert "started" in result["rawOutput"] and "finished" not in result["rawOutput"]
        assert end_message(s, token) == "Cancelled"
        assert progress_kinds(s.progress_of(token))[-1] == "end"
        assert await wait_until_gone(marker) == []
        bg = int((root / "bg.pid").read_text())
        assert not pid_alive(bg)

        # The session goes on.
        after = await s.execute("coder.input", {"text": "!echo again"})
        assert (after["status"], after["rawOutput"]) == ("completed", "again\n")


async def test_request_work_done_token_is_used_and_cancellable(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30502"
    token = "client-token-7"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        s.client.progress_reports[token] = []  # the client owns this token
        _, fut = s.start("coder.input", {"text": _long(marker)}, token=token)
        await _until_started(s)
        await s.wait_for(lambda: s.progress_of(token))
        assert list(s.client.progress_reports) == [token]  # no window/workDoneProgress/create
        assert s.progress_of(token)[0].cancellable is True

        s.cancel_progress(token)
        result = await asyncio.wait_for(fut, 10)
        assert result["status"] == "cancelled"
        assert end_message(s, token) == "Cancelled"
        assert await wait_until_gone(marker) == []
        assert not pid_alive(int((root / "bg.pid").read_text()))

        # A completed command on a request token ends with Done.
        done_token = "client-token-8"
        s.client.progress_reports[done_token] = []
        ok = await s.execute("coder.input", {"text": "!echo fine"}, token=done_token)
        assert ok["status"] == "completed"
        kinds = progress_kinds(s.progress_of(done_token))
        assert (kinds[0], kinds[-1]) == ("begin", "end")
        assert end_message(s, done_token) == "Done"
        assert set(s.client.progress_reports) == {token, done_token}


async def test_cancel_request_answers_with_request_cancelled_and_kills_the_group(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30503"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        msg_id, fut = s.start("coder.input", {"text": _long(marker)})
        await _until_started(s)
        await wait_running(marker)
        s.cancel_request(msg_id)
        with pytest.raises(JsonRpcException) as caught:
            await asyncio.wait_for(fut, 10)
        assert caught.value.code == -32800
        assert await wait_until_gone(marker) == []
        assert not pid_alive(int((root / "bg.pid").read_text()))
        [token] = begin_tokens(s)
        assert end_message(s, token) == "Cancelled"

        after = await s.execute("coder.input", {"text": "!echo still-here"})
        assert after["rawOutput"] == "still-here\n"


async def test_interrupt_command_cancels_the_running_submission(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30504"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        # Nothing running: a harmless answer, and it leaves nothing behind for the next command.
        idle = await s.execute("coder.interrupt", {})
        assert idle["status"] == "completed"
        assert idle["data"]["cancelledSubmissions"] == []

        _, fut = s.start("coder.input", {"text": _long(marker)})
        await _until_started(s)
        await wait_running(marker)
        answer = await s.execute("coder.interrupt", {})
        assert answer["status"] == "completed"
        result = await asyncio.wait_for(fut, 10)
        assert result["status"] == "cancelled"
        assert answer["data"]["cancelledSubmissions"] == [result["submissionId"]]
        assert await wait_until_gone(marker) == []
        assert not pid_alive(int((root / "bg.pid").read_text()))
        [token] = begin_tokens(s)
        assert end_message(s, token) == "Cancelled"
        finished = s.events_of("shellFinished")[-1]
        assert finished["submissionId"] == result["submissionId"] and finished["exitCode"] is None


async def test_stale_cancels_do_not_touch_a_newer_submission(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30505"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        old_id, old_fut = s.start("coder.input", {"text": "!echo old"})
        old = await asyncio.wait_for(old_fut, 10)
        assert old["status"] == "completed"
        [old_token] = begin_tokens(s)
        assert end_message(s, old_token) == "Done"

        _, fut = s.start("coder.input", {"text": f"!echo started; {marker}; echo finished"})
        await _until_started(s)
        await wait_running(marker)
        new_token = next(t for t in begin_tokens(s) if t != old_token)

        s.cancel_progress(old_token)  # the finished submission's progress token
        s.cancel_request(old_id)  # the finished request
        await asyncio.sleep(0.5)
        assert not fut.done()
        assert await wait_running(marker)
        assert end_message(s, new_token) is None

        s.cancel_progress(new_token)
        result = await asyncio.wait_for(fut, 10)
        assert result["status"] == "cancelled"
        assert await wait_until_gone(marker) == []


async def test_no_progress_without_the_client_capability(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root, caps=full_caps(progress=False)) as s:
        result = await s.execute("coder.input", {"text": "!echo quiet"})
        assert result["rawOutput"] == "quiet\n"
        assert s.client.progress_reports == {}
