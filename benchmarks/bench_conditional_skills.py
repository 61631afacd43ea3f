"""Conditional skills (contract section 18) with 1,000 skills installed, half of them
conditional (`paths:`): the fixed prompt (system + tools, what every request starts
with) before any file is touched and after all are active, and the catalog through a
real server (the first `coder.listCommands`, then each one; goals: 300 ms and 10 ms).

Run: `python benchmarks/bench_conditional_skills.py [N]` (N skills, default 1,000).

`--before DIR` also runs the coder_ls found in DIR (a `git archive` of another commit, via
`PYTHONPATH`; byte-compile it as `scripts/dev` does) beside this one, round by round in
alternating order (`--rounds`, default 4), each with the skills and with no command files,
and prints for each: the first listing after `initialized`, the median listing round
trip, and the server's CPU time per listing (all its threads, `/proc/PID/task/*/schedstat`:
what the server spends, which the machine's load blurs less than the round trip). The
servers share a HOME: the first one reads every front matter, the later ones find it in
the memo (`commands/frontcache.py`); its first server's figure is printed apart."""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import statistics
import time
from pathlib import Path

from common import CODER_CMD, LspClient, coder_server, init_git, median, server_env, temp_root

from coder_ls.agent.runner import Agent
from coder_ls.engine.executor import Engine
from coder_ls.engine.host import NullHost
from coder_ls.protocol.config import Config
from coder_ls.protocol.messages import Message, TextBlock


def install(root: Path, n: int) -> None:
    skills = root.parent / f".xdg-{root.name}" / "coder" / "skills"
    for i in range(n):
        d = skills / f"skill-{i:04d}"
        d.mkdir(parents=True)
        paths = f"paths: ['src/mod{i}/**/*.py']\n" if i % 2 else ""
        d.joinpath("SKILL.md").write_text(
            f"---\ndescription: Check module {i}'s invariants before changing it\n{paths}"
            "when_to_use: when editing that module\n---\nRead the module's README first.\n"
        )


def fixed_prompt(engine: Engine, agent: Agent, session) -> int:  # type: ignore[no-untyped-def]
    skills = engine.model_skills(session)
    system = agent.system(Config(), skills)
    specs = agent.tools_for(skills, subagents=True)[1]
    tools = json.dumps([{"name": s.name, "description": s.description, "input_schema": s.input_schema} for s in specs])
    return (len(system) + len(tools)) // 4


async def catalog_times(root: Path) -> tuple[float, list[float]]:
    async with coder_server(root) as client:
        t0 = time.perf_counter()
        first = await client.execute("coder.listCommands", {})
        first_ms = (time.perf_counter() - t0) * 1000
        assert len(first["data"]["commands"]) > 20, first["status"]
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            await client.execute("coder.listCommands", {})
            times.append((time.perf_counter() - t0) * 1000)
        return first_ms, times


async def engine_listing(engine: Engine, runs: int = 20) -> list[float]:
    """What the server spends on a listing (re-stat, availability, encoding), in process."""
    import msgspec

    from coder_ls.protocol.ops import ListCommands, Submission

    times = []
    for i in range(runs):
        t0 = time.perf_counter()
        msgspec.json.encode(await engine.submit(Submission(id=f"l{i}", session_id=None, op=ListCommands())))
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _cpu_ms(pid: int) -> float:
    total = 0
    for f in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(f) as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e6


async def one_server(root: Path, env: dict[str, str], runs: int = 50) -> tuple[float, float, float]:
    """(first listing after `initialized`, median round trip, server CPU per listing), ms."""
    client = await LspClient.spawn(CODER_CMD, cwd=root, env=server_env(root, env))
    try:
        await client.initialize(root, initialized=False)
        t0 = time.perf_counter()
        client.notify("initialized", {})
        await client.execute("coder.listCommands", {}, timeout=30)
        first = (time.perf_counter() - t0) * 1000
        for _ in range(5):  # warm-up
            await client.execute("coder.listCommands", {}, timeout=30)
        cpu0, times = _cpu_ms(client.pid), []
        for _ in range(runs):
            t0 = time.perf_counter()
            await client.execute("coder.listCommands", {}, timeout=30)
            times.append((time.perf_counter() - t0) * 1000)
        return first, median(times), (_cpu_ms(client.pid) - cpu0) / runs
    finally:
        await client.close()


async def side_by_side(n: int, before: str, rounds: int) -> None:
    with temp_root() as tmp:
        root = init_git(tmp / "ws", {"a.txt": "a\n"})
        install(root, n)
        bare = init_git(tmp / "bare", {"a.txt": "a\n"})
        (tmp / "bare-home").mkdir()
        sides: dict[str, tuple[Path, dict[str, str]]] = {
            "this, skills": (root, {"HOME": str(tmp)}),
            "before, skills": (root, {"HOME": str(tmp), "PYTHONPATH": before}),
            "this, no files": (bare, {"HOME": str(tmp / "bare-home")}),
            "before, no files": (bare, {"HOME": str(tmp / "bare-home"), "PYTHONPATH": before}),
        }
        out: dict[str, list[tuple[float, float, float]]] = {k: [] for k in sides}
        for i in range(rounds):
            for name in list(sides) if i % 2 == 0 else list(reversed(sides)):
                out[name].append(await one_server(*sides[name]))
        print(f"{n} skills ({n // 2} conditional), {rounds} rounds, medians:")
        for name, rows in out.items():
            first, each, cpu = (statistics.median(r[k] for r in rows) for k in range(3))
            print(
                f"  {name:17} first listing {first:6.0f} ms (its first server: {rows[0][0]:4.0f})   "
                f"each {each:5.2f} ms   server CPU {cpu:5.2f} ms/listing"
            )
        for what in ("skills", "no files"):
            a, b = out[f"this, {what}"], out[f"before, {what}"]
            ratios = [statistics.median(r[k] for r in a) / statistics.median(r[k] for r in b) for k in range(3)]
            print(f"  this / before ({what}): first {ratios[0]:.2f}x, each {ratios[1]:.2f}x, CPU {ratios[2]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=1000)
    parser.add_argument("--before", default=None, help="a coder_ls source tree to measure beside this one")
    parser.add_argument("--rounds", type=int, default=4)
    a = parser.parse_args()
    n = a.n
    if a.before:
        asyncio.run(side_by_side(n, a.before, a.rounds))
        return
    with temp_root() as tmp:
        root = init_git(tmp / "ws", {"a.txt": "a\n"})
        install(root, n)
        env = {"HOME": str(tmp), "XDG_CONFIG_HOME": str(root.parent / f".xdg-{root.name}")}
        engine = Engine(root, NullHost(), env)
        agent = Agent(root, env)
        session = engine.sessions.get(None)
        before = fixed_prompt(engine, agent, session)
        named = " ".join(f"src/mod{i}/x.py" for i in range(1, n, 2))
        session.touched.note(Message("user", [TextBlock(named)]))
        after = fixed_prompt(engine, agent, session)
        print(f"{n} skills, {n // 2} conditional: fixed prompt ~{before} tokens before any file is touched, "
              f"~{after} with all active ({after / max(before, 1):.2f}x)")  # fmt: skip
        first, each = asyncio.run(catalog_times(root))
        print(f"catalog: first listing {first:.0f} ms (goal 300), then median {median(each):.1f} ms, "
              f"max {max(each):.1f} ms (goal 10)")  # fmt: skip
        engine_each = asyncio.run(engine_listing(engine))
        print(f"the engine's answer alone (in process, encoded as sent): median {median(engine_each):.1f} ms")


if __name__ == "__main__":
    main()
