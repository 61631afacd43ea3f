"""`!true` and `/undo` as the workspace grows: the cost of the per-submission snapshots.

    python benchmarks/bench_scale.py [--sizes 10,1000,10000,30000] [--big] [--base DIR] [--runs N]
    python benchmarks/run.py --only scale          # the same figures in the common table

Workspaces are generated once and cached under /tmp/coder-bench-scale/ (a committed git repo
of N files of ~1 KB in folders of 100; the `layout` workspace adds an ignored `node_modules`
of 20,000 files in 2,000 folders). Each measurement starts a fresh server on a workspace
whose `.coder/` was removed: `first` is the first `!true` after `initialized` (it pays for the
baseline snapshot), `steady` the median of the following ones. `undo` checks, in the 30,000
file workspace, that `/undo` after `!echo x >> f; echo n > new` restores the file and removes
the new one.

`--code DIR` runs the code in DIR as the new side (a worktree of a commit, so that editing
this checkout while the benchmark runs changes nothing). `--base DIR` runs the same
measurements against the code in DIR (e.g. a `git worktree add /tmp/base e060b3a`) in the
same run, one after the other on each workspace, and prints both side by side
(`CODER_BENCH_BASE=DIR` does the same under `run.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LspClient, Result, git_env, median, now, server_env

CACHE = Path(os.environ.get("CODER_BENCH_CACHE", "/tmp/coder-bench-scale"))
FOLDER = 100
LINE = "x = 'the quick brown fox jumps over the lazy dog'  # padding padding padding\n"
BODY = LINE * 13  # ~1 KB


def _generate(root: Path, files: int, node_modules: int) -> None:
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    env = git_env()
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp)], check=True, env=env)
    (tmp / ".gitignore").write_text("node_modules/\n*.log\n")
    for i in range(files):
        d = tmp / "src" / f"pkg{i // (FOLDER * 10)}" / f"mod{i // FOLDER}"
        if i % FOLDER == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.py").write_text(f"# file {i}\n{BODY}")
    for i in range(node_modules):
        d = tmp / "node_modules" / f"dep{i // 10}"
        if i % 10 == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"index{i}.js").write_text(f"module.exports = {i};\n")
    subprocess.run(["git", "-C", str(tmp), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(tmp), "commit", "-qm", "init"], check=True, env=env)
    tmp.rename(root)


def workspace(files: int, node_modules: int = 0) -> Path:
    """A cached generated repo (made once)."""
    root = CACHE / (f"layout-{files}-nm{node_modules}" if node_modules else f"flat-{files}")
    if not (root / ".git").is_dir():
        _generate(root, files, node_modules)
    return root


def _reset(root: Path) -> None:
    shutil.rmtree(root / ".coder", ignore_errors=True)
    xdg = root.parent / f".xdg-{root.name}"
    shutil.rmtree(xdg, ignore_errors=True)


def _server_cmd(code: Path | None) -> tuple[list[str], dict[str, str]]:
    extra = {"PYTHONPATH": str(code)} if code is not None else {}
    return [sys.executable, "-m", "coder_ls"], extra


async def _start(root: Path, code: Path | None) -> LspClient:
    cmd, extra = _server_cmd(code)
    client = await LspClient.spawn(cmd, cwd=root, env=server_env(root, extra))
    await client.initialize(root)
    return client


async def _shell(client: LspClient, command: str, token: int) -> dict[str, Any]:
    r = await client.execute("coder.shell", {"command": command}, token=f"scale-{token}", timeout=300)
    if r["status"] != "completed":
        raise RuntimeError(f"!{command}: {r}")
    return r  # type: ignore[no-any-return]


async def measure(root: Path, code: Path | None, runs: int) -> tuple[float, list[float]]:
    """(first `!true` after start, the following ones), in ms, on a fresh `.coder/`."""
    _reset(root)
    client = await _start(root, code)
    try:
        t0 = now()
        await _shell(client, "true", 0)
        first = (now() - t0) * 1000
        samples = []
        for i in range(runs):
            t0 = now()
            await _shell(client, "true", i + 1)
            samples.append((now() - t0) * 1000)
        return first, samples
    finally:
        await client.close()


async def undo_check(root: Path, code: Path | None) -> tuple[bool, str]:
    """`/undo` restores a changed file and removes a new one (the workspace is left as it was)."""
    _reset(root)
    target = next((root / "src").rglob("*.py"))
    original = target.read_bytes()
    client = await _start(root, code)
    try:
        await _shell(client, "true", 0)
        rel = target.relative_to(root)
        await _shell(client, f"echo changed >> {rel} && echo n > new-file.txt", 1)
        t0 = now()
        r = await client.execute("coder.undo", {}, timeout=300)
        took = (now() - t0) * 1000
        ok = target.read_bytes() == original and not (root / "new-file.txt").exists()
        data = r["data"]
        return ok, f"{'ok' if ok else 'BROKEN'} ({took:.0f} ms; restored {data['restored']}, removed {data['removed']})"
    finally:
        target.write_bytes(original)
        (root / "new-file.txt").unlink(missing_ok=True)
        await client.close()


def _label(files: int, nm: int) -> str:
    return f"{files:,} files" + (f" + node_modules {nm:,} (ignored)" if nm else "")


async def scale_table(
    sizes: list[int], layouts: list[tuple[int, int]], base: Path | None, runs: int, code: Path | None = None
) -> list[Result]:
    results: list[Result] = []
    rows: list[tuple[str, float, float, float | None, float | None]] = []
    sides: list[tuple[str, Path | None]] = [("new", code)] + ([("base", base)] if base is not None else [])
    steady: dict[tuple[str, int, int], float] = {}
    for files, nm in [(n, 0) for n in sizes] + layouts:
        root = workspace(files, nm)
        got: dict[str, tuple[float, float]] = {}
        for name, code in sides:
            first, samples = await measure(root, code, runs)
            got[name] = (first, median(samples))
            steady[(name, files, nm)] = median(samples)
        b = got.get("base")
        rows.append((_label(files, nm), got["new"][0], got["new"][1], b[0] if b else None, b[1] if b else None))
        print(f"  {_label(files, nm)}: first {got['new'][0]:.0f} ms, steady {got['new'][1]:.1f} ms"
              + (f"  | base: first {b[0]:.0f} ms, steady {b[1]:.1f} ms" if b else ""), flush=True)  # fmt: skip
    small = steady.get(("new", min(sizes), 0))
    big_n = 30000 if 30000 in sizes else max(sizes)
    big = steady.get(("new", big_n, 0))
    first_big = next((r[1] for r in rows if r[0] == _label(big_n, 0)), None)
    notes = [
        f"{r[0]}: first {r[1]:.0f} ms, steady {r[2]:.1f} ms"
        + (f"; base first {r[3]:.0f} ms, steady {r[4]:.1f} ms" if r[3] is not None and r[4] is not None else "")
        for r in rows
    ]
    if small is not None:
        results.append(Result("scale_small", f"!true, {min(sizes)} files", small, 10.0, notes=notes))
    if small and big:
        results.append(Result("scale_ratio", f"!true {big_n:,} files / {min(sizes)} files", big / small, 2.0, unit="x"))
    if first_big is not None:
        results.append(Result("scale_first", f"first !true after start, {big_n:,} files", first_big, 1000.0))
    if big_n in sizes:
        ok, check = await undo_check(workspace(big_n), code)
        title = f"/undo in {big_n:,} files restores and removes"
        results.append(Result("scale_undo", title, float(ok), 1.0, op=">=", unit="", notes=[check]))
    return results


async def bench_scale(quick: bool) -> list[Result]:
    sizes = [10, 1000, 3000] if quick else [10, 1000, 10000, 30000]
    layouts = [] if quick else [(10000, 20000)]
    base = os.environ.get("CODER_BENCH_BASE")
    return await scale_table(sizes, layouts, Path(base) if base else None, 5 if quick else 20)


BENCHMARKS = {"scale": bench_scale}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10,1000,10000,30000")
    p.add_argument("--big", action="store_true", help="add the 100,000 file workspace (slow to generate once)")
    p.add_argument("--layout", default="10000:20000", help="FILES:NODE_MODULES, comma-separated ('' for none)")
    p.add_argument("--base", type=Path, help="also run the code in this directory (PYTHONPATH)")
    p.add_argument("--code", type=Path, help="run this code as the new side (default: this checkout)")
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s] + ([100000] if args.big else [])
    layouts = [(int(a), int(b)) for a, b in (x.split(":") for x in args.layout.split(",") if x)]
    results = asyncio.run(scale_table(sizes, layouts, args.base, args.runs, args.code))
    for r in results:
        shown = "-" if r.value is None else f"{r.value:.2f} {r.unit}"
        print(f"{r.name:14} {r.title:45} {shown:>12}  goal {r.op} {r.goal}  {r.verdict()}")
        for n in r.notes:
            print(f"    {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
