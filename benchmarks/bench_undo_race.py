"""`/undo` over 3,000 changed files while another process rewrites half of them.

    python benchmarks/bench_undo_race.py [--base DIR] [--code DIR] [--runs N]

A committed repository of 3,000 small files (the one `tests/e2e/test_undo_race.py` uses);
one `!` submission rewrites all of them; then `/undo` runs
- alone: the time it takes (median of `--runs`);
- while a second process writes every other file once, in a shuffled order, 0.5 ms apart,
  as a temporary renamed over the name (`renamed`) or by truncating and writing the file
  (`in place`): how many of its writes `/undo` replaced while reporting the path as
  restored (silent overwrites, the goal is 0), how many it listed as conflicts, and the time.

`--base DIR` runs the same against the code in DIR (e.g. `git worktree add /tmp/base
431aeef`), one after the other, and prints both.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests"), str(HERE.parent / "tests" / "e2e")]

from common import LspClient, Result, median, now, server_env  # noqa: E402
from test_undo_race import FILES, REWRITER, before_text, file_name  # noqa: E402

CHANGE = "git ls-files -z src | xargs -0 sed -i 's/^x = /y = /'"


def _generate(root: Path) -> None:
    from harness import init_git

    init_git(root, {file_name(i): before_text(i).decode() for i in range(FILES)})


def _reset(root: Path) -> None:
    shutil.rmtree(root / ".coder", ignore_errors=True)
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "--", "."], check=True, stdin=subprocess.DEVNULL)


async def one_undo(root: Path, code: Path | None, writer: str | None) -> tuple[float, int, int, int]:
    """(ms /undo took, silent overwrites, conflicts, writes by the other process)."""
    _reset(root)
    extra = {"PYTHONPATH": str(code)} if code is not None else {}
    client = await LspClient.spawn([sys.executable, "-m", "coder_ls"], cwd=root, env=server_env(root, extra))
    try:
        await client.initialize(root)
        await client.execute("coder.shell", {"command": "true"}, timeout=300)
        done = await client.execute("coder.shell", {"command": CHANGE}, timeout=300)
        assert done["exitCode"] == 0, done
        listing = root.parent / "listing"
        listing.write_text("\n".join(file_name(i) for i in range(0, FILES, 2)))
        proc = None
        first = b""
        if writer is not None:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-c", REWRITER, str(root), str(listing), "0.0005", "1" if writer == "in place" else "0",
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            )  # fmt: skip
            assert proc.stdout is not None
            first = await proc.stdout.readline()
        t0 = now()
        undo = await client.execute("coder.undo", {}, timeout=600)
        took = (now() - t0) * 1000
        rest = (await proc.communicate())[0] if proc is not None else b""
    finally:
        await client.close()
    written = set((first + rest).decode().split())
    restored = set(undo["data"]["restored"])
    silent = sum(1 for i in range(FILES) if file_name(i) in written & restored
                 and (root / file_name(i)).read_bytes() == before_text(i))  # fmt: skip
    return took, silent, len(undo["data"]["conflicts"]), len(written)


async def race_table(code: Path | None, base: Path | None, runs: int) -> list[Result]:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="coder-bench-race-") as tmp:
        root = Path(tmp) / "ws"
        _generate(root)
        sides: list[tuple[str, Path | None]] = [("new", code)] + ([("base", base)] if base is not None else [])
        for name, side in sides:
            alone = [(await one_undo(root, side, None))[0] for _ in range(runs)]
            print(f"  {name}: /undo of {FILES:,} files alone: median {median(alone):.0f} ms "
                  f"({', '.join(f'{t:.0f}' for t in alone)})", flush=True)  # fmt: skip
            if name == "new":
                results.append(Result("undo_3000", f"/undo of {FILES:,} files", median(alone), None, samples=alone))
            for writer in ("renamed", "in place"):
                got = [await one_undo(root, side, writer) for _ in range(runs)]
                silent = [g[1] for g in got]
                print(f"  {name}: with a concurrent writer ({writer}): silent overwrites {silent}, "
                      f"conflicts {[g[2] for g in got]}, its writes {[g[3] for g in got]}, "
                      f"/undo {median([g[0] for g in got]):.0f} ms", flush=True)  # fmt: skip
                if name == "new":
                    title = f"writes silently overwritten by /undo ({writer} writer)"
                    results.append(Result(f"undo_race_{writer.replace(' ', '_')}", title, max(silent), 0.0, unit=""))
    return results


async def bench_undo_race(quick: bool) -> list[Result]:
    return await race_table(None, None, 1 if quick else 3)


BENCHMARKS = {"undo_race": bench_undo_race}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", type=Path, help="also run the code in this directory (PYTHONPATH)")
    p.add_argument("--code", type=Path, help="run this code as the new side (default: this checkout)")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    results = asyncio.run(race_table(args.code, args.base, args.runs))
    return 0 if all(r.passed is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
