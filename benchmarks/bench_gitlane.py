"""Cost of the git lane: median wall time of `git add x` (x changed before each run) run
directly (no shell), through a warm persistent shell unsandboxed, through a warm persistent
bubblewrap shell with the lane's mounts (what a kept lane would cost), and through the git
lane itself (`AgentShell.run`: a fresh sandbox each time), with and without a hook (a hook
adds the `commondir` placeholder); in alternating rounds. Also the time `route` adds to
every agent command (a line without `git`, a reader). Run: `python benchmarks/bench_gitlane.py`."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from coder_ls.engine.agentshell import AgentShell
from coder_ls.engine.shell import PersistentShell, become_subreaper
from coder_ls.guard import gitlane, sandbox
from coder_ls.protocol.config import SandboxConfig

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}


def repo(path: Path, *, hook: bool) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=ENV)
    (path / "src").mkdir()
    (path / "src" / "x").write_text("0\n")
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=ENV)
    if hook:
        pre = path / ".git" / "hooks" / "pre-commit"
        pre.write_text("#!/bin/sh\n")
        pre.chmod(0o755)
    return path


async def main(rounds: int) -> None:
    if sandbox.bwrap_path() is None:
        print("bubblewrap does not work here")
        return
    become_subreaper()
    top = Path(tempfile.mkdtemp(prefix="bench-gitlane-"))
    plain, hooked = repo(top / "plain", hook=False), repo(top / "hooked", hook=True)
    agent = AgentShell(plain)
    agent_hooked = AgentShell(hooked)
    box = agent.sandbox_for(SandboxConfig())
    box_hooked = agent_hooked.sandbox_for(SandboxConfig())
    assert box is not None and box_hooked is not None
    unsandboxed = PersistentShell(plain)
    held = gitlane.prepare(str(plain), str(plain / ".git"), os.environ)
    warm_lane = PersistentShell(plain, box=box, extra_args=held.args)
    n = 0

    def quiet(_: str) -> None:
        pass

    async def direct() -> None:
        subprocess.run(["git", "add", "src/x"], cwd=plain, check=True)  # noqa: ASYNC221 (timed alone)

    def via(shell: PersistentShell | AgentShell, **kw: object) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            r = await shell.run("git add src/x", on_output=quiet, timeout=30, max_output_bytes=10_000, **kw)  # type: ignore[arg-type]
            assert r.exit_code == 0, r.output

        return run

    cases: dict[str, Callable[[], Awaitable[None]]] = {
        "direct (no shell)": direct,
        "persistent shell, unsandboxed": via(unsandboxed),
        "persistent bubblewrap shell with the lane's mounts": via(warm_lane),
        "git lane (a fresh sandbox)": via(agent, box=box),
        "git lane, repository with a hook": via(agent_hooked, box=box_hooked),
    }
    times: dict[str, list[float]] = {label: [] for label in cases}
    try:
        for warm in cases.values():
            await warm()
        for _ in range(rounds):
            for label, run in cases.items():
                n += 1
                for root in (plain, hooked):
                    (root / "src" / "x").write_text(f"{n}\n")
                t = time.perf_counter()
                await run()
                times[label].append((time.perf_counter() - t) * 1000)
    finally:
        await warm_lane.close()
        gitlane.release(held)
        await unsandboxed.close()
        await agent.close()
        await agent_hooked.close()
    floor = statistics.median(times["persistent shell, unsandboxed"])
    for label, samples in times.items():
        m = statistics.median(samples)
        print(f"{label:52s} median {m:6.1f} ms  ({m / floor:4.1f}x the persistent shell) over {rounds}")
    for line in ("true", "ls -la src", "git status --short", "git add src/x && git commit -m x"):
        k = 2000
        t = time.perf_counter()
        for _ in range(k):
            gitlane.route(line, plain, plain)
        print(f"route({line!r}): {(time.perf_counter() - t) / k * 1e6:.0f} µs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    asyncio.run(main(parser.parse_args().rounds))
    sys.exit(0)
