"""The workspace as a step must see it: the base commit plus every uncommitted change.

The base commit travels as a git bundle (the whole history up to HEAD, so the worker's
clone can diff, blame and log like the user's); the uncommitted changes, staged or not and
the untracked files git does not ignore, as one binary patch made against a temporary
index, so the user's own index is never touched. Taken once per step when it starts, so a
step sees the patches of the steps it depends on.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import msgspec

from coder_ls.history.gitops import run_git, user_env


class Snapshot(msgspec.Struct, frozen=True):
    base: str  # the commit the bundle ends at (HEAD)
    bundle: bytes  # `git bundle` of HEAD
    diff: bytes  # `git diff --binary` of the uncommitted changes against base ("" when clean)


class SnapshotError(Exception):
    """The workspace cannot be sent: not a git repository, or no commit yet."""


async def base_commit(root: Path) -> str:
    run = await run_git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=root, check=False)
    if run.returncode != 0:
        raise SnapshotError("a remote step needs a git repository with at least one commit")
    return run.text.strip()


async def bundle(root: Path, base: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="coder-ls-bundle-") as tmp:
        path = Path(tmp, "repo.bundle")
        await run_git(["bundle", "create", "-q", str(path), "HEAD"], cwd=root)
        return await asyncio.to_thread(path.read_bytes)


async def uncommitted(root: Path, base: str) -> bytes:
    """Tracked and untracked changes as a patch against `base`, through a throwaway index."""
    with tempfile.TemporaryDirectory(prefix="coder-ls-index-") as tmp:
        env = {**user_env(), "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        await run_git(["read-tree", base], cwd=root, env=env)
        await run_git(["add", "-A", "--", "."], cwd=root, env=env)
        run = await run_git(["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", base], cwd=root, env=env)
        return run.stdout


async def take(root: Path, bundle_cache: dict[str, bytes] | None = None) -> Snapshot:
    """The workspace now. `bundle_cache` (base -> bundle) spares re-bundling an unchanged HEAD."""
    base = await base_commit(root)
    cached = bundle_cache.get(base) if bundle_cache is not None else None
    data = cached if cached is not None else await bundle(root, base)
    if bundle_cache is not None:
        bundle_cache[base] = data
    return Snapshot(base=base, bundle=data, diff=await uncommitted(root, base))
