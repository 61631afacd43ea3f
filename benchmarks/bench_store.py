"""Sessions on disk: `/sessions` with 1,000 sessions, `/resume` of a 10,000-message session."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from common import (
    CODER_CMD,
    SMALL_REPO,
    LspClient,
    Result,
    coder_server,
    init_git,
    median,
    now,
    percentile,
    server_env,
    temp_root,
)

from coder_ls.guard.trust import OwnedIds
from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from coder_ls.store.index import SessionIndex
from coder_ls.store.log import MessageEntry, SessionLog, TitleEntry


@contextlib.contextmanager
def no_fsync() -> Iterator[None]:
    """Populating thousands of logs: skip fsync in *this* process (the server is untouched)."""
    real = os.fsync
    os.fsync = lambda fd: None  # type: ignore[assignment]
    try:
        yield
    finally:
        os.fsync = real  # type: ignore[assignment]


def own(root: Path, ids: list[str]) -> None:
    """Record `ids` as sessions this user started here, as the server records the ones it
    creates (`trust.OwnedIds`, in the server's private state dir, `server_env`): a session
    log that came with the workspace is neither listed nor resumed (the untrusted-workspace
    gate), and without this both benchmarks measured a listing of none and a refusal."""
    owned = OwnedIds(server_env(root), root.resolve(), "sessions")
    for sid in ids:
        owned.add(sid)


LOREM = (
    "Please look at the parser in src/app.py and explain why the tokenizer drops the last "
    "character of a quoted string when it is followed by a comma; then fix it and add a test. "
)


def populate_sessions(root: Path, count: int, messages_each: int = 4) -> list[str]:
    """`count` small sessions (title + user/assistant messages), spread over the last 30 days."""
    ids: list[str] = []
    base = time.time() - 30 * 86400
    with no_fsync():
        for i in range(count):
            sid = f"{i:08x}" + "b" * 24
            created = base + i * (30 * 86400 / count)
            log = SessionLog.create(root, sid, str(root), created_at=created)
            entries: list = [TitleEntry(title=f"session {i}: fix the tokenizer", ts=created)]
            for k in range(messages_each):
                role = "user" if k % 2 == 0 else "assistant"
                text = f"{LOREM} ({i}/{k})" if role == "user" else f"Done: changed src/app.py ({i}/{k})."
                entries.append(
                    MessageEntry(message=Message(role=role, content=[TextBlock(text=text)]), ts=created + k + 1)
                )
            log.extend(entries)
            log.close()
            ids.append(sid)
        with SessionIndex(root):  # a fresh index rebuilds itself from the logs
            pass
    own(root, ids)
    return ids


def populate_big_session(root: Path, messages: int) -> str:
    """One session of `messages` MessageEntry lines: user asks, the assistant answers or calls
    a tool (every 4th exchange: tool_use + a ~600-character tool_result)."""
    sid = "big" + "0" * 29
    created = time.time() - 86400
    with no_fsync():
        log = SessionLog.create(root, sid, str(root), created_at=created)
        entries: list = []
        pending_tool: str | None = None
        for k in range(messages):
            ts = created + k * 0.5
            if k % 2 == 0:
                if pending_tool:
                    content = [ToolResultBlock(tool_use_id=pending_tool, content=("    x = parse(y)\n" * 36))]
                    pending_tool = None
                else:
                    content = [TextBlock(text=f"{LOREM} (#{k})")]
                message = Message(role="user", content=content)
            else:
                if k % 8 == 1:
                    pending_tool = f"toolu_{k:06d}"
                    content = [
                        TextBlock(text="Let me read the file."),
                        ToolUseBlock(id=pending_tool, name="read", input={"path": "src/app.py"}),
                    ]
                else:
                    content = [TextBlock(text=f"The tokenizer stops one character early; fixed it (#{k}).")]
                message = Message(role="assistant", content=content)
            entries.append(MessageEntry(message=message, ts=ts, submission_id=f"sub{k // 2:06d}"))
            if len(entries) >= 1000:
                log.extend(entries)
                entries = []
        log.extend(entries)
        log.close()
        with SessionIndex(root):
            pass
    own(root, [sid])
    return sid


async def bench_sessions_1000(quick: bool) -> list[Result]:
    warm, runs = (3, 20) if quick else (5, 100)
    samples: list[float] = []
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        t = now()
        populate_sessions(root, 1000)
        populate_s = now() - t
        async with coder_server(root) as client:
            first = 0.0
            for i in range(warm + runs):
                t0 = now()
                r = await client.execute("coder.sessions", {})
                dt = (now() - t0) * 1000
                if r["status"] != "completed" or not r.get("data"):
                    raise RuntimeError(f"/sessions: {r}")
                if i == 0:
                    first = dt
                    shown = len((r["data"] or {}).get("sessions", []))
                    if shown < 50:  # a page: the population must be what is listed
                        raise RuntimeError(f"/sessions lists {shown} of the 1,000 sessions written")
                if i >= warm:
                    samples.append(dt)
    return [
        Result(
            "sessions_1000",
            "/sessions with 1,000 sessions",
            median(samples),
            30.0,
            samples=samples,
            notes=[
                f"first call (cold: opens the index, checks 1,000 log sizes, plus anything deferred "
                f"past initialize): {first:.1f} ms; {shown} sessions listed",
                f"population (store APIs, fsync skipped in the bench process): {populate_s:.1f} s",
            ],
        )
    ]


async def _resume_once(root: Path, sid: str, *, settle: bool) -> float:
    """A fresh server: initialize + initialized (untimed), optionally a `coder.listCommands`
    round trip (untimed: lets the server finish whatever it deferred past initialize without
    touching sessions), then `coder.resume {args: sid}` timed."""
    client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root))
    try:
        await client.initialize(root)
        if settle:
            await client.execute("coder.listCommands", {})
        t0 = now()
        r = await client.execute("coder.resume", {"args": sid})
        dt = (now() - t0) * 1000
    finally:
        await client.close()
    if r["status"] != "completed" or r["sessionId"] != sid:
        raise RuntimeError(f"/resume: {r}")
    count = (r.get("data") or {}).get("messageCount")
    if count != 10_000:
        raise RuntimeError(f"/resume: message count {count}")
    return dt


async def bench_resume_10k(quick: bool) -> list[Result]:
    runs, warm = (2, 0) if quick else (10, 1)
    settled: list[float] = []
    immediate: list[float] = []
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        sid = populate_big_session(root, 10_000)
        size_mb = (root / ".coder" / "sessions" / f"{sid}.jsonl").stat().st_size / 1e6
        for i in range(runs + warm):  # the first one (full runs) warms the page cache
            order = [(True, settled), (False, immediate)]
            if i % 2:
                order.reverse()
            for settle, out in order:
                dt = await _resume_once(root, sid, settle=settle)
                if i >= warm:
                    out.append(dt)
    return [
        Result(
            "resume_10k",
            "/resume of a 10,000-message session (fresh server)",
            median(settled),
            200.0,
            samples=settled,
            notes=[
                f"log {size_mb:.1f} MB; each run: new server, initialize + initialized, one coder.listCommands "
                "round trip (untimed), then coder.resume timed: the first resume loads the log from disk",
                f"sent right after initialized instead (pays what the server deferred past initialize): "
                f"median {median(immediate):.1f} ms, p90 {percentile(immediate, 90):.1f} ms, n={len(immediate)}",
            ],
        )
    ]


BENCHMARKS = {
    "sessions_1000": bench_sessions_1000,
    "resume_10k": bench_resume_10k,
}
