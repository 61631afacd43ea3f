"""Run the coder-ls benchmarks and print a table of figures against their goals.

    python benchmarks/run.py [--quick] [--only NAME[,NAME...]] [--json out.json] [--list]

Exit status: 0 when every benchmark ran (goals may be missed: those rows say MISS),
1 when a benchmark raised an error, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_acp
import bench_agent
import bench_bash_step
import bench_commands
import bench_compact
import bench_eyes
import bench_first_turn
import bench_init
import bench_lenses
import bench_questions
import bench_references
import bench_scale
import bench_store
import bench_vscode_env
from common import Result, byte_compile, fmt, median, percentile

MODULES = [
    bench_init,
    bench_commands,
    bench_store,
    bench_agent,
    bench_bash_step,
    bench_first_turn,
    bench_scale,
    bench_references,
    bench_lenses,  # section 23: typing in a file the agent wrote
    bench_compact,
    bench_acp,  # the ACP edge against the LSP one
    bench_questions,  # issue 31: the questions of a scripted session, per preset
    bench_vscode_env,  # the VS Code extension's first start (needs the built .vsix)
    bench_eyes,  # section 23: 5,000 editor diagnostics to the model; the tools' prompt cost
]


def all_benchmarks() -> dict[str, object]:
    out: dict[str, object] = {}
    for module in MODULES:
        out.update(module.BENCHMARKS)  # type: ignore[attr-defined]
    return out


def _stats(values: list[float] | None, unit: str) -> str:
    if not values:
        return ""
    u = unit if unit in ("ms", "MB") else ""
    shown = "ms" if u == "ms" else u
    return f"med {median(values):.2f} p90 {percentile(values, 90):.2f} n={len(values)} {shown}".rstrip()


def print_table(results: list[Result]) -> None:
    rows = [("name", "figure", "goal", "result", "samples (coder-ls)", "baseline")]
    for r in results:
        sample_unit = "ms" if r.unit in ("ms", "x") else r.unit
        rows.append(
            (
                r.name,
                fmt(r.value, r.unit),
                f"{r.op} {fmt(r.goal, r.unit)}" if r.goal is not None else "-",
                r.verdict(),
                _stats(r.samples, sample_unit) if r.samples and r.unit in ("ms", "x", "MB") else "",
                _stats(r.baseline, "ms") if r.baseline else "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    line = "  ".join("-" * w for w in widths)
    print()
    print(line)
    for n, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)).rstrip())
        if n == 0:
            print(line)
    print(line)
    for r in results:
        for note in r.notes:
            print(f"  {r.name}: {note}")
        if r.error:
            print(f"  {r.name}: ERROR {r.error}")


async def run(names: list[str], quick: bool) -> list[Result]:
    table = all_benchmarks()
    results: list[Result] = []
    for name in names:
        t0 = time.perf_counter()
        print(f"[{name}] ...", end="", flush=True)
        try:
            got = await table[name](quick)  # type: ignore[operator]
        except Exception as exc:  # a broken benchmark is an error row, not a crash
            traceback.print_exc()
            got = [Result(name, name, None, 0, error=f"{type(exc).__name__}: {exc}")]
        for r in got:
            results.append(r)
        summary = ", ".join(f"{r.name}={fmt(r.value, r.unit)} {r.verdict()}" for r in got)
        print(f" {summary} ({time.perf_counter() - t0:.1f} s)", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    table = all_benchmarks()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small counts (CI smoke, < 60 s)")
    p.add_argument("--only", action="append", default=[], help="run only these benchmarks (repeat or comma-separate)")
    p.add_argument("--json", type=Path, help="write the results here as JSON")
    p.add_argument("--list", action="store_true", help="list the benchmark names and exit")
    args = p.parse_args(argv)
    if args.list:
        for name in table:
            print(name)
        return 0
    names = [n.strip() for item in args.only for n in item.split(",") if n.strip()] or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(table)}", file=sys.stderr)
        return 2
    print(
        f"coder-ls benchmarks ({'quick' if args.quick else 'full'}) — Python {platform.python_version()}, "
        f"{platform.machine()}, {__import__('os').cpu_count()} CPUs"
    )
    byte_compile()
    t0 = time.perf_counter()
    results = asyncio.run(run(names, args.quick))
    print_table(results)
    errors = [r for r in results if r.verdict() == "ERROR"]
    missed = [r for r in results if r.passed is False]
    print(
        f"\n{sum(r.passed is True for r in results)} PASS, {len(missed)} MISS, {len(errors)} ERROR "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {"quick": args.quick, "python": platform.python_version(), "results": [r.to_json() for r in results]},
                indent=2,
            )
        )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
