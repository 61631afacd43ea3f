"""Cost of an isolated step's worktree (contract section 25), side by side with plain git in
the same rounds: making it (`worktrees.create`: hardened `git worktree add` plus copying
the user's uncommitted work and indexing it) against a bare `git worktree add --detach`;
reading its change back (`worktrees.patch`) and removing it; and landing a one-file patch
(`patches.apply_patch`: scratch copy, `git apply --check`, `git apply`, the write) against
the one atomic write of the same file. Repository: `--files` tracked files, 50 of them
changed and 20 untracked. Run: `python benchmarks/bench_worktrees.py [--rounds N]`."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from coder_ls.fsutil import write_atomic
from coder_ls.isolation import patches, worktrees

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip


class Caps:
    apply_edit = False


class Disk:
    caps = Caps()

    def open_document(self, path: Path) -> None:
        return None

    async def apply_edit(self, request: object) -> object:  # never called: no applyEdit
        raise AssertionError


def repo(path: Path, files: int) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=ENV)
    for i in range(files):
        d = path / f"pkg{i % 20}"
        d.mkdir(exist_ok=True)
        (d / f"m{i}.py").write_text(f"x = {i}\n" * 20)
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=ENV)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "base"], check=True, env=ENV)
    for i in range(50):
        (path / f"pkg{i % 20}" / f"m{i}.py").write_text("changed\n")
    for i in range(20):
        (path / f"new{i}.txt").write_text("untracked\n")
    return path


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, env=ENV, capture_output=True, stdin=subprocess.DEVNULL)


async def main(rounds: int, files: int) -> None:
    top = Path(tempfile.mkdtemp(prefix="bench-worktrees-"))
    os.environ["XDG_STATE_HOME"] = str(top / "state")
    root = repo(top / "ws", files)
    target = root / "pkg1" / "m1.py"
    one = (
        b"diff --git a/pkg1/m1.py b/pkg1/m1.py\n--- a/pkg1/m1.py\n+++ b/pkg1/m1.py\n"
        b"@@ -1 +1 @@\n-changed\n+changed again\n"
    )
    back = one.replace(b"-changed\n+changed again", b"-changed again\n+changed")
    times: dict[str, list[float]] = {k: [] for k in ("git worktree add", "create", "patch+remove", "atomic write",
                                                     "apply_patch")}  # fmt: skip
    for n in range(rounds):
        t = time.perf_counter()
        git("-C", str(root), "worktree", "add", "--detach", "--quiet", str(top / f"bare{n}"), "HEAD")
        times["git worktree add"].append(time.perf_counter() - t)
        git("-C", str(root), "worktree", "remove", "--force", str(top / f"bare{n}"))
        t = time.perf_counter()
        wt = await worktrees.create(root, "bench")
        times["create"].append(time.perf_counter() - t)
        (Path(wt.root) / "pkg2" / "m2.py").write_text("the step's\n")
        t = time.perf_counter()
        assert await worktrees.patch(wt)
        await worktrees.remove(wt)
        times["patch+remove"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await asyncio.to_thread(write_atomic, target, b"changed again\n", root=root)
        times["atomic write"].append(time.perf_counter() - t)
        await asyncio.to_thread(write_atomic, target, b"changed\n", root=root)
        t = time.perf_counter()
        result = await patches.apply_patch(one, root=root, editor=Disk(), label="bench")
        times["apply_patch"].append(time.perf_counter() - t)
        assert result.status == "applied", result.message
        assert (await patches.apply_patch(back, root=root, editor=Disk(), label="bench")).status == "applied"
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"{files} tracked files, 50 changed, 20 untracked; {rounds} rounds, medians:")
    for k, v in med.items():
        print(f"  {k:<18} {v:8.1f} ms")
    print(f"  create / git worktree add: {med['create'] / med['git worktree add']:.2f}x")
    print(f"  apply_patch / atomic write: {med['apply_patch'] / med['atomic write']:.1f}x")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--files", type=int, default=2000)
    a = p.parse_args()
    asyncio.run(main(a.rounds, a.files))
