"""Read-only views of the user's git repository (for `/diff` and `/undo --all`), and a git runner.

Everything here runs the user's own `git` in the workspace with their configuration, but never
with a pager, colours, hooks, fsmonitor, filter or diff drivers (`gitsafe.py`), and with
`GIT_OPTIONAL_LOCKS=0` so that a `git status` never rewrites the user's index behind their back.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from coder_ls.environ import child_env
from coder_ls.guard.gitsafe import private_env, safe_flags
from coder_ls.protocol.results import DiffData

# Variables that would make git look at some other repository than the workspace's.
_REPO_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
)

# `-c` flags for every call on the user's repository.
USER_FLAGS = ("-c", "core.pager=cat", "-c", "core.quotepath=false", "-c", "color.ui=false")

CODER_DIR = ".coder"
EXCLUDE_CODER = f":(exclude){CODER_DIR}"


class GitError(RuntimeError):
    """A git command failed (or git is missing)."""

    def __init__(self, message: str, returncode: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class NotAGitRepo(GitError):
    """The workspace is not inside a git work tree."""


class GitRun(msgspec.Struct):
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")


def user_env() -> dict[str, str]:
    """The process environment, minus anything pointing git elsewhere, plus non-interactive settings."""
    env = child_env(drop=_REPO_ENV)
    env.update(
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
    )
    env.pop("GIT_EXTERNAL_DIFF", None)
    return env


async def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    check: bool = True,
) -> GitRun:
    """Run `git *args` and collect its output. Cancelling terminates git (so it drops its locks).

    Every call is hardened against the repository's own configuration (`gitsafe`): no
    fsmonitor, hooks, filter or diff drivers, pager. With `GIT_DIR` in `env` (our private
    repositories) the user's and the system's git config are not read at all."""
    run_env = dict(env) if env is not None else user_env()
    if "GIT_DIR" in run_env:
        run_env = private_env(run_env)
    flags = await safe_flags(cwd, run_env)
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *flags,
            *args,
            cwd=str(cwd),
            env=run_env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except (FileNotFoundError, NotADirectoryError) as exc:
        if exc.filename and os.fsdecode(exc.filename) == str(cwd):
            raise GitError(f"no such directory: {cwd}") from exc
        raise GitError("git is not installed (or not on PATH)") from exc
    try:
        out, err = await proc.communicate(stdin)
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5)
        raise
    rc = proc.returncode if proc.returncode is not None else -1
    run = GitRun(returncode=rc, stdout=out, stderr=err.decode("utf-8", errors="replace"))
    if check and rc != 0:
        first = run.stderr.strip().splitlines()
        detail = first[-1] if first else f"exit code {rc}"
        raise GitError(f"git {_subcommand(args)} failed: {detail}", rc, run.stderr)
    return run


def _subcommand(args: Sequence[str]) -> str:
    """The git command in `args`, past the `-c name=value` flags (for error messages)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-c":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return ""


def split_z(data: bytes) -> list[str]:
    """NUL-separated git output -> paths (undecodable bytes kept via surrogateescape)."""
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


async def _git(root: Path, *args: str, check: bool = True) -> GitRun:
    return await run_git([*USER_FLAGS, *args], cwd=root, check=check)


async def is_git_repo(root: Path) -> bool:
    """True when `root` is inside a git work tree (the user's own repository)."""
    try:
        run = await _git(root, "rev-parse", "--is-inside-work-tree", check=False)
    except GitError:
        return False
    return run.returncode == 0 and run.text.strip() == "true"


async def has_head(root: Path) -> bool:
    run = await _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    return run.returncode == 0


async def _empty_tree(root: Path) -> str:
    run = await run_git([*USER_FLAGS, "hash-object", "-t", "tree", "--stdin"], cwd=root, stdin=b"")
    return run.text.strip()


async def untracked_files(root: Path) -> list[str]:
    """Untracked, non-ignored files under `root` (relative to it)."""
    run = await _git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
    return split_z(run.stdout)


