"""Conditional skills (contract section 18) with 1,000 skills installed, half of them
conditional (`paths:`): the fixed prompt (system + tools, what every request starts
with) before any file is touched and after all are active, and the catalog through a
real server (the first `coder.listCommands`, then each one; goals: 300 ms and 10 ms).

Run: `python benchmarks/bench_conditional_skills.py [N]` (N skills, default 1,000)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from common import coder_server, init_git, median, temp_root

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


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
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
