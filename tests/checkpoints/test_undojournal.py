"""The checkpoint lock and server liveness that let several servers share one workspace."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ckpt_helpers import write

from coder_ls.history.checkpoints import Checkpoints
from coder_ls.history.undojournal import CheckpointBusy, ServerMark


async def test_a_lock_held_too_long_is_a_clear_error_and_nothing_is_lost(repo: Path) -> None:
    cp = Checkpoints(repo, watch=False)
    await cp.finish("s0", await cp.snapshot("s0", "sess"))  # the state folder exists
    cp._flock.timeout = 0.3
    fd = os.open(cp.dir / "lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another server, stuck
    try:
        with pytest.raises(CheckpointBusy, match="another coder_ls server"):
            await cp.snapshot("s1", "sess")
    finally:
        os.close(fd)
    before = await cp.snapshot("s2", "sess")
    write(repo, "a.txt", "changed\n")
    assert await cp.finish("s2", before) == ["a.txt"]
    undone = await cp.undo_last("sess")
    assert undone is not None and undone.restored == ["a.txt"]


async def test_two_servers_in_one_process_take_turns(repo: Path) -> None:
    one, two = Checkpoints(repo, watch=False), Checkpoints(repo, watch=False)

    async def work(cp: Checkpoints, name: str) -> list[list[str]]:
        out = []
        for n in range(6):
            before = await cp.snapshot(f"{name}{n}", name)
            write(repo, f"{name}/f{n}.txt", f"{n}\n")
            out.append(await cp.finish(f"{name}{n}", before))
        return out

    a, b = await asyncio.gather(work(one, "a"), work(two, "b"))
    assert all(any(p.startswith("a/") for p in paths) for paths in a)
    assert all(any(p.startswith("b/") for p in paths) for paths in b)
    undone = await one.undo_last("a")
    assert undone is not None and undone.submission_id == "a5"
    assert not [p for p in undone.restored + undone.removed if p.startswith("b/")]


def test_a_server_is_alive_exactly_while_its_process_is(tmp_path: Path) -> None:
    script = (
        "import sys, time; from pathlib import Path; from coder_ls.history.undojournal import ServerMark\n"
        "m = ServerMark(Path(sys.argv[1])); m.claim(); print(m.id, flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        server_id = proc.stdout.readline().strip()
        me = ServerMark(tmp_path)
        me.claim()
        assert me.alive(server_id) and me.alive(me.id)
    finally:
        proc.kill()
        proc.wait()
    assert (tmp_path / "servers" / server_id).exists()  # SIGKILL leaves the file ...
    assert not me.alive(server_id)  # ... but not the lock: dead, whoever has its pid now
    me.forget(server_id)
    assert not (tmp_path / "servers" / server_id).exists()
    me.release()
    assert not (tmp_path / "servers" / me.id).exists()


def test_a_forged_server_name_is_never_a_path(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("x")
    me = ServerMark(tmp_path / "state")
    me.claim()
    fd = os.open(outside, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # "alive" if it were followed
    try:
        assert not me.alive("../outside") and not me.alive("")
    finally:
        os.close(fd)


async def test_records_from_before_sessions_are_undone_by_the_next_session(repo: Path) -> None:
    cp = Checkpoints(repo, watch=False)
    original = (repo / "a.txt").read_text()
    before = await cp.snapshot("old", "sess")
    write(repo, "a.txt", "changed\n")
    await cp.finish("old", before)
    records = cp.dir / "records.json"
    data = json.loads(records.read_text())
    for rec in data["records"]:  # as an older server wrote them
        for key in ("session_id", "server_id", "begun_seq", "ended_seq"):
            rec.pop(key, None)
    records.write_text(json.dumps(data))
    assert (await cp.undo_last("another")) is not None
    assert (repo / "a.txt").read_text() == original


async def test_a_dead_servers_entry_with_a_lost_snapshot_blocks_nothing(repo: Path) -> None:
    cp = Checkpoints(repo, watch=False)
    await cp.finish("s0", await cp.snapshot("s0", "sess"))
    running = cp.dir / "running.json"
    data = json.loads(running.read_text())
    lost = {"submission_id": "x", "session_id": "gone", "server_id": "deadbeef", "before": "0" * 40,
            "started_at": 1.0, "seq": data["seq"] + 1}  # fmt: skip
    data["begun"].append(lost)
    data["seq"] += 1
    running.write_text(json.dumps(data))
    before = await cp.snapshot("s1", "sess")
    write(repo, "a.txt", "changed\n")
    assert await cp.finish("s1", before) == ["a.txt"]
    assert json.loads(running.read_text())["begun"] == []
    undone = await cp.undo_last("sess")
    assert undone is not None and undone.restored == ["a.txt"]


def test_a_mark_deleted_under_a_running_server_is_claimed_again(tmp_path: Path) -> None:
    me, other = ServerMark(tmp_path), ServerMark(tmp_path)
    me.claim()
    shutil.rmtree(tmp_path / "servers")  # `.coder/` deleted while the server runs
    assert not other.alive(me.id)
    me.claim()  # what `_ensure_repo` does when it recreates the state folder
    assert other.alive(me.id)
    me.release()
