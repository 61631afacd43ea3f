"""Profile the server (cProfile, the whole process) while a client lists the catalog 100
times with N skills installed (default 1,000, half conditional), and print its top
functions by own time.

Run: `python benchmarks/profile_catalog.py [N] [--top K]`. The server loads cProfile
from a `sitecustomize.py` put on its PYTHONPATH and writes the profile when it exits."""

from __future__ import annotations

import argparse
import asyncio
import pstats
import tempfile
import time
from pathlib import Path

from bench_conditional_skills import install
from common import coder_server, init_git, median, temp_root

_SITE = """import atexit, cProfile, os
_p = cProfile.Profile()
_p.enable()
def _dump():
    _p.disable()
    _p.dump_stats(os.environ["CODER_BENCH_PROFILE"])
atexit.register(_dump)
"""


async def profile(n: int, out: Path, site: Path) -> str:
    with temp_root() as tmp:
        root = init_git(tmp / "ws", {"a.txt": "a\n"})
        install(root, n)
        env = {"HOME": str(tmp), "PYTHONPATH": str(site), "CODER_BENCH_PROFILE": str(out)}
        async with coder_server(root, env=env) as client:
            t0 = time.perf_counter()
            await client.execute("coder.listCommands", {})
            first = (time.perf_counter() - t0) * 1000
            times = []
            for _ in range(100):
                t0 = time.perf_counter()
                await client.execute("coder.listCommands", {})
                times.append((time.perf_counter() - t0) * 1000)
        for _ in range(50):  # the server writes the profile as it exits
            if await asyncio.to_thread(out.exists):
                break
            await asyncio.sleep(0.1)
    return f"{n} skills, profiled: first listing {first:.0f} ms, then median {median(times):.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=1000)
    parser.add_argument("--top", type=int, default=15)
    a = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        site, out = Path(d) / "site", Path(d) / "server.prof"
        site.mkdir()
        (site / "sitecustomize.py").write_text(_SITE)
        print(asyncio.run(profile(a.n, out, site)))
        pstats.Stats(str(out)).sort_stats("tottime").print_stats(a.top)


if __name__ == "__main__":
    main()
