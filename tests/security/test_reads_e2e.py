"""Reads that cannot hang or bloat the server: the agent's `read` tool on a FIFO, a
character device (`/dev/zero` as a node in the workspace and through a symlink) and a
2 GB sparse file, through a real LSP client against the real server and SDK.

The server runs under `prlimit --as` so that a reader that does not stop at a cap fails
with a MemoryError instead of taking the machine's memory (the issue saw 12.6 GB in 40 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

import harness
import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, init_git, lsp_session, server_process

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")

ADDRESS_SPACE = 3 * 1024**3  # a 2 GB read fits, /dev/zero read to the end does not
RSS_BUDGET = 400 * 1024 * 1024  # the server's peak RSS after every read here
TURN_TIMEOUT = 30.0
SPARSE_SIZE = 2 * 1024**3
TEXT_HEAD = b"".join(b"line %d of the head of a huge sparse file\n" % n for n in range(1, 3001))


def _peak_rss(s: Session) -> int:
    """VmHWM of the server process, in bytes."""
    status = Path(f"/proc/{server_process(s).pid}/status").read_text()
    kb = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(kb) * 1024


def _unblock_fifo(path: Path) -> None:
    """If a (broken) server is blocked opening the FIFO for reading, open and close its
    write end so that it gets EOF and the session can shut down."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@contextlib.asynccontextmanager
async def _server(
    root: Path, monkeypatch: pytest.MonkeyPatch, **config: Any
) -> AsyncIterator[tuple[Session, FakeAnthropicServer]]:
    monkeypatch.setattr(harness, "SERVER", ["prlimit", f"--as={ADDRESS_SPACE}", "--", *harness.SERVER])
    with FakeAnthropicServer() as fake:
        options = {"permissions": "yolo", **config}
        async with lsp_session(root, env=api_env(fake), init_options=options) as s:
            yield s, fake


async def _help_answers(s: Session) -> str:
    result = await asyncio.wait_for(s.execute("coder.input", {"text": "/help"}), 10)
    assert result["status"] == "completed", result
    return str(result["reply"])


async def _read_turn(s: Session, fake: FakeAnthropicServer, reads: dict[str, dict[str, Any]]) -> dict[str, str]:
    """One turn in which the model reads each of `reads` (call id -> read input), with a
    `/help` sent while it runs: the tool results by call id."""
    fake.push(calls(*(tool_call("read", args, cid) for cid, args in reads.items())), reply("read them"))
    _, turn = s.start("coder.input", {"text": "read those files"})
    await asyncio.sleep(0.3)  # the turn is under way (or stuck in its read)
    help_text = await _help_answers(s)
    assert "/help" in help_text
    result = await asyncio.wait_for(turn, TURN_TIMEOUT)
    assert result["status"] == "completed", result
    got = tool_results(fake.message_requests[1])
    return {cid: result_text(got[cid]) for cid in reads}


async def test_a_fifo_is_refused_and_help_answers_meanwhile(tmp_path, monkeypatch):
    root = init_git(tmp_path / "ws", {"README.md": "hello\n"})
    fifo = root / "pipe"
    os.mkfifo(fifo)
    async with _server(root, monkeypatch) as (s, fake):
        try:
            got = await _read_turn(s, fake, {"toolu_f1": {"path": "pipe"}, "toolu_f2": {"path": "README.md"}})
            fake.push(calls(tool_call("edit", {"path": "pipe", "oldString": "a", "newString": "b"}, "toolu_f3")))
            fake.push(reply("tried"))
            edited = await asyncio.wait_for(s.execute("coder.input", {"text": "edit the pipe"}), TURN_TIMEOUT)
        finally:
            _unblock_fifo(fifo)
        assert "FIFO" in got["toolu_f1"] and "not a regular file" in got["toolu_f1"], got
        assert "hello" in got["toolu_f2"]  # the turn went on with the next call
        assert edited["status"] == "completed", edited
        edit_text = result_text(tool_results(fake.message_requests[3])["toolu_f3"])
        assert "FIFO" in edit_text and "not a regular file" in edit_text, edit_text
        assert await _help_answers(s)


