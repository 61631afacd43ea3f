"""A git worktree per isolated step (contract section 25, "Worktrees").

`create` makes `git worktree add --detach` of the workspace's HEAD in the server's state
directory (`<state>/worktrees/<workspace key>/<id>`, never inside the workspace), then
copies in what the user has and HEAD has not: tracked files changed (staged or not, deleted
ones removed) and untracked files that are not ignored, byte for byte (links as links). The
step starts from what the user sees. The worktree's index is then brought up to that state
and its tree id kept as the step's `base`; `patch` is `git diff --binary` of whatever the
step left against it, relative to the workspace (ignored files never come back).

Every git call goes through `history.gitops.run_git` (stdin closed; no hooks, fsmonitor,
filter or diff drivers, pager, external diff or signing programs: `guard/gitsafe.py`), so a
hostile `.git/config` runs nothing here; `post-checkout` hooks do not run on `worktree add`.

A worktree is removed (`git worktree remove --force`, then `git worktree prune`) when its
step succeeded and its patch was applied. Otherwise it is kept, with a note beside it (why,
which step, when) that `kept` lists and `drop` removes: `/worktrees` in the editor.
Outside a git repository (or in one with no commit yet) there is no worktree:
`NotIsolated` says why, and the caller runs the step in the workspace as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import stat
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

import msgspec

from coder_ls.history.gitops import USER_FLAGS, GitError, has_head, is_git_repo, run_git, split_z
from coder_ls.saferead import UnreadableFile, read_regular_file
from coder_ls.userdirs import state_dir

COPY_MAX_BYTES = 256 * 1024 * 1024  # one uncommitted file copied into a worktree, at most
_DIFF = ("--binary", "--full-index", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv")


class NotIsolated(Exception):
    """No worktree can be made for this workspace (the message says why, for the user)."""


class Worktree(msgspec.Struct, frozen=True):
    """One step's worktree. `root`: the workspace's place in it (the step's root: the
    worktree itself, or the same sub-folder when the workspace is one of its repository)."""

    id: str
    path: str  # the worktree (the repository's top)
    root: str  # the step runs here
    workspace: str  # the user's workspace root
    base: str  # the tree the step started from
    label: str  # which step ("task 3f2a step build", "subagent general")
    created: float


class Kept(msgspec.Struct, frozen=True):
    """The note beside a worktree: while its step runs, the server's pid; once kept after
    its step did not end well, why."""

    worktree: Worktree
    reason: str
    pid: int | None = None  # running in this server (a note whose server is gone: kept)


def worktrees_dir(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where this workspace's step worktrees live: the server's state directory, keyed by
    the workspace's real path (a short hash, and its name for people)."""
    real = os.path.realpath(workspace)
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real))[:40] or "root"
    return state_dir(os.environ if env is None else env) / "worktrees" / f"{name}-{key}"


