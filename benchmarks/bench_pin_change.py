"""A pinned file replaced on the host while the agent's bubblewrap shell lives: how fast the
sandbox dies, and how often a job that busy-waits on the name wins the race.

    python benchmarks/bench_pin_change.py [--rounds 30] [--load N]

The agent's shell (`engine/agentshell.py`, real bubblewrap, in this process) holds
`.pre-commit-config.yaml` with a read-only pin. Each round, the host renames a new file
over it (an editor's atomic save), which detaches the pin in the sandbox; the shell's
inotify reader kills the sandbox's process group. Figures, per round:

- `callback`: from just before `rename()` to the watch's callback (the kill is sent there);
- `dead`: from just before `rename()` to the sandbox's bubblewrap having exited (pidfd);
- `race`: a background job in the sandbox retries `echo pwn >> .pre-commit-config.yaml` in a
  tight loop; after the kill, did its write land in the user's new file?

`--load N` runs N busy-loop processes meanwhile (the figure on a loaded machine: the job and
the server's loop then compete for the CPU).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coder_ls.engine.agentshell import AgentShell
from coder_ls.protocol.config import SandboxConfig

BUSY = "(while :; do echo pwn 2>/dev/null >> .pre-commit-config.yaml && break; done) &"


def _spin() -> None:
    while True:
        pass


async def one_round(shell: AgentShell, root: Path, i: int, busy: bool) -> tuple[float, float, bool]:
    box = shell.sandbox_for(SandboxConfig())
    target = root / ".pre-commit-config.yaml"
    command = (BUSY if busy else "(sleep 300 &) &&") + " sleep 0.2"
    done = await shell.run(command, on_output=lambda _: None, timeout=30, max_output_bytes=1 << 16, box=box)
    assert done.exit_code == 0, done.output
    pid = shell.pid
    assert pid is not None
    loop = asyncio.get_running_loop()
    fd = os.pidfd_open(pid)
    dead: asyncio.Future[float] = loop.create_future()
    called: list[float] = []

    def gone() -> None:
        if not dead.done():
            dead.set_result(time.perf_counter())

    guard = shell._guard
    assert guard is not None
    real = guard._on_change
    guard._on_change = lambda path: (called.append(time.perf_counter()), real(path))[1]  # type: ignore[method-assign]
    loop.add_reader(fd, gone)
    new = root / f".save-{i}"
    new.write_text(f"repos: [] # user {i}\n")
    try:
        start = time.perf_counter()
        os.rename(new, target)
        end = await asyncio.wait_for(dead, 10)
    finally:
        loop.remove_reader(fd)
        os.close(fd)
        guard._on_change = real  # type: ignore[method-assign]
    won = "pwn" in target.read_text()
    return (called[0] - start) * 1000 if called else float("nan"), (end - start) * 1000, won


def _summary(name: str, values: list[float]) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    median = statistics.median(values)
    return f"{name:9} median {median:7.2f} ms  p90 {p90:7.2f} ms  max {values[-1]:7.2f} ms  n={len(values)}"


def _workspace(root: Path) -> Path:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".pre-commit-config.yaml").write_text("repos: []\n")
    return root


async def main(rounds: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-pin-"))
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    os.environ["XDG_CACHE_HOME"] = str(base / "cache")
    os.environ["XDG_RUNTIME_DIR"] = ""
    root = _workspace(base / "ws")
    shell = AgentShell(root)
    try:
        calm = [await one_round(shell, root, i, busy=False) for i in range(rounds)]
        raced = [await one_round(shell, root, rounds + i, busy=True) for i in range(rounds)]
    finally:
        await shell.close()
    print(_summary("callback", [c for c, _, _ in calm]))
    print(_summary("dead", [d for _, d, _ in calm]))
    print(_summary("dead busy", [d for _, d, _ in raced]))
    wins = sum(w for _, _, w in raced)
    print(f"race      the busy job's write landed in {wins} of {rounds} rounds")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--load", type=int, default=0)
    args = parser.parse_args()
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for p in spinners:
        p.start()
    try:
        asyncio.run(main(args.rounds))
    finally:
        for p in spinners:
            p.terminate()
