"""`@` completion (`coder.completeInput`) on a 30,000-file repository.

    python benchmarks/bench_references.py [--files 30000] [--runs 200]
    python benchmarks/run.py --only complete_at

The workspace is `bench_scale`'s generated repo of 30,000 committed files (plus an ignored
`node_modules` of 20,000 files, which must not be listed). One server: the first
`coder.completeInput {text: "@"}` lists the workspace (its time is in the notes), then
queries of every kind (a file name, a folder path, a deep path, one that matches nothing,
one letter that matches everything) are timed round trips. The baseline, measured in the
same run on the same server, is the `coder.listCommands` round trip: the figure to read on
a noisy machine is the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import workspace
from common import LspClient, Result, median, now, server_env

QUERIES = ["@f1234", "@mod12/", "@src/pkg2/mod25/f25", "@nothing-matches-this", "@f", "@F29999.PY", "look at @pkg1"]


async def measure(files: int, runs: int) -> tuple[float, list[float], list[float], int]:
    root = workspace(files, 20000)
    client = await LspClient.spawn([sys.executable, "-m", "coder_ls"], cwd=root, env=server_env(root))
    try:
        await client.initialize(root)
        t0 = now()
        first = await client.execute("coder.completeInput", {"text": "@"})
        cold = (now() - t0) * 1000
        assert first["status"] == "completed", first
        listed = await client.execute("coder.completeInput", {"text": "@node_modules/"})
        leaked = len(listed["data"]["items"])
        samples: list[float] = []
        base: list[float] = []
        for i in range(runs + 10):
            q = QUERIES[i % len(QUERIES)]
            t0 = now()
            got = await client.execute("coder.completeInput", {"text": q})
            dt = (now() - t0) * 1000
            t1 = now()
            await client.execute("coder.listCommands", {})
            db = (now() - t1) * 1000
            if q == "@f1234":
                assert any(item["label"].endswith("/f1234.py") for item in got["data"]["items"]), got
            if i >= 10:
                samples.append(dt)
                base.append(db)
        return cold, samples, base, leaked
    finally:
        await client.close()


async def bench_complete_at(quick: bool) -> list[Result]:
    files, runs = (3000, 30) if quick else (30000, 200)
    cold, samples, base, leaked = await measure(files, runs)
    ratio = median(samples) / median(base)
    return [
        Result(
            "complete_at",
            f"coder.completeInput '@...' round trip, {files} files",
            median(samples),
            50.0,
            samples=samples,
            baseline=base,
            notes=[
                f"first call (lists the workspace): {cold:.0f} ms; ignored node_modules entries offered: {leaked}",
                f"ratio to a coder.listCommands round trip in the same run: {ratio:.2f}",
            ],
        )
    ]


BENCHMARKS = {"complete_at": bench_complete_at}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--files", type=int, default=30000)
    p.add_argument("--runs", type=int, default=200)
    args = p.parse_args()
    cold, samples, base, leaked = asyncio.run(measure(args.files, args.runs))
    samples.sort()
    print(f"files={args.files} cold={cold:.1f} ms, node_modules offered={leaked}")
    p90 = samples[int(len(samples) * 0.9)]
    print(f"completeInput median={median(samples):.2f} ms p90={p90:.2f} ms n={len(samples)}")
    print(f"listCommands  median={median(base):.2f} ms; ratio={median(samples) / median(base):.2f}")


if __name__ == "__main__":
    main()
