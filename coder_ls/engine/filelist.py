"""The workspace's files, as the tools and `@` completion see them.

`list_files(root)`: sorted POSIX paths relative to `root`, from `git ls-files --cached
--others --exclude-standard` (so .gitignore is honoured) inside a git repository, else
from a walk that skips .git, .coder, node_modules and a few caches. A symlink whose
target leaves the workspace is not listed. (grep, glob and ls use it.)

`FileListCache`: the same list kept in memory for `@` completion, which must answer in a
few milliseconds on a 30,000-file repository while listing one takes 0.1-0.2 s. A request
answers from the list as it is and, when that list is older than `max_age`, starts one
refresh in a worker thread (stale-while-revalidate): a file created a moment ago shows
a keystroke after the refresh. `max_age` is 2 s, or ten times the last listing's
duration if longer, so the listing never takes more than a tenth of the time. Only the
first request ever waits for a listing, and the engine starts that one at its first
command.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from coder_ls.guard.gitsafe import safe_flags_sync
from coder_ls.history.gitops import user_env

SKIP_DIRS = frozenset(
    {".git", ".coder", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)


def _git_files(root: Path) -> list[str] | None:
    env = user_env()
    try:
        proc = subprocess.run(
            ["git", *safe_flags_sync(root, env), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    names = {n for n in proc.stdout.decode("utf-8", errors="surrogateescape").split("\0") if n}
    return sorted(_inside(root, names))


def _inside(root: Path, names: set[str]) -> list[str]:
    """The names that are regular files whose real location is in the workspace. The same
    answer as `_inside_file` on each, at one `lstat` a file: each folder is resolved once
    (git can list a file whose folder was swapped for a link out, from its index), and
    only a name that is a link itself is resolved. Resolving every path (several `lstat`
    calls each, in Python) took 0.9 s on 30,000 files, holding the GIL that the event
    loop needs, at each glob and at the first command of a server."""
    real_root = root.resolve()
    base = str(root)
    folders: dict[str, bool] = {"": True}
    kept: list[str] = []
    for name in names:
        folder = name.rpartition("/")[0]
        inside = folders.get(folder)
        if inside is None:
            real = Path(os.path.realpath(os.path.join(base, folder)))
            inside = folders[folder] = real.is_relative_to(real_root) and real.is_dir()
        if not inside:
            continue
        try:
            mode = os.lstat(os.path.join(base, name)).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) or (stat.S_ISLNK(mode) and _inside_file(root / name, real_root)):
            kept.append(name)
    return kept


def _inside_file(path: Path, real_root: Path) -> bool:
    """A regular file whose real location is in the workspace (a symlink out is skipped)."""
    try:
        return path.is_file() and path.resolve().is_relative_to(real_root)
    except (OSError, RuntimeError):
        return False


def _walk_files(root: Path) -> list[str]:
    real_root = root.resolve()
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            full = Path(dirpath, name)
            if full.is_symlink() and not _inside_file(full, real_root):
                continue
            out.append(full.relative_to(root).as_posix())
    return sorted(out)


def list_files(root: Path) -> list[str]:
    """Workspace files as sorted POSIX paths relative to `root`, .gitignore honoured."""
    files = _git_files(root)
    return files if files is not None else _walk_files(root)


class FileListCache:
    """`list_files(root)` kept in memory; see the module docstring."""

    def __init__(self, root: Path, lister: Callable[[Path], list[str]] = list_files, max_age: float = 2.0) -> None:
        self.root, self._lister, self.max_age, self.min_age = root, lister, max_age, max_age
        self._files: list[str] | None = None
        self._folded: list[str] = []
        self._at = 0.0
        self._refresh: asyncio.Task[None] | None = None

    def warm(self) -> None:
        """Start the first listing now, in the background, if none was made."""
        if self._files is None and self._refresh is None:
            self._refresh = asyncio.get_running_loop().create_task(self._list())

    async def files(self) -> tuple[list[str], list[str]]:
        """(the folders, each ending in `/`, then the files; the same lower-cased), waiting
        only for the very first listing."""
        stale = self._files is None or time.monotonic() - self._at > self.max_age
        if stale and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.get_running_loop().create_task(self._list())
        if self._files is None and self._refresh is not None:
            await asyncio.shield(self._refresh)
        return self._files or [], self._folded

    async def _list(self) -> None:
        started = time.monotonic()
        try:
            files = await asyncio.to_thread(self._lister, self.root)
        except OSError:  # the workspace went away: nothing to complete, try again later
            files = []
        folders = sorted({f"{parent}/" for f in files for parent in _parents(f)})
        entries = [*folders, *files]
        self._files, self._folded, self._at = entries, [e.lower() for e in entries], time.monotonic()
        # never list for more than a tenth of the time: a big repository is re-listed less often
        self.max_age = max(self.min_age, 10 * (self._at - started))


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: n + 1]) for n in range(len(parts))]
