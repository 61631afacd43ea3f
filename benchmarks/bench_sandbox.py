"""Cost of the agent shell's sandbox: median wall time of `true` through the persistent
shell, unsandboxed, inside bubblewrap and under Landlock (each where it works here), in
alternating rounds. Run: `python benchmarks/bench_sandbox.py`."""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from coder_ls.engine.shell import PersistentShell
from coder_ls.guard import sandbox
from coder_ls.protocol.config import SandboxConfig

ROUNDS = 30


def box_for(shell: PersistentShell, backend: str) -> sandbox.Sandbox | None:
    os.environ["CODER_SANDBOX_BACKEND"] = backend
    try:
        return shell.sandbox_for(SandboxConfig())
    finally:
        del os.environ["CODER_SANDBOX_BACKEND"]


async def main() -> None:
    shell = PersistentShell(Path(tempfile.mkdtemp()))
    boxes = {"unsandboxed": None, "bubblewrap": box_for(shell, "bwrap"), "landlock": box_for(shell, "landlock")}
    for label in ("bubblewrap", "landlock"):
        if boxes[label] is None:
            print(f"{label}: not available here")
            del boxes[label]
    times: dict[str, list[float]] = {label: [] for label in boxes}
    try:
        for _ in range(ROUNDS):
            for label, box in boxes.items():
                t = time.perf_counter()
                await shell.run("true", on_output=lambda _: None, timeout=30, max_output_bytes=1000, box=box)
                times[label].append((time.perf_counter() - t) * 1000)
        for label, samples in times.items():
            print(f"{label}: median {statistics.median(samples):.1f} ms over {ROUNDS} commands")
    finally:
        await shell.close()


if __name__ == "__main__":
    asyncio.run(main())
