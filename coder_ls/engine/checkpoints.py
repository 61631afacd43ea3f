"""Per-submission snapshots of the workspace behind `/undo`, and `/undo --all`.

Snapshots live in a private git repository, `<root>/.coder/checkpoints/git`, driven with
`GIT_DIR`/`GIT_WORK_TREE=<root>`/`GIT_INDEX_FILE=<checkpoints>/index`, so the user's history,
index, HEAD, stash and refs are never read or written. The private repo sees the workspace's
own `.gitignore` files (git reads them from the work tree), the user's `.git/info/exclude`
(mirrored into ours) and always excludes `/.coder/`; it ignores the user's global config.
A snapshot is `git add -A` into the private index (incremental thanks to the stat cache),
`write-tree` and `commit-tree`; commits are chained on `refs/heads/snapshots` so a future gc
keeps them. Files larger than `MAX_FILE_BYTES` are never snapshotted, and `/undo` leaves
them alone (their paths are recorded in the snapshot's commit message).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import msgspec

from coder_ls.engine.gitops import (
    EXCLUDE_CODER,
    USER_FLAGS,
    GitError,
    GitRun,
    NotAGitRepo,
    has_head,
    is_git_repo,
    run_git,
    split_z,
    worktree_changes,
)

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_RECORDS = 100
BULK_MIN_FILES = 100  # from this many new/modified files, `git add` writes one pack, not loose objects

# Highest-precedence attributes: blobs are the exact bytes on disk, whatever .gitattributes says
# (no EOL normalisation, no clean/smudge filters), so that a restore writes back the same bytes.
_ATTRIBUTES = "* -text !eol -filter -ident !working-tree-encoding\n"
STALE_LOCK_SECONDS = 30.0


_PRIVATE_FLAGS = (
    "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.quotepath=false",
    "-c", "commit.gpgSign=false",
    "-c", "advice.addEmbeddedRepo=false",
    "-c", "gc.autoDetach=false",
    "-c", "core.logAllRefUpdates=false",
    "-c", "safe.directory=*",
    "-c", "init.defaultBranch=snapshots",
)  # fmt: skip


class UndoOutcome(msgspec.Struct):
    restored: list[str]
    removed: list[str]
    submission_id: str | None
    conflicts: list[str] = msgspec.field(default_factory=list)


class Record(msgspec.Struct):
    submission_id: str
    before: str
    after: str
    paths: list[str]
    created_at: float = 0.0


class _State(msgspec.Struct):
    version: int = 1
    records: list[Record] = msgspec.field(default_factory=list)


def ensure_state_gitignore(root: Path) -> None:
    """Create `<root>/.coder/.gitignore` (once) so coder_ls state stays out of the user's git."""
    from coder_ls.store.gitignore import ensure_state_dir

    ensure_state_dir(root)


