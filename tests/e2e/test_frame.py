"""The submission frame over LSP: cleanup on every exit path (a second cancel included),
descriptors that do not leak per session load, and idle sessions evicted and reloaded."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from pathlib import Path

from e2e_support import pid_alive, wait_running, wait_until_gone
from harness import full_caps, init_git, lsp_session, server_env, server_process

from coder_ls.guard.trust import OwnedIds
from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.store import log as slog


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def log_lines(root: Path, session_id: str) -> list[dict]:
    path = root / ".coder" / "sessions" / f"{session_id}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_second_cancel_during_cleanup_keeps_the_record_and_the_snapshot(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "original\n", **{f"f{i}.txt": f"{i}\n" * 50 for i in range(300)}})
    marker = "sleep 30801"
    async with lsp_session(root, caps=full_caps(progress=True)) as s:
        sid = (await s.execute("coder.input", {"text": "!true"}))["sessionId"]
        token = "double-cancel"
        s.client.progress_reports[token] = []
        _, fut = s.start(
            "coder.input", {"text": f"!echo changed > a.txt; echo go; {marker}", "sessionId": sid}, token=token
        )
        await s.wait_for(lambda: any("go" in e["chunk"] for e in s.events_of("shellOutput")))
        await wait_running(marker)
        s.cancel_progress(token)
        for _ in range(20):  # keep cancelling while the frame cleans up
            await asyncio.sleep(0.005)
            s.cancel_progress(token)
            s.start("coder.interrupt", {"sessionId": sid})
        result = await asyncio.wait_for(fut, 15)
        assert result["status"] == "cancelled"
        # the answer came after the snapshot was finished: /undo reverts this very submission
        undo = await s.execute("coder.undo", {"sessionId": sid})
        assert undo["status"] == "completed", undo
        assert undo["data"]["submissionId"] == result["submissionId"], undo
        assert (root / "a.txt").read_text() == "original\n"
        # the `!cmd` is on record (the model will see it on the next turn)
        texts = [
            "".join(b.get("text", "") for b in line["message"]["content"])
            for line in log_lines(root, sid)
            if line.get("type") == "message"
        ]
        assert any(marker in t and "cancelled" in t for t in texts), texts
        assert await wait_until_gone(marker) == []


def make_session(root: Path, text: str) -> str:
    """A session of the user's, as an earlier server left it: its log, and its id in the
    user's record (a log alone is not the user's: tests/security/test_untrusted_sessions.py)."""
    sid = uuid.uuid4().hex
    with slog.SessionLog.create(root, sid, str(root)) as log:
        message = Message(role="user", content=[TextBlock(text=text)])
        log.append(slog.MessageEntry(message=message, submission_id="s", ts=time.time()))
    OwnedIds(server_env(root), root, "sessions").add(sid)
    return sid


async def test_descriptors_stay_stable_across_50_session_loads(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    ids = [make_session(root, f"session number {n}") for n in range(70)]
    async with lsp_session(root) as s:
        pid = server_process(s).pid
        for sid in ids[:20]:  # warm up: the index, the first shells, the eviction bound
            result = await s.execute("coder.sessions", {"sessionId": sid})
            assert result["status"] == "completed", result
        before = fd_count(pid)
        for sid in ids[20:]:
            result = await s.execute("coder.sessions", {"sessionId": sid})
            assert result["status"] == "completed", result
        after = fd_count(pid)
        assert after - before <= 2, (before, after)


async def test_idle_sessions_are_evicted_and_reloaded_on_demand(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    ids = [make_session(root, f"other {n}") for n in range(40)]
    async with lsp_session(root) as s:
        first = await s.execute("coder.input", {"text": "!sleep 30901 & echo $! > bg.pid; export KEEP=1"})
        a = first["sessionId"]
        bg = int((root / "bg.pid").read_text())
        assert pid_alive(bg)
        await s.execute("coder.new", {})  # A is no longer current: it may be evicted when idle
        for sid in ids:
            await s.execute("coder.sessions", {"sessionId": sid})
        # A was evicted: its shell closed, its background job with it
        await s.wait_for(lambda: not pid_alive(bg), timeout=5)
        # and it comes back from its log on demand
        again = await s.execute("coder.input", {"text": "!echo back", "sessionId": a})
        assert (again["status"], again["sessionId"], again["rawOutput"]) == ("completed", a, "back\n")
        resumed = await s.execute("coder.input", {"text": f"/resume {a}"})
        assert resumed["status"] == "completed", resumed
        assert resumed["data"]["messageCount"] >= 2
