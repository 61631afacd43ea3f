"""Interactive commands: `/help`, `!true`, cancelling a running `!sleep 30`; and the
command catalog with a Claude Code corpus installed (issue 17)."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
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
    from coder_ls.engine.shell import PersistentShell
    from coder_ls.history import checkpoints

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


def _corpus(base: Path) -> tuple[Path, dict[str, str], str]:
    """The whole Claude Code corpus (benchmarks/claude_code_corpus.py) when the clones are
    there, else 1,000 generated skills and 300 commands: (root, env, what it is)."""
    import claude_code_corpus

    corpus = claude_code_corpus.build(claude_code_corpus.default_mirrors(), base)
    init_git(corpus.root, SMALL_REPO)
    if corpus.sources:
        return corpus.root, corpus.env, f"corpus of {', '.join(corpus.sources)}"
    for n in range(1000):
        skill = corpus.home / ".claude/skills" / f"skill-{n}" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(f"---\nname: Skill {n}\ndescription: Does thing {n}: carefully\n---\nBody {n}\n")
    for n in range(300):
        cmd = corpus.home / ".claude/commands" / f"group{n % 10}" / f"cmd-{n}.md"
        cmd.parent.mkdir(parents=True, exist_ok=True)
        cmd.write_text(f"---\ndescription: Command {n}\nallowed-tools: Bash(git add *) Read\n---\nDo $1\n")
    return corpus.root, corpus.env, "1,000 generated skills and 300 commands (no clones found)"


async def _catalog_figures(root: Path, env: dict[str, str], runs: int) -> tuple[float, list[float], int]:
    """(first listCommands right after initialized, ms; then `runs` calls; entries)."""
    async with coder_server(root, env=env) as client:
        t0 = now()
        r = await client.execute("coder.listCommands", {})
        first = (now() - t0) * 1000
        samples = []
        for _ in range(runs):
            t0 = now()
            await client.execute("coder.listCommands", {})
            samples.append((now() - t0) * 1000)
    return first, samples, len(r["data"]["commands"])


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _reload_figure(root: Path, env: dict[str, str], target: Path, runs: int) -> list[float]:
    """In this process, the engine's own reload after one changed file (no watcher latency)."""
    from coder_ls.engine.executor import Engine
    from coder_ls.engine.host import NullHost

    engine = Engine(root, NullHost(), env)
    samples = []
    for i in range(runs):
        _write(target, f"---\ndescription: reload {i}\n---\nBody {i}\n")
        t0 = now()
        if not engine.refresh_commands():
            raise RuntimeError("the change was not seen")
        samples.append((now() - t0) * 1000)
    return samples


async def _engine_list_figure(root: Path, env: dict[str, str], runs: int) -> list[float]:
    """In this process, the engine's own answer to a listing (the files re-stat'd, the
    availability checked) encoded as the server sends it: what the server spends, without
    the pipe and the client's decoding of a reply of hundreds of KB."""
    import msgspec

    from coder_ls.engine.executor import Engine
    from coder_ls.engine.host import NullHost
    from coder_ls.protocol.ops import ListCommands, Submission

    engine = Engine(root, NullHost(), env)
    samples = []
    for i in range(runs + 1):
        t0 = now()
        msgspec.json.encode(await engine.submit(Submission(id=f"l{i}", session_id=None, op=ListCommands())))
        if i:
            samples.append((now() - t0) * 1000)
    return samples


async def _change_figure(root: Path, env: dict[str, str], target: Path, runs: int) -> list[float]:
    """One changed command file -> `commandsChanged`, ms (the watcher warmed up first)."""
    samples: list[float] = []
    async with coder_server(root, env=env) as client:
        events = EventWaiter(client)
        await client.execute("coder.listCommands", {})
        for i in range(runs + 2):
            changed = events.expect(lambda e: e.get("type") == "commandsChanged")
            t0 = now()
            _write(target, f"---\ndescription: changed {i}\n---\nBody {i}\n")
            await asyncio.wait_for(changed, 30)
            if i >= 2:  # the first changes also wait for the watcher to start
                samples.append((now() - t0) * 1000)
            await asyncio.sleep(0.7)  # past the watcher's second look at the same change
    return samples


async def bench_corpus_catalog(quick: bool) -> list[Result]:
    runs, starts = (20, 1) if quick else (100, 3)
    with temp_root() as tmp:
        root, env, what = _corpus(tmp / "corpus")
        bare = init_git(tmp / "bare", SMALL_REPO)
        firsts, bare_firsts, samples, bare_samples = [], [], [], []
        entries = 0
        for _ in range(starts):  # alternate: the same machine load for both
            first, calls, entries = await _catalog_figures(root, env, runs)
            firsts.append(first)
            samples += calls
            first, calls, _ = await _catalog_figures(bare, {}, runs)
            bare_firsts.append(first)
            bare_samples += calls
        target = Path(env["HOME"]) / ".claude/commands/bench-changed.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("---\ndescription: start\n---\nBody\n")
        changes = await _change_figure(root, env, target, 3 if quick else 10)
        reloads = _reload_figure(root, env, target, 5 if quick else 20)
        in_engine = await _engine_list_figure(root, env, runs)
    note = f"{what}: {entries} catalog entries; baseline: the same server with no command files"
    return [
        Result(
            "corpus_first_list",
            "first coder.listCommands after initialized, corpus installed",
            median(firsts),
            300.0,
            samples=firsts,
            baseline=bare_firsts,
            notes=[note, f"baseline median {median(bare_firsts):.1f} ms"],
        ),
        Result(
            "corpus_list",
            "coder.listCommands, corpus installed",
            median(samples),
            10.0,
            samples=samples,
            baseline=bare_samples,
            notes=[
                f"baseline median {median(bare_samples):.1f} ms",
                f"the engine's answer alone (in process, encoded): median {median(in_engine):.1f} ms",
            ],
        ),
        Result(
            "corpus_change",
            "one changed command file -> commandsChanged",
            median(changes),
            50.0,
            samples=changes,
            notes=[
                "file written -> commandsChanged, the watcher included (watchfiles: step 10 ms, debounce 100 ms)",
                f"the engine's reload alone (in process, NullHost): median {median(reloads):.1f} ms",
            ],
        ),
    ]


BENCHMARKS = {
    "help": bench_help,
    "shell_true": bench_shell_true,
    "cancel_shell": bench_cancel_shell,
    "corpus_catalog": bench_corpus_catalog,
}