class DiffResult(msgspec.Struct):
    """`/diff`: `text` is the stat, a blank line, then the patch (or an explanation)."""

    text: str = ""
    stat: str = ""
    diff: str = ""
    files: list[str] = msgspec.field(default_factory=list)
    untracked: list[str] = msgspec.field(default_factory=list)
    error: str | None = None

    def to_data(self) -> DiffData:
        return DiffData(stat=self.stat, diff=self.diff, files=[*self.files, *self.untracked])


_DIFF_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv", "--relative", "--no-renames")


async def diff(root: Path) -> DiffResult:
    """Working tree (staged and unstaged) against HEAD, plus the untracked files in the stat.

    In a repository without commits, the comparison is against the empty tree (so staged
    files show as added). Paths are relative to `root` (also when `root` is a subdirectory).
    """
    if not await is_git_repo(root):
        return DiffResult(error=f"Not a git repository: {root}", text=f"Not a git repository: {root}")
    base = "HEAD" if await has_head(root) else await _empty_tree(root)
    stat_run, diff_run, names_run, untracked = await asyncio.gather(
        _git(root, "diff", *_DIFF_FLAGS, "--stat=100", base, "--", "."),
        _git(root, "diff", *_DIFF_FLAGS, base, "--", "."),
        _git(root, "diff", *_DIFF_FLAGS, "--name-only", "-z", base, "--", "."),
        untracked_files(root),
    )
    stat = stat_run.text.rstrip("\n")
    if untracked:
        lines = "\n".join(f" {p}" for p in untracked)
        word = "file" if len(untracked) == 1 else "files"
        extra = f"{len(untracked)} untracked {word}:\n{lines}"
        stat = f"{stat}\n{extra}" if stat else extra
    patch = diff_run.text
    files = split_z(names_run.stdout)
    if not stat and not patch:
        text = "No changes."
    elif patch:
        text = f"{stat}\n\n{patch}" if stat else patch
    else:
        text = stat
    return DiffResult(text=text, stat=stat, diff=patch, files=files, untracked=untracked)


COMMIT_STATE_MAX = 24_000  # characters of patch in `/commit`'s prompt


async def commit_state(root: Path) -> str | None:
    """What `/commit` shows the model (hardened git calls): branch and status, the diff of
    everything against HEAD (cut), the recent log. None outside a git repository."""
    if not await is_git_repo(root):
        return None
    result = await diff(root)
    status, log = await asyncio.gather(
        _git(root, "status", "--short", "--branch", "--", ".", check=False),
        _git(root, "log", "--oneline", "-10", check=False),
    )
    patch = result.diff
    if len(patch) > COMMIT_STATE_MAX:
        patch = patch[:COMMIT_STATE_MAX] + f"\n[… the diff is cut here: {len(result.diff):,} characters in all]"
    parts = [
        f"git status:\n{status.text.rstrip() or '(clean)'}",
        f"Changes against HEAD:\n{result.stat or '(none)'}",
        f"Diff:\n{patch.rstrip() or '(none)'}",
        f"Recent commits:\n{log.text.rstrip() or '(no commits yet)'}",
    ]
    return "\n\n".join(parts)


async def _show_prefix(root: Path) -> str:
    run = await _git(root, "rev-parse", "--show-prefix")
    return run.text.strip()


async def worktree_changes(root: Path) -> tuple[list[str], list[str]]:
    """What going back to HEAD would do under `root`: (paths restored, paths removed).

    Restored: tracked paths modified, deleted or type-changed (staged or not). Removed:
    untracked non-ignored files and files added to the index but absent from HEAD.
    `.coder/` is left out. Raises `NotAGitRepo`.
    """
    if not await is_git_repo(root):
        raise NotAGitRepo(f"Not a git repository: {root}")
    prefix, run = await asyncio.gather(
        _show_prefix(root),
        _git(
            root,
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=dirty",
            "--",
            ".",
            EXCLUDE_CODER,
        ),
    )
    restored: list[str] = []
    removed: list[str] = []
    for entry in split_z(run.stdout):
        code, path = entry[:2], entry[3:]
        if prefix and path.startswith(prefix):
            path = path[len(prefix) :]
        if code == "??" or code[0] == "A":
            removed.append(path)
        else:
            restored.append(path)
    return sorted(restored), sorted(removed)
