"""`engine/bgshells.py` alone, with real processes and no sandbox: reads from where the last
one ended or from a byte offset, the cap keeps the newest bytes, secrets are redacted, the
limit counts running shells only, and `close` leaves nothing running."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from coder_ls.engine.bgshells import BackgroundShells, TooManyShells, UnknownShell


def bash(command: str) -> list[str]:
    return ["/bin/bash", "--noprofile", "--norc", "-c", command]


async def ended(shells: BackgroundShells, shell_id: str) -> None:
    for _ in range(200):
        if shells.infos()[int(shell_id[2:]) - 1].state != "running":
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{shell_id} still runs")


async def group_gone(pgid: int) -> bool:
    for _ in range(100):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.02)  # SIGKILLed members about to be reaped by init
    return False


async def test_reads_since_the_last_one_or_an_offset_and_the_cap_keeps_the_newest(tmp_path: Path) -> None:
    shells = BackgroundShells()
    env = {"PATH": os.environ["PATH"]}
    sid = await shells.start("x", bash("echo one; echo two; printf 'abcdefghij'; exit 4"), cwd=tmp_path, env=env)
    await ended(shells, sid)
    first = await shells.read(sid, since=None, max_bytes=1000)
    assert first.output == "one\ntwo\nabcdefghij" and (first.start, first.end, first.omitted) == (0, 18, 0)
    assert (first.info.state, first.info.exit_code) == ("exited", 4)
    again = await shells.read(sid, since=None, max_bytes=1000)
    assert again.output == "" and again.start == again.end == 18
    tail = await shells.read(sid, since=4, max_bytes=5)  # the newest 5 of what follows byte 4
    assert (tail.output, tail.start, tail.omitted) == ("fghij", 13, 9)
    with pytest.raises(UnknownShell, match="bg1"):
        await shells.read("bg9", since=None, max_bytes=10)


async def test_output_is_redacted_and_the_limit_counts_running_shells(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-very-secret-value-123")
    shells = BackgroundShells(limit=2)
    env = {"PATH": os.environ["PATH"]}
    leak = await shells.start("leak", bash("echo key=sk-very-secret-value-123"), cwd=tmp_path, env=env)
    await ended(shells, leak)
    assert "sk-very-secret" not in (await shells.read(leak, since=None, max_bytes=1000)).output
    a = await shells.start("a", bash("sleep 30"), cwd=tmp_path, env=env)
    await shells.start("b", bash("sleep 30"), cwd=tmp_path, env=env)
    with pytest.raises(TooManyShells, match="2 background shells are running"):
        await shells.start("c", bash("sleep 30"), cwd=tmp_path, env=env)
    info = await shells.kill(a)
    assert info.state == "killed" and info.exit_code is not None
    await shells.start("c", bash("sleep 30"), cwd=tmp_path, env=env)
    groups = [s.proc.pid for s in shells._shells.values()]
    await shells.close()
    assert all(i.state != "running" for i in shells.infos())
    for pgid in groups:
        assert await group_gone(pgid), pgid
    with pytest.raises(RuntimeError):
        await shells.start("d", bash("true"), cwd=tmp_path, env=env)