async def _git(cwd: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    run = await run_git([*USER_FLAGS, *args], cwd=cwd, stdin=stdin, check=check)
    return run.stdout


async def create(workspace: Path, label: str, env: Mapping[str, str] | None = None) -> Worktree:
    """A new worktree for one step, holding what the user sees now (module docstring).
    Raises `NotIsolated` outside git or before the first commit, `GitError` when git fails."""
    if not await is_git_repo(workspace):
        raise NotIsolated(f"{workspace} is not in a git repository: no worktree, the step runs in the workspace")
    if not await has_head(workspace):
        raise NotIsolated("the repository has no commit yet: no worktree, the step runs in the workspace")
    top = Path(os.fsdecode((await _git(workspace, "rev-parse", "--show-toplevel")).rstrip(b"\n")))
    prefix = os.fsdecode((await _git(workspace, "rev-parse", "--show-prefix")).rstrip(b"\n"))
    wt_id = uuid.uuid4().hex[:8]
    home = worktrees_dir(workspace, env)
    await asyncio.to_thread(home.mkdir, parents=True, exist_ok=True, mode=0o700)
    path = home / wt_id
    await _git(top, "worktree", "add", "--detach", "--quiet", str(path), "HEAD")
    try:
        tracked = split_z(await _git(top, "diff", "--name-only", "-z", "--no-renames", "HEAD", "--"))
        untracked = split_z(await _git(top, "ls-files", "-z", "--others", "--exclude-standard", "--"))
        await asyncio.to_thread(_copy, top, path, [*tracked, *untracked])
        await _git(path, "add", "-A", "--", ".")
        base = (await _git(path, "write-tree")).decode().strip()
    except BaseException:
        await _remove(top, path)
        raise
    root = path / prefix if prefix else path
    wt = Worktree(wt_id, str(path), str(root), str(workspace), base, label, time.time())
    _note(wt).write_bytes(msgspec.json.encode(Kept(wt, "running", os.getpid())))
    return wt


def _copy(top: Path, path: Path, rels: list[str]) -> None:
    """The user's version of each path, into the worktree (absent there when absent here)."""
    for rel in dict.fromkeys(rels):
        src, dst = top / rel, path / rel
        try:
            st = os.lstat(src)
        except FileNotFoundError:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                os.unlink(dst)
            continue
        if stat.S_ISLNK(st.st_mode):
            dst.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(dst)
            os.symlink(os.readlink(src), dst)
        elif stat.S_ISREG(st.st_mode):
            try:
                data = read_regular_file(src, COPY_MAX_BYTES, follow_symlinks=False)
            except UnreadableFile:
                continue  # too large or changed under us: the step sees HEAD's version
            if data is None:
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if os.path.islink(dst):
                os.unlink(dst)
            dst.write_bytes(data)
            os.chmod(dst, stat.S_IMODE(st.st_mode))


async def patch(wt: Worktree) -> bytes:
    """What the step changed: its tree against `base`, binary-safe, paths relative to the
    workspace (changes outside the workspace's folder of the repository are left out)."""
    root = Path(wt.root)
    await _git(Path(wt.path), "add", "-A", "--", ".")
    return await _git(root, "diff", "--cached", *_DIFF, "--relative", wt.base, "--", ".")


async def _remove(top: Path, path: Path) -> None:
    with contextlib.suppress(GitError):
        await _git(top, "worktree", "remove", "--force", str(path))
    await asyncio.to_thread(shutil.rmtree, path, True)  # what `remove` left (or all, when it failed)
    with contextlib.suppress(GitError):
        await _git(top, "worktree", "prune")


async def remove(wt: Worktree) -> None:
    """Remove the worktree, its note, and git's record of it (`git worktree prune`)."""
    workspace = Path(wt.workspace)
    top = workspace
    with contextlib.suppress(GitError):
        top = Path(os.fsdecode((await _git(workspace, "rev-parse", "--show-toplevel")).rstrip(b"\n")))
    await _remove(top, Path(wt.path))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_note(wt))


def _note(wt: Worktree) -> Path:
    return Path(wt.path).with_suffix(".json")


def keep(wt: Worktree, reason: str) -> Kept:
    """Leave the worktree for the user to look at, with a note saying why."""
    kept = Kept(wt, reason)
    _note(wt).write_bytes(msgspec.json.encode(kept))
    return kept


def kept(workspace: Path, env: Mapping[str, str] | None = None) -> list[Kept]:
    """This workspace's kept worktrees, oldest first (a note whose worktree is gone: dropped)."""
    home = worktrees_dir(workspace, env)
    out = []
    for note in sorted(home.glob("*.json")) if home.is_dir() else []:
        try:
            item = msgspec.json.decode(note.read_bytes(), type=Kept)
        except (OSError, msgspec.DecodeError):
            continue
        if item.pid is not None and _alive(item.pid):
            continue  # its step is running
        if item.pid is not None:
            item = Kept(item.worktree, "its server stopped while the step ran")
        if Path(item.worktree.path).is_dir():
            out.append(item)
        else:
            with contextlib.suppress(OSError):
                note.unlink()
    return sorted(out, key=lambda k: k.worktree.created)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def drop(workspace: Path, which: str, env: Mapping[str, str] | None = None) -> list[Kept]:
    """Remove the kept worktrees whose id is `which` (or all of them: `--all`); the ones removed."""
    found = [k for k in kept(workspace, env) if which in ("--all", k.worktree.id)]
    for k in found:
        await remove(k.worktree)
    return found


def describe(k: Kept) -> str:
    """One kept worktree, for the user: where it is and how to look at it or drop it."""
    wt = k.worktree
    return (
        f"{wt.id}  {wt.label}: {k.reason}\n"
        f"    {wt.root}  (look: git -C {wt.root} status; drop: /worktrees drop {wt.id})"
    )
