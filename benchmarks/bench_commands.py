"""Interactive commands: `/help`, `!true`, cancelling a running `!sleep 30`."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from common import (
    SMALL_REPO,
    EventWaiter,
    Result,
    coder_server,
    init_git,
    median,
    now,
    pgroup_alive,
    pgroup_members,
    temp_root,
)

_tokens = itertools.count(1)


def _token() -> str:
    return f"bench-{next(_tokens)}"


async def bench_help(quick: bool) -> list[Result]:
    warm, runs = (10, 50) if quick else (30, 200)
    samples: list[float] = []
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        async with coder_server(root) as client:
            for i in range(warm + runs):
                t0 = now()
                r = await client.execute("coder.input", {"text": "/help"})
                dt = (now() - t0) * 1000
                if r["status"] != "completed":
                    raise RuntimeError(f"/help: {r}")
                if i >= warm:
                    samples.append(dt)
    return [Result("help", "/help round trip", median(samples), 2.0, samples=samples)]


async def bench_shell_true(quick: bool) -> list[Result]:
    warm, runs = (3, 15) if quick else (10, 100)
    samples: list[float] = []
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        async with coder_server(root) as client:
            for i in range(warm + runs):
                t0 = now()
                r = await client.execute("coder.shell", {"command": "true"}, token=_token())
                dt = (now() - t0) * 1000
                if r["status"] != "completed" or r["exitCode"] != 0:
                    raise RuntimeError(f"!true: {r}")
                if i >= warm:
                    samples.append(dt)
    breakdown = await _shell_breakdown(quick)
    return [
        Result(
            "shell_true",
            "!true round trip (git workspace)",
            median(samples),
            10.0,
            samples=samples,
            notes=["coder.shell {command: 'true'} with a workDoneToken (no progress/create round trip)", breakdown],
        )
    ]


async def _shell_breakdown(quick: bool) -> str:
    """Where a `!true` goes, measured in this process with the engine's own pieces: the
    /undo snapshot before, the command in the persistent shell, the snapshot after."""
    from coder_ls.engine import checkpoints
    from coder_ls.engine.shell import PersistentShell

    real_run_git = checkpoints.run_git
    git_calls: list[str] = []

    async def counting_run_git(args: Any, **kw: Any) -> Any:
        git_calls.append(next((a for a in args if not a.startswith("-") and "=" not in a), "?"))
        return await real_run_git(args, **kw)

    runs = 5 if quick else 30
    t: dict[str, list[float]] = {"snapshot": [], "shell": [], "finish": []}
    checkpoints.run_git = counting_run_git  # type: ignore[assignment]
    try:
        with temp_root() as tmp:
            root = init_git(tmp / "ws", SMALL_REPO)
            shell, cps = PersistentShell(root), checkpoints.Checkpoints(root)
            try:
                for i in range(runs + 3):
                    if i == 3:
                        git_calls.clear()
                    t0 = now()
                    before = await cps.snapshot(f"s{i}")
                    t1 = now()
                    await shell.run("true", on_output=lambda c: None, timeout=30, max_output_bytes=1 << 20)
                    t2 = now()
                    await cps.finish(f"s{i}", before)
                    t3 = now()
                    if i >= 3:
                        t["snapshot"].append((t1 - t0) * 1000)
                        t["shell"].append((t2 - t1) * 1000)
                        t["finish"].append((t3 - t2) * 1000)
            finally:
                await shell.close()
    finally:
        checkpoints.run_git = real_run_git  # type: ignore[assignment]
    per_cmd: dict[str, float] = {}
    for name in git_calls:
        per_cmd[name] = per_cmd.get(name, 0) + 1 / runs
    return (
        f"in-process breakdown: /undo snapshot before {median(t['snapshot']):.1f} ms, "
        f"shell.run('true') {median(t['shell']):.1f} ms, snapshot after {median(t['finish']):.1f} ms; "
        f"{len(git_calls) / runs:.0f} git processes per command ("
        + ", ".join(f"{k} x{v:.0f}" for k, v in per_cmd.items())
        + ")"
    )


async def _group_gone(pgid: int, deadline: float) -> bool:
    while now() < deadline:
        if not pgroup_alive(pgid) or not pgroup_members(pgid):
            return True
        await asyncio.sleep(0.0005)
    return False


async def bench_cancel_shell(quick: bool) -> list[Result]:
    runs = 3 if quick else 20
    samples: list[float] = []
    answered: list[float] = []
    with temp_root() as tmp:
        root = init_git(tmp / "ws", SMALL_REPO)
        async with coder_server(root) as client:
            events = EventWaiter(client)
            await client.execute("coder.shell", {"command": "true"}, token=_token())  # warm the shell
            for i in range(runs + 1):
                token = _token()
                started = events.expect(lambda e: e.get("type") == "shellOutput" and "PGID=" in e.get("chunk", ""))
                _, fut = client.execute_future("coder.shell", {"command": "echo PGID=$$; sleep 30"}, token=token)
                ev = await asyncio.wait_for(started, 30)
                pgid = int(ev["chunk"].split("PGID=")[1].split()[0])
                await asyncio.sleep(0.02)  # let the sleep start for real
                if not pgroup_members(pgid):
                    raise RuntimeError("the sleep's process group is not running")
                t0 = now()
                client.notify("window/workDoneProgress/cancel", {"token": token})
                r = await asyncio.wait_for(fut, 30)
                t_answer = now()
                if not await _group_gone(pgid, now() + 5):
                    raise RuntimeError(f"process group {pgid} still alive 5 s after the cancel")
                t_gone = now()
                if r["status"] != "cancelled":
                    raise RuntimeError(f"cancel: the request answered {r['status']}")
                if i == 0:
                    continue  # warm-up
                answered.append((t_answer - t0) * 1000)
                samples.append((max(t_answer, t_gone) - t0) * 1000)
    return [
        Result(
            "cancel_shell",
            "cancel !sleep 30: answered + pgroup gone",
            median(samples),
            50.0,
            samples=samples,
            notes=[
                "cancel = window/workDoneProgress/cancel on the request's token",
                f"answer alone: median {median(answered):.1f} ms",
            ],
        )
    ]


BENCHMARKS = {
    "help": bench_help,
    "shell_true": bench_shell_true,
    "cancel_shell": bench_cancel_shell,
}
