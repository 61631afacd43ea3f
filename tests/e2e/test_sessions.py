"""Sessions: /new, /clear, /resume, /sessions, timezones, and surviving a kill -9."""

from __future__ import annotations

import asyncio
import re

from e2e_support import write_json
from harness import init_git, lsp_session, server_process


async def test_clear_keeps_the_shell_and_new_starts_a_fresh_one(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        first = await s.execute("coder.input", {"text": "!mkdir -p sub && cd sub && export KEEP=yes"})
        sid = first["sessionId"]

        cleared = await s.execute("coder.clear", {})
        assert cleared["sessionId"] == sid
        assert cleared["status"] == "completed"
        change = s.events_of("sessionChanged")[-1]
        assert (change["reason"], change["sessionId"]) == ("clear", sid)
        kept = await s.execute("coder.input", {"text": '!pwd; echo "$KEEP"'})
        assert kept["sessionId"] == sid
        assert kept["rawOutput"] == f"{root / 'sub'}\nyes\n"

        fresh = await s.execute("coder.input", {"text": "/new"})
        new_sid = fresh["sessionId"]
        assert new_sid and new_sid != sid
        assert fresh["data"]["previousSessionId"] == sid
        change = s.events_of("sessionChanged")[-1]
        assert (change["reason"], change["sessionId"]) == ("new", new_sid)
        after = await s.execute("coder.input", {"text": '!pwd; echo "[${KEEP-unset}]"'})
        assert after["sessionId"] == new_sid
        assert after["rawOutput"] == f"{root}\n[unset]\n"

        # The old session is still there to resume.
        listed = await s.execute("coder.sessions", {})
        ids = [x["id"] for x in listed["data"]["sessions"]]
        assert sid in ids and new_sid in ids
        current = [x["id"] for x in listed["data"]["sessions"] if x["current"]]
        assert current == [new_sid]
        old = next(x for x in listed["data"]["sessions"] if x["id"] == sid)
        assert old["messageCount"] == 2
        assert old["title"].startswith("!mkdir")


async def test_resume_lists_resumes_by_prefix_and_rejects_unknown_and_ambiguous(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        ids: list[str] = []
        by_first: dict[str, list[str]] = {}
        # Make sessions until two ids share their first character (at most 17 are needed).
        while True:
            if ids:
                await s.execute("coder.new", {})
            result = await s.execute("coder.input", {"text": f"!echo session {len(ids)}"})
            ids.append(result["sessionId"])
            by_first.setdefault(ids[-1][0], []).append(ids[-1])
            if len(by_first[ids[-1][0]]) == 2:
                break
        clash = by_first[ids[-1][0]]

        listing = await s.execute("coder.resume", {})
        assert listing["status"] == "completed"
        assert listing["data"]["kind"] == "sessions"
        assert {x["id"] for x in listing["data"]["sessions"]} == set(ids)
        assert ids[0][:8] in listing["reply"]

        ambiguous = await s.execute("coder.resume", {"args": clash[0][0]})
        assert (ambiguous["mode"], ambiguous["status"]) == ("error", "failed")
        assert clash[0][:8] in ambiguous["error"]["message"] and clash[1][:8] in ambiguous["error"]["message"]

        unknown = await s.execute("coder.input", {"text": "/resume zzzz"})
        assert (unknown["mode"], unknown["status"]) == ("error", "failed")
        assert "zzzz" in unknown["error"]["message"]

        target = ids[0]
        resumed = await s.execute("coder.input", {"text": f"/resume {target[:10]}"})
        assert resumed["status"] == "completed"
        assert resumed["sessionId"] == target
        assert resumed["data"]["messageCount"] == 1
        change = s.events_of("sessionChanged")[-1]
        assert (change["reason"], change["sessionId"]) == ("resume", target)

        # Later input without a sessionId goes to the resumed session.
        nxt = await s.execute("coder.input", {"text": "!echo back"})
        assert nxt["sessionId"] == target


async def test_sessions_times_in_shanghai_by_default(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!echo hi"})
        listed = await s.execute("coder.input", {"text": "/sessions"})
        assert listed["data"]["timezone"] == "Asia/Shanghai"
        [info] = listed["data"]["sessions"]
        assert info["updatedAt"].endswith("+08:00")
        assert "(Asia/Shanghai)" in info["updated"]
        assert "Asia/Shanghai" in listed["reply"]
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", listed["reply"])


async def test_sessions_respect_the_configured_timezone(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    write_json(root / ".coder" / "config.json", {"timezone": "America/New_York"})
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!echo hi"})
        listed = await s.execute("coder.sessions", {})
        [info] = listed["data"]["sessions"]
        assert "(America/New_York)" in info["updated"]
        assert info["updatedAt"][-6:] in ("-05:00", "-04:00")
    async with lsp_session(root, init_options={"timezone": "UTC"}) as s:
        listed = await s.execute("coder.sessions", {})
        assert listed["data"]["timezone"] == "UTC"
        assert listed["data"]["sessions"]
        for info in listed["data"]["sessions"]:
            assert info["updatedAt"].endswith("+00:00")
            assert "(UTC)" in info["updated"]


async def test_kill_9_then_restart_lists_and_resumes_the_old_session(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        for word in ("one", "two", "three"):
            result = await s.execute("coder.input", {"text": f"!echo {word}"})
        sid = result["sessionId"]
        proc = server_process(s)
        proc.kill()
        await asyncio.wait_for(proc.wait(), 10)

    log = root / ".coder" / "sessions" / f"{sid}.jsonl"
    assert log.exists()
    with log.open("a") as fh:  # a crash in the middle of a write
        fh.write('{"type": "message", "message": {"role": "user", "content": [{"type": "te')

    async with lsp_session(root) as s:
        listed = await s.execute("coder.sessions", {})
        [info] = [x for x in listed["data"]["sessions"] if x["id"] == sid]
        assert info["messageCount"] == 3
        assert info["title"] == "!echo one"
        assert sid[:8] in listed["reply"]

        resumed = await s.execute("coder.input", {"text": f"/resume {sid[:6]}"})
        assert resumed["status"] == "completed"
        assert resumed["sessionId"] == sid
        assert resumed["data"]["messageCount"] == 3
        change = s.events_of("sessionChanged")[-1]
        assert change["reason"] == "resume" and change["sessionId"] == sid

        more = await s.execute("coder.input", {"text": "!echo four"})
        assert more["sessionId"] == sid

    # The torn line did not swallow the next message: a clean restart counts four.
    async with lsp_session(root) as s:
        listed = (await s.execute("coder.sessions", {}))["data"]["sessions"]
        [info] = [x for x in listed if x["id"] == sid]
        assert info["messageCount"] == 4
        resumed = await s.execute("coder.resume", {"args": sid})
        assert resumed["data"]["messageCount"] == 4
        # the client gets the conversation back to redraw its transcript
        history = resumed["data"]["history"]
        assert [h["role"] for h in history] == ["user"] * 4
        assert [h["text"].splitlines()[1] for h in history] == [f"$ echo {w}" for w in ("one", "two", "three", "four")]
