"""The session store when the disk says no, and when two servers want one session.

- A full disk (a real 4 MB tmpfs over `.coder/`, mounted in a user+mount namespace that
  outlives each server so a restart sees the same files): the log append succeeds, the
  index update fails. The turn answers `disk_full` saying what was kept; once there is
  space, the index catches up from the log, in the same server and after a restart.
- A file-size limit (`RLIMIT_FSIZE`, SIGXFSZ ignored, as a shell's `ulimit -f` leaves it):
  the log goes on in a new segment, the turn completes, and `/resume` in a new server
  reads every segment.
- One session resumed in two servers: the second continues it as a fork and says so; the
  first one's log gets no line from the second; after a SIGKILL of the first, its lock is
  gone and the session is resumed itself.
"""

from __future__ import annotations

import asyncio
import errno
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import harness
import msgspec
import pytest
from agent_e2e import api_env, calls, tool_call
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session, server_process

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def _log_messages(log: Path) -> int:
    """MessageEntry lines in every segment of a log, read as plain JSON."""
    count = 0
    for segment in sorted(log.parent.glob(log.name + "*")):
        for line in segment.read_bytes().splitlines():
            if line.strip() and msgspec.json.decode(line).get("type") == "message":
                count += 1
    return count


async def _count_listed(s: harness.Session, sid: str) -> int:
    listed = await s.execute("coder.sessions", {})
    [info] = [x for x in listed["data"]["sessions"] if x["id"] == sid]
    return int(info["messageCount"])


# --------------------------------------------------------------------------- a full disk


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None or shutil.which("fallocate") is None:
        return False
    run = subprocess.run(["unshare", "-rm", "true"], stdin=subprocess.DEVNULL, capture_output=True)
    return run.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A workspace whose `.coder/` is a 4 MB tmpfs; servers start inside its namespace.
    Yields (root, the same root as seen from outside through /proc/<holder>/root)."""
    root = init_git(tmp_path / "ws", {"app.py": "X = 0\n"})
    (root / ".coder").mkdir()
    holder = subprocess.Popen(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=4m tmpfs '{root}/.coder' && echo ready && exec sleep 600"],  # noqa: E501
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"ready"
        server = ["nsenter", "-t", str(holder.pid), "-U", "-m", "--", sys.executable, "-m", "coder_ls"]
        monkeypatch.setattr(harness, "SERVER", server)
        yield root, Path(f"/proc/{holder.pid}/root{root}")
    finally:
        holder.kill()
        holder.wait()


def _preallocate(log: Path) -> None:
    """Blocks for the log beyond its end, as a file system's preallocation gives."""
    subprocess.run(["fallocate", "-n", "-l", "256K", str(log)], check=True, stdin=subprocess.DEVNULL)