async def test_dev_zero_as_a_node_and_through_a_symlink_is_refused(tmp_path, monkeypatch):
    root = init_git(tmp_path / "ws", {"README.md": "hello\n"})
    (root / "zero-link").symlink_to("/dev/zero")
    reads = {"toolu_z1": {"path": "zero-link"}, "toolu_z2": {"path": "/dev/zero"}}
    if os.geteuid() == 0:  # a device node inside the workspace (a cloned repo cannot ship one, a job can make one)
        os.mknod(root / "zero-node", 0o666 | stat.S_IFCHR, os.makedev(1, 5))
        reads["toolu_z3"] = {"path": "zero-node", "limit": 5}
    async with _server(root, monkeypatch, allowOutsideWorkspace=True) as (s, fake):
        got = await _read_turn(s, fake, reads)
        for cid, text in got.items():
            assert "character device" in text and "not a regular file" in text, (cid, text)
        peak = _peak_rss(s)
        print(f"server peak RSS after the /dev/zero reads: {peak / 2**20:.0f} MiB")
        assert peak < RSS_BUDGET, peak


async def test_a_sparse_2gb_file_read_with_a_limit_stays_small(tmp_path, monkeypatch):
    root = init_git(tmp_path / "ws", {"README.md": "hello\n"})
    huge = root / "huge.log"
    with huge.open("wb") as f:
        f.write(TEXT_HEAD)
        f.truncate(SPARSE_SIZE)
    reads = {
        "toolu_s1": {"path": "huge.log", "limit": 5},
        "toolu_s2": {"path": "huge.log", "offset": 2999, "limit": 2},
        "toolu_s3": {"path": "huge.log"},
    }
    async with _server(root, monkeypatch) as (s, fake):
        before = _peak_rss(s)
        got = await _read_turn(s, fake, reads)
        peak = _peak_rss(s)
    print(f"server peak RSS: {before / 2**20:.0f} MiB before, {peak / 2**20:.0f} MiB after the 2 GB reads")
    first = got["toolu_s1"]
    assert "1\tline 1 of the head" in first and "5\tline 5 of the head" in first, first
    assert "line 6 of" not in first and "read more" in first
    assert "2999\tline 2999 of" in got["toolu_s2"] and "3000\tline 3000 of" in got["toolu_s2"], got["toolu_s2"]
    summary = got["toolu_s3"]
    assert f"large file ({SPARSE_SIZE} bytes" in summary and "40\tline 40 of" in summary, summary[:300]
    assert "41\tline 41" not in summary
    assert peak < RSS_BUDGET, f"peak RSS {peak} after reading 5 lines of a 2 GB file"


# Workspace files the server reads by itself. (A FIFO at `.gitignore` or `.git/commondir`
# is not here: git itself blocks opening it, in the snapshot's `git ls-files`.)
FIFO_PLACES = [".git/info/exclude", "AGENTS.md", "CLAUDE.md", ".coder/commands/x.md", "selected.py"]


async def test_fifos_where_the_server_reads_workspace_files_do_not_hang_it(tmp_path, monkeypatch):
    """Workspace files the server reads on its own (instructions, command files, git's
    exclude file, the user's selection) planted as FIFOs (the agent's sandboxed bash can
    `mkfifo` in the workspace): `!cmd` (a snapshot), an agent turn about a selection in a
    FIFO, `/help` while it runs, and `/undo` all answer."""
    root = init_git(tmp_path / "ws", {"README.md": "hello\n"})
    fifos = []
    for rel in FIFO_PLACES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        fifos.append(path)
    async with _server(root, monkeypatch) as (s, fake):
        try:
            shell = await asyncio.wait_for(s.execute("coder.input", {"text": "!echo made > made.txt"}), TURN_TIMEOUT)
            assert shell["status"] == "completed", shell
            fake.push(reply("looked"))
            selection = {
                "uri": (root / "selected.py").as_uri(),
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}},
            }
            _, turn = s.start("coder.input", {"text": "explain this", "context": selection})
            await asyncio.sleep(0.3)
            assert await _help_answers(s)
            result = await asyncio.wait_for(turn, TURN_TIMEOUT)
            assert result["status"] == "completed", result
            assert "selection is in selected.py" in fake.message_requests[0].body["messages"][-1]["content"][-1]["text"]
            undo = await asyncio.wait_for(s.execute("coder.input", {"text": "/undo"}), TURN_TIMEOUT)
            assert undo["status"] == "completed", undo
        finally:
            for path in fifos:  # a server stuck on one can then shut down
                _unblock_fifo(path)
