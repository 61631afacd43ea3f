"""Cost of the agent shell's sandbox: median wall time of `true` through the persistent
shell, unsandboxed and inside bubblewrap. Run: `python benchmarks/bench_sandbox.py`."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from coder_ls.engine.shell import PersistentShell
from coder_ls.protocol.config import SandboxConfig

ROUNDS = 30


async def main() -> None:
    shell = PersistentShell(Path(tempfile.mkdtemp()))
    box = shell.sandbox_for(SandboxConfig())
    try:
        for label, b in (("unsandboxed", None), ("bubblewrap", box)):
            if label == "bubblewrap" and b is None:
                print("bubblewrap: not available here")
                continue
            times = []
            for _ in range(ROUNDS):
                t = time.perf_counter()
                await shell.run("true", on_output=lambda _: None, timeout=30, max_output_bytes=1000, box=b)
                times.append((time.perf_counter() - t) * 1000)
            print(f"{label}: median {statistics.median(times):.1f} ms over {ROUNDS} commands")
    finally:
        await shell.close()


if __name__ == "__main__":
    asyncio.run(main())
