"""The private index of `/undo`'s snapshots, kept up to date with the work tree.

While the file watcher (`watcher.py`) is trusted, only the paths it saw change are looked at
(none: the tree written last, no git process); else a scan (`ls-files --others --modified`).
A fresh index starts from a copy of the user's own index (see `_seed`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import stat
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Protocol

from coder_ls.history.gitops import CODER_DIR, USER_FLAGS, GitError, GitRun, run_git, split_z
from coder_ls.history.watcher import TreeWatcher, ignored_folder_names
from coder_ls.saferead import read_text_or_none

log = logging.getLogger(__name__)

BULK_MIN_FILES = 100  # from this many new/modified files, `git add` writes one pack, not loose objects
MAX_SEED_INDEX_BYTES = 256 * 1024 * 1024
MAX_WATCHED_PATHS = 2000  # more changed paths than this at once: scan instead
BARRIER_SECONDS = 1.0  # how long to wait for the watcher to catch up before scanning instead
STALE_LOCK_SECONDS = 30.0

# Highest-precedence attributes: blobs are the exact bytes on disk, whatever .gitattributes says
# (no EOL normalisation, no clean/smudge filters), so that a restore writes back the same bytes.
_ATTRIBUTES = "* -text !eol -filter -ident !working-tree-encoding\n"

_IndexSig = tuple[int, int, int, int]


class GitFn(Protocol):
    def __call__(
        self, *args: str, stdin: bytes | None = None, check: bool = True, literal: bool = False
    ) -> Awaitable[GitRun]: ...


class WorkIndex:
    """`root`'s private index (`index`, in the repo under `state_dir / "git"`) and its watcher."""

    def __init__(self, root: Path, state_dir: Path, index: Path, git: GitFn, watch: bool) -> None:
        self.root = root
        self.dir = state_dir
        self.git_dir = state_dir / "git"
        self.index = index
        self._git = git
        self._watch = watch  # False: scan around each submission
        self._watcher: TreeWatcher | None = None
        self._max_bytes = 0
        # The tree the private index held when we last brought it up to date with the work
        # tree, the paths left out of it as too large, and the index file's identity then.
        self._clean: tuple[str, frozenset[str], _IndexSig] | None = None

    @property
    def watcher(self) -> TreeWatcher | None:
        return self._watcher

    def forget(self) -> None:
        """The private repo was created afresh: nothing we knew about the index holds."""
        self._clean = None

    def _sync_info(self) -> bool:
        """Mirror the user's exclude file and our attributes; True when a rule file changed."""
        changed = False
        lines = ["# Written by coder_ls", "/.coder/", ""]
        user_exclude = read_text_or_none(self.root / ".git" / "info" / "exclude")  # a FIFO there is none
        if user_exclude is not None:
            lines += ["# mirrored from .git/info/exclude", user_exclude]
        for name, text in (("exclude", "\n".join(lines)), ("attributes", _ATTRIBUTES)):
            target = self.git_dir / "info" / name
            if not target.exists() or target.read_text("utf-8", "replace") != text:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                changed = True
        return changed

    def _too_large(self, paths: list[str]) -> list[str]:
        big = []
        for p in paths:
            try:
                st = os.lstat(self.root / p)
            except OSError:
                continue
            if st.st_size > self._max_bytes and not os.path.islink(self.root / p):
                big.append(p)
        return sorted(big)

    def _index_sig(self) -> _IndexSig | None:
        try:
            st = os.stat(self.index)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _still_too_large(self, paths: list[str], known: frozenset[str]) -> bool:
        """True when every path was left out of the last tree as too large and still is."""
        return all(p in known for p in paths) and self._too_large(paths) == sorted(paths)

    async def write_tree(self, max_bytes: int) -> tuple[str, list[str]]:
        """Bring the private index up to date with the work tree; the tree id and skipped paths.

        While the file watcher is trusted, only the paths it saw change are looked at (none:
        the tree we wrote last, no git process). Otherwise a scan of the workspace: one
        `ls-files` that finds nothing new, modified or deleted -> the tree we wrote last (the
        index file must be the one we left, else someone else rewrote it).
        """
        self._max_bytes = max_bytes
        rules_changed = self._sync_info()
        self._clear_stale_lock()
        watching = self._watcher is not None
        dirty = await self._observed()
        if (watching and rules_changed) or (dirty and any(p.rsplit("/", 1)[-1] == ".gitignore" for p in dirty)):
            # Ignore rules changed: files no event was about may count now, and the folders
            # left unwatched as ignored may not be ignored any more. Scan, and watch afresh.
            self.close()
            dirty = None
        clean = self._clean
        if clean is not None and clean[2] == self._index_sig() and dirty is not None:
            if not dirty:
                return clean[0], sorted(clean[1])
            if len(dirty) <= MAX_WATCHED_PATHS:
                updated = await self._update_paths(dirty, clean[1])
                if updated is not None:
                    return updated
        if clean is None and not self.index.exists() and await self._seed():
            try:
                return await self._scan()
            except GitError as exc:  # e.g. unmerged entries: start from an empty index
                log.info("seeded snapshot failed (%s); hashing the workspace", exc)
                self.index.unlink(missing_ok=True)
                self._clean = None
        return await self._scan()

    async def _observed(self) -> set[str] | None:
        """The paths changed since the last snapshot as the watcher saw them; None: scan."""
        if not self._watch:
            return None
        watcher = self._watcher
        if watcher is None:
            self._watcher = await self._start_watcher()
            return None  # the baseline is a scan (or a seed from HEAD)
        if watcher.broken:
            return None
        ok = await asyncio.to_thread(watcher.barrier, BARRIER_SECONDS)
        dirty = watcher.take()
        if not ok:  # e.g. `.coder/` was deleted with the sentinel folder: start over next time
            watcher.close()
            self._watcher = None
        return dirty if ok else None

    async def _start_watcher(self) -> TreeWatcher:
        """Watch the workspace minus what it ignores (whole ignored folders, as git lists them)."""
        listed = await self._git("ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory", check=False)
        ignored = {p.rstrip("/") for p in split_z(listed.stdout) if p.endswith("/")}
        names = ignored_folder_names(self.root / ".gitignore")

        def skip(rel: str) -> bool:
            return rel in ignored or rel == ".coder" or rel.rsplit("/", 1)[-1] == ".git"

        def skip_new(rel: str) -> bool:  # a folder that appears later: not in our index yet
            return skip(rel) or rel.rsplit("/", 1)[-1] in names

        watcher = TreeWatcher(self.root, self.dir / "watch", skip, skip_new)
        if not await asyncio.to_thread(watcher.start):
            log.info("not watching %s: scanning it around each submission instead", self.root)
        return watcher

    def close(self) -> None:
        """Stop the file watcher."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    async def _update_paths(self, dirty: set[str], known_big: frozenset[str]) -> tuple[str, list[str]] | None:
        """Bring the index up to date for `dirty` paths only (folders: all under them); None on failure."""
        if not dirty:
            tree = (await self._git("write-tree")).text.strip()
            sig = self._index_sig()
            self._clean = (tree, known_big, sig) if sig is not None else None
            return tree, sorted(known_big)
        listed = await self._git(
            "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *sorted(dirty), literal=True,
            check=False,
        )  # fmt: skip
        if listed.returncode != 0:  # e.g. a path inside a nested repository: scan instead
            return None
        paths = sorted({p for p in split_z(listed.stdout) if not p.endswith("/")})
        under = tuple(p + "/" for p in dirty)
        clean = self._clean
        if not paths and clean is not None and not any(p in dirty or p.startswith(under) for p in known_big):
            return clean[0], sorted(clean[1])  # only ignored paths changed
        big = await asyncio.to_thread(self._too_large, paths)
        big_set = set(big)
        keep = [p for p in paths if p not in big_set]
        if keep:
            stdin = b"".join(os.fsencode(p) + b"\0" for p in keep)
            run = await self._git("update-index", "--add", "--remove", "--replace", "-z", "--stdin", stdin=stdin,
                                  check=False)  # fmt: skip
            if run.returncode != 0:
                log.info("incremental snapshot failed (%s); scanning", run.stderr.strip())
                self._clean = None
                return None
        if big:
            stdin = b"".join(os.fsencode(p) + b"\0" for p in big)
            await self._git("update-index", "--force-remove", "-z", "--stdin", stdin=stdin)
        tree = (await self._git("write-tree")).text.strip()
        still = {p for p in known_big if p not in dirty and not p.startswith(under)} | big_set
        sig = self._index_sig()
        self._clean = (tree, frozenset(still), sig) if sig is not None else None
        return tree, sorted(still)

    async def _seed(self) -> bool:
        """Start the private index from a copy of the user's index: no need to hash the files it
        already knows (their stat data is valid), and no git process with the user's config
        beyond `rev-parse` (no `status`, which could run their fsmonitor or filters).

        The user's object store becomes a read-only alternate of ours, so the blobs it holds
        are not copied. Only when the workspace is the top of the user's work tree. False
        when there is nothing to seed from; the caller then scans (hashing every file).
        """
        run = await run_git(
            [*USER_FLAGS, "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-path", "index",
             "--show-prefix"], cwd=self.root, check=False,
        )  # fmt: skip
        lines = run.text.split("\n")
        if run.returncode != 0 or len(lines) < 3 or lines[2].strip():
            return False
        objects, user_index = Path(lines[0].strip()) / "objects", Path(lines[1].strip())
        try:
            st = os.lstat(user_index)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SEED_INDEX_BYTES or not objects.is_dir():
            return False
        alternates = self.git_dir / "objects" / "info" / "alternates"
        alternates.parent.mkdir(parents=True, exist_ok=True)
        alternates.write_text(f"{objects}\n", encoding="utf-8")
        tmp = self.index.with_name("index.seed")
        await asyncio.to_thread(shutil.copyfile, user_index, tmp)
        os.replace(tmp, self.index)
        dropped = await self._git("rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", CODER_DIR, check=False)
        if dropped.returncode != 0:  # an index we cannot use (split index, ...): start empty
            log.info("not seeding snapshots from the user's index: %s", dropped.stderr.strip())
            self.index.unlink(missing_ok=True)
            return False
        return True

    async def _scan(self) -> tuple[str, list[str]]:
        listed = await self._git("ls-files", "-z", "--others", "--modified", "--exclude-standard")
        candidates = sorted(set(split_z(listed.stdout)))
        clean = self._clean
        if clean is not None and clean[2] == self._index_sig():
            tree, known_big, _ = clean
            if not candidates:
                return tree, []
            if self._still_too_large(candidates, known_big):
                return tree, candidates
        self._clean = None
        big = await asyncio.to_thread(self._too_large, candidates)
        if candidates:
            spec: list[str] = []
            if big:
                specs = [f":(literal){p}" for p in big]
                await self._git("rm", "--cached", "-f", "-q", "--ignore-unmatch", "--", *specs)
                spec = ["--", ".", *(f":(exclude,literal){p}" for p in big)]
            if len(big) < len(candidates):
                # Streaming every blob into a single pack is much faster than many loose objects.
                bulk = ["-c", "core.bigFileThreshold=1"] if len(candidates) >= BULK_MIN_FILES else []
                added = await self._git(*bulk, "add", "-A", "--ignore-errors", *spec, check=False)
                if added.returncode != 0 and "fatal:" in added.stderr:
                    raise GitError(f"snapshot failed: {added.stderr.strip()}", added.returncode, added.stderr)
        # else: the index already matches the work tree (e.g. after a restart): just its tree.
        tree = (await self._git("write-tree")).text.strip()
        sig = self._index_sig()
        if sig is not None:
            self._clean = (tree, frozenset(big), sig)
        return tree, big

    def _clear_stale_lock(self) -> None:
        """A lock left by a killed git would block every snapshot: drop it when old."""
        lock = self.index.with_name(self.index.name + ".lock")
        try:
            if time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
                lock.unlink()
        except OSError:
            pass