class Checkpoints:
    """Snapshots of `root` and the stack of submissions that changed it."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.dir = self.root / ".coder" / "checkpoints"
        self.git_dir = self.dir / "git"
        self.index = self.dir / "index"
        self.records_file = self.dir / "records.json"
        self._lock = asyncio.Lock()
        self._ready = False
        self._tip: str | None = None
        self._trees: dict[str, str] = {}  # commit -> tree
        self._skipped: dict[str, list[str]] = {}  # commit -> paths too large to snapshot
        home = self.dir / "home"
        self._env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.root),
            "GIT_INDEX_FILE": str(self.index),
            "GIT_AUTHOR_NAME": "coder_ls",
            "GIT_AUTHOR_EMAIL": "coder_ls@localhost",
            "GIT_COMMITTER_NAME": "coder_ls",
            "GIT_COMMITTER_EMAIL": "coder_ls@localhost",
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        }
        if "TMPDIR" in os.environ:
            self._env["TMPDIR"] = os.environ["TMPDIR"]

    # -- public API ---------------------------------------------------------------------------

    async def snapshot(self, submission_id: str) -> str:
        """Snapshot the workspace (tracked + untracked, not ignored); returns the commit id."""
        async with self._lock:
            tree, skipped = await self._write_tree()
            return await self._commit(tree, skipped, f"before {submission_id}")

    async def finish(self, submission_id: str, before: str) -> list[str]:
        """Snapshot again after the submission; record it when it changed files (the paths)."""
        async with self._lock:
            tree, skipped = await self._write_tree()
            if tree == await self._tree_of(before):
                return []
            after = await self._commit(tree, skipped, f"after {submission_id}")
            changes = await self._changes(before, after)
            if not changes:
                return []
            paths = sorted(changes)
            state = self._load()
            state.records.append(Record(submission_id, before, after, paths, time.time()))
            del state.records[:-MAX_RECORDS]
            self._save(state)
            # Packs up loose objects / many small packs when git thinks it is time (rarely).
            await self._git("gc", "--auto", "--quiet", check=False)
            return paths

    async def undo_last(self) -> UndoOutcome | None:
        """Put the files the last changing submission touched back as they were before it."""
        async with self._lock:
            state = self._load()
            if not state.records:
                return None
            rec = state.records[-1]
            current, _ = await self._write_tree()
            changes = await self._changes(rec.before, rec.after)
            drifted = set(await self._diff_names(rec.after, current))
            wanted = set(rec.paths)
            to_restore = sorted(p for p, s in changes.items() if s != "A" and p in wanted)
            to_remove = sorted(p for p, s in changes.items() if s == "A" and p in wanted)
            if to_restore:
                stdin = b"\0".join(os.fsencode(p) for p in to_restore)
                await self._git(
                    "checkout", rec.before, "--pathspec-from-file=-", "--pathspec-file-nul",
                    stdin=stdin, literal=True,
                )  # fmt: skip
            removed = await asyncio.to_thread(self._remove_files, to_remove)
            state.records.pop()
            self._save(state)
            conflicts = sorted(p for p in wanted if p in drifted)
            return UndoOutcome(to_restore, removed, rec.submission_id, conflicts)

    async def undo_all_preview(self) -> list[str]:
        """The paths `/undo --all` would restore or remove (raises `NotAGitRepo`)."""
        restored, removed = await worktree_changes(self.root)
        return sorted({*restored, *removed})

    def pending(self) -> list[Record]:
        """The recorded submissions, oldest first (what successive `/undo`s would revert)."""
        return list(self._load().records)

    # -- snapshots ----------------------------------------------------------------------------

    async def _git(
        self, *args: str, stdin: bytes | None = None, check: bool = True, literal: bool = False
    ) -> GitRun:
        env = self._env if not literal else {**self._env, "GIT_LITERAL_PATHSPECS": "1"}
        return await run_git([*_PRIVATE_FLAGS, *args], cwd=self.root, env=env, stdin=stdin, check=check)

    async def _ensure_repo(self) -> None:
        """Create the private repo on first use (again if someone deleted `.coder/`)."""
        if self._ready and (self.git_dir / "HEAD").exists():
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        ensure_state_gitignore(self.root)
        if not (self.git_dir / "HEAD").exists():
            await self._git("init", "-q")
            self._trees.clear()
            self._skipped.clear()
        head = await self._git("rev-parse", "-q", "--verify", "refs/heads/snapshots", check=False)
        self._tip = head.text.strip() or None
        self._ready = True

    def _sync_info(self) -> None:
        lines = ["# Written by coder_ls", "/.coder/", ""]
        user_exclude = self.root / ".git" / "info" / "exclude"
        if user_exclude.is_file():
            lines += ["# mirrored from .git/info/exclude", user_exclude.read_text("utf-8", "replace")]
        for name, text in (("exclude", "\n".join(lines)), ("attributes", _ATTRIBUTES)):
            target = self.git_dir / "info" / name
            if not target.exists() or target.read_text("utf-8", "replace") != text:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")

    def _too_large(self, paths: list[str]) -> list[str]:
        big = []
        for p in paths:
            try:
                st = os.lstat(self.root / p)
            except OSError:
                continue
            if st.st_size > MAX_FILE_BYTES and not os.path.islink(self.root / p):
                big.append(p)
        return sorted(big)

    async def _write_tree(self) -> tuple[str, list[str]]:
        """Bring the private index up to date with the work tree; the tree id and skipped paths."""
        await self._ensure_repo()
        self._sync_info()
        self._clear_stale_lock()
        listed = await self._git("ls-files", "-z", "--others", "--modified", "--exclude-standard")
        candidates = split_z(listed.stdout)
        big = await asyncio.to_thread(self._too_large, candidates)
        spec: list[str] = []
        if big:
            specs = [f":(literal){p}" for p in big]
            await self._git("rm", "--cached", "-q", "--ignore-unmatch", "--", *specs)
            spec = ["--", ".", *(f":(exclude,literal){p}" for p in big)]
        # Streaming every blob into a single pack is much faster than thousands of loose objects.
        bulk = ["-c", "core.bigFileThreshold=1"] if len(candidates) >= BULK_MIN_FILES else []
        added = await self._git(*bulk, "add", "-A", "--ignore-errors", *spec, check=False)
        if added.returncode != 0 and "fatal:" in added.stderr:
            raise GitError(f"snapshot failed: {added.stderr.strip()}", added.returncode, added.stderr)
        tree = (await self._git("write-tree")).text.strip()
        return tree, big

    async def _commit(self, tree: str, skipped: list[str], title: str) -> str:
        message = f"{title}\n\n{json.dumps({'skipped': skipped})}\n"
        parent = ["-p", self._tip] if self._tip else []
        run = await self._git(
            "commit-tree", "--no-gpg-sign", tree, *parent, "-F", "-", stdin=message.encode()
        )
        commit = run.text.strip()
        await self._git("update-ref", "refs/heads/snapshots", commit)
        self._tip = commit
        self._trees[commit] = tree
        self._skipped[commit] = skipped
        return commit

    async def _tree_of(self, commit: str) -> str:
        if commit not in self._trees:
            run = await self._git("rev-parse", "--verify", f"{commit}^{{tree}}")
            self._trees[commit] = run.text.strip()
        return self._trees[commit]

    async def _skipped_of(self, commit: str) -> list[str]:
        if commit not in self._skipped:
            run = await self._git("cat-file", "commit", commit)
            body = run.text.split("\n\n", 2)
            try:
                self._skipped[commit] = list(json.loads(body[2]).get("skipped", []))
            except (IndexError, ValueError, AttributeError):
                self._skipped[commit] = []
        return self._skipped[commit]

    async def _changes(self, before: str, after: str) -> dict[str, str]:
        """path -> A/M/D/T between two snapshots, leaving out paths too large to snapshot."""
        run = await self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", before, after)
        fields = split_z(run.stdout)
        skipped = {*await self._skipped_of(before), *await self._skipped_of(after)}
        changes: dict[str, str] = {}
        for status, path in zip(fields[0::2], fields[1::2], strict=False):
            if path not in skipped:
                changes[path] = status[0]
        return changes

    async def _diff_names(self, a: str, b: str) -> list[str]:
        run = await self._git("diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b)
        return split_z(run.stdout)

    def _clear_stale_lock(self) -> None:
        """A lock left by a killed git would block every snapshot: drop it when old."""
        lock = self.index.with_name(self.index.name + ".lock")
        try:
            if time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
                lock.unlink()
        except OSError:
            pass

    def _remove_files(self, paths: list[str]) -> list[str]:
        removed = []
        for rel in paths:
            target = self.root / rel
            if target.is_symlink() or target.is_file():
                target.unlink()
                removed.append(rel)
                parent = target.parent
                while parent != self.root and self.root in parent.parents:
                    try:
                        parent.rmdir()  # only when empty
                    except OSError:
                        break
                    parent = parent.parent
        return removed

    # -- records ------------------------------------------------------------------------------

    def _load(self) -> _State:
        try:
            return msgspec.json.decode(self.records_file.read_bytes(), type=_State)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return _State()

    def _save(self, state: _State) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.records_file.with_name(self.records_file.name + ".tmp")
        tmp.write_bytes(msgspec.json.encode(state))
        os.replace(tmp, self.records_file)


async def restore_to_head(root: Path) -> UndoOutcome:
    """`/undo --all`: tracked files back to HEAD (index too), untracked non-ignored files removed.

    Uses the user's own git; `.coder/` and ignored files are never touched. Raises
    `NotAGitRepo` outside a repository and `GitError` when HEAD has no commit yet.
    """
    if not await is_git_repo(root):
        raise NotAGitRepo(f"Not a git repository: {root}")
    if not await has_head(root):
        raise GitError("The repository has no commit yet: there is no HEAD to go back to.")
    restored, removed = await worktree_changes(root)
    flags = [*USER_FLAGS, "-c", "core.hooksPath=/dev/null"]
    await run_git(
        [*flags, "restore", "--source=HEAD", "--staged", "--worktree", "--", ".", EXCLUDE_CODER], cwd=root
    )
    await run_git([*flags, "clean", "-f", "-d", "-q", "--", ".", EXCLUDE_CODER], cwd=root)
    return UndoOutcome(restored=restored, removed=removed, submission_id=None)