def _fill(directory: Path) -> Path:
    """Fill the file system of `directory` to the last byte."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        try:
            while True:
                f.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        try:
            while True:
                f.write(b"\0")
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


@pytest.mark.skipif(not _namespaces_work(), reason="no user+mount namespaces here (unshare -rm)")
async def test_full_disk_after_the_log_append_is_disk_full_and_the_index_catches_up(small_disk, fake):
    root, seen = small_disk
    fake.push(reply("first answer"), reply("second answer"), reply("third answer"))
    async with lsp_session(root, env=api_env(fake)) as s:
        first = await s.execute("coder.input", {"text": "first question"})
        assert first["status"] == "completed", first
        sid = first["sessionId"]
        log = seen / ".coder" / "sessions" / f"{sid}.jsonl"
        assert await _count_listed(s, sid) == 2
        # Room for the log (blocks it already holds), none for anything else: the sqlite WAL needs new blocks.
        _preallocate(log)
        filler = _fill(seen / ".coder")

        second = await s.execute("coder.input", {"text": "second question"})
        assert second["status"] == "failed", second
        assert second["error"]["code"] == "disk_full", second
        assert "kept all 4 messages" in second["error"]["message"], second
        assert _log_messages(log) == 4  # the log has the whole exchange

        filler.unlink()
        third = await s.execute("coder.input", {"text": "third question", "sessionId": sid})
        assert third["status"] == "completed", third
        assert _log_messages(log) == 6
        assert await _count_listed(s, sid) == 6  # caught up from the log

    async with lsp_session(root, env=api_env(fake)) as s:
        assert await _count_listed(s, sid) == 6
        found = await s.execute("coder.input", {"text": f"/resume {sid[:8]}"})
        assert found["data"]["messageCount"] == 6, found


@pytest.mark.skipif(not _namespaces_work(), reason="no user+mount namespaces here (unshare -rm)")
async def test_an_index_left_behind_by_a_full_disk_is_caught_up_at_the_next_start(small_disk, fake):
    root, seen = small_disk
    fake.push(reply("first answer"), reply("second answer"))
    async with lsp_session(root, env=api_env(fake)) as s:
        first = await s.execute("coder.input", {"text": "first question"})
        sid = first["sessionId"]
        log = seen / ".coder" / "sessions" / f"{sid}.jsonl"
        _preallocate(log)
        filler = _fill(seen / ".coder")
        second = await s.execute("coder.input", {"text": "second question"})
        assert second["error"]["code"] == "disk_full", second
        proc = server_process(s)
        proc.kill()  # no later submission in this server to catch up
        await asyncio.wait_for(proc.wait(), 10)
    filler.unlink()
    async with lsp_session(root, env=api_env(fake)) as s:
        assert await _count_listed(s, sid) == 4


# --------------------------------------------------------------------------- a file-size limit

LIMIT = 256 * 1024


@pytest.fixture
def size_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    start = (
        "import os, resource, signal, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, {LIMIT}))\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'coder_ls'])\n"
    )
    monkeypatch.setattr(harness, "SERVER", [sys.executable, "-c", start])


async def test_a_log_at_the_file_size_limit_goes_on_in_a_new_segment(tmp_path, fake, size_limited):
    root = init_git(tmp_path / "ws", {"app.py": "X = 0\n"})
    body = "".join(f"line {n:06d} of a generated file\n" for n in range(2000))  # 66 KB
    writes = [tool_call("write", {"path": f"gen{n}.txt", "content": body}, f"toolu_w{n}") for n in range(5)]
    fake.push(*[calls(w) for w in writes], reply("wrote them"), reply("still here"))
    init = {"permissions": "yolo"}
    async with lsp_session(root, env=api_env(fake), init_options=init) as s:
        done = await s.execute("coder.input", {"text": "write five files"})
        assert done["status"] == "completed", done
        assert done["reply"] == "wrote them"
        sid = done["sessionId"]
        log = root / ".coder" / "sessions" / f"{sid}.jsonl"
        assert (log.parent / f"{sid}.jsonl.1").exists()  # a second segment
        assert all(p.stat().st_size <= LIMIT for p in log.parent.glob(f"{sid}.jsonl*"))
        again = await s.execute("coder.input", {"text": "and now?", "sessionId": sid})
        assert again["status"] == "completed", again
        total = _log_messages(log)
        assert total == 14  # 1 + 5 x (call, result) + answer, then 2

    fake.push(reply("resumed fine"))
    async with lsp_session(root, env=api_env(fake), init_options=init) as s:
        resumed = await s.execute("coder.input", {"text": f"/resume {sid}"})
        assert resumed["data"]["messageCount"] == total, resumed
        last = await s.execute("coder.input", {"text": "one more", "sessionId": sid})
        assert last["status"] == "completed", last
        sent = fake.message_requests[-1].body["messages"]
        ids = [b.get("id") for m in sent if isinstance(m["content"], list) for b in m["content"]]
        assert [f"toolu_w{n}" for n in range(5)] == [i for i in ids if i], ids  # every segment's calls


# --------------------------------------------------------------------------- two servers


async def test_a_session_open_in_another_server_continues_as_a_fork(tmp_path, fake: FakeAnthropicServer):
    root = init_git(tmp_path / "ws", {"app.py": "X = 0\n"})
    fake.push(reply("from window A"))
    async with lsp_session(root, env=api_env(fake)) as a:
        first = await a.execute("coder.input", {"text": "hello from A"})
        sid = first["sessionId"]
        log = root / ".coder" / "sessions" / f"{sid}.jsonl"
        lines = log.read_bytes()

        async with lsp_session(root, env=api_env(fake)) as b:
            resumed = await b.execute("coder.input", {"text": f"/resume {sid[:8]}"})
            assert resumed["status"] == "completed", resumed
            fork = resumed["sessionId"]
            assert fork != sid, resumed
            assert "open in another coder-ls" in resumed["reply"] and fork[:8] in resumed["reply"], resumed
            assert resumed["data"]["messageCount"] == 2
            fake.push(reply("from window B"))
            turn = await b.execute("coder.input", {"text": "hello from B", "sessionId": sid})
            assert turn["status"] == "completed" and turn["sessionId"] == fork, turn
            assert "hello from A" in str(fake.message_requests[-1].body["messages"])  # the same history
            assert log.read_bytes() == lines  # not a line of B's in A's log
            fork_log = log.parent / f"{fork}.jsonl"
            assert _log_messages(fork_log) == 4

            fake.push(reply("A again"))
            more = await a.execute("coder.input", {"text": "A goes on", "sessionId": sid})
            assert more["status"] == "completed" and more["sessionId"] == sid, more
            assert _log_messages(log) == 4
            assert "hello from B" not in log.read_text()

            proc = server_process(a)
            proc.kill()  # SIGKILL: the lock dies with the process
            await asyncio.wait_for(proc.wait(), 10)

    async with lsp_session(root, env=api_env(fake)) as c:
        resumed = await c.execute("coder.input", {"text": f"/resume {sid[:8]}"})
        assert resumed["sessionId"] == sid and "another coder-ls" not in resumed["reply"], resumed
        assert resumed["data"]["messageCount"] == 4
