"""Per-submission snapshots of the workspace behind `/undo`, and `/undo --all`.

Snapshots live in a private git repository, `<root>/.coder/checkpoints/git`, driven with
`GIT_DIR`/`GIT_WORK_TREE=<root>`/`GIT_INDEX_FILE=<checkpoints>/index`, so the user's history,
index, HEAD, stash and refs are never read or written. The private repo sees the workspace's
own `.gitignore` files (git reads them from the work tree), the user's `.git/info/exclude`
(mirrored into ours) and always excludes `/.coder/`; it ignores the user's global config.

A snapshot is the tree of the private index brought up to date with the work tree. Every
snapshot starts with ONE `git ls-files --others --modified --exclude-standard`: it lists the
files whose stat data no longer match the index (modified, deleted, type-changed; racily clean
entries are compared by content) and the new untracked non-ignored files. When it lists
nothing (or only files already known to be too large) and the index file is the one we left,
the work tree still matches the tree we wrote last and that tree id is the snapshot: no
`add`, no `write-tree`. Otherwise `git add -A` (incremental thanks to the stat cache) and
`write-tree`. So a submission that changes nothing costs two git processes (one check before,
one after) and leaves no trace.

`snapshot` returns a tree id; commits are only made when `finish` writes a record (the
submission changed files): the before and after trees are committed and chained on
`refs/heads/snapshots`, so a gc keeps them and the records survive a restart. `git gc --auto`
runs once every `GC_EVERY` records, not on every submission. Files larger than
`MAX_FILE_BYTES` are never snapshotted, and `/undo` leaves them alone (their paths are
recorded in the snapshot's commit message).
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
GC_EVERY = 25  # `git gc --auto` once per this many records written
_MAX_KNOWN_TREES = 1024

# git processes started by `Checkpoints` (all of them go through `Checkpoints._git`): tests and
# benchmarks read it to check that a submission which changes nothing costs two processes.
GIT_CALLS = 0

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
    written: int = 0  # records ever written (paces `git gc --auto`)


_IndexSig = tuple[int, int, int, int]


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
        self._tree_skipped: dict[str, list[str]] = {}  # tree written here -> paths too large
        # The tree the private index held when we last brought it up to date with the work
        # tree, the paths left out of it as too large, and the index file's identity then.
        self._clean: tuple[str, frozenset[str], _IndexSig] | None = None
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
        """Snapshot the workspace (tracked + untracked, not ignored); returns a tree id.

        Pass it to `finish`. In the common case (nothing changed since the last snapshot)
        this is one git process.
        """
        async with self._lock:
            tree, _ = await self._write_tree()
            return tree

    async def finish(self, submission_id: str, before: str) -> list[str]:
        """Snapshot again after the submission; record it when it changed files (the paths).

        `before` is what `snapshot` returned (a tree id; a snapshot commit id works too).
        """
        async with self._lock:
            tree, skipped = await self._write_tree()
            before_tree = await self._tree_of(before)
            if tree == before_tree:
                return []
            before_skipped = await self._skipped_any(before)
            changes = await self._changes(before_tree, tree, {*before_skipped, *skipped})
            if not changes:
                return []
            if before in self._trees:  # already a commit
                before_commit = before
            else:
                before_commit = await self._commit(before_tree, before_skipped, f"before {submission_id}")
            after = await self._commit(tree, skipped, f"after {submission_id}", parent=before_commit)
            await self._git("update-ref", "refs/heads/snapshots", after)
            self._tip = after
            paths = sorted(changes)
            state = self._load()
            state.records.append(Record(submission_id, before_commit, after, paths, time.time()))
            del state.records[:-MAX_RECORDS]
            state.written += 1
            self._save(state)
            if state.written % GC_EVERY == 0:
                # Packs up loose objects / many small packs when git thinks it is time.
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
            skipped = {*await self._skipped_of(rec.before), *await self._skipped_of(rec.after)}
            changes = await self._changes(rec.before, rec.after, skipped)
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
            self._clean = None  # the checkout rewrote the index; the next snapshot re-adds
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
        global GIT_CALLS
        GIT_CALLS += 1
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
            self._tree_skipped.clear()
            self._clean = None
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

    def _index_sig(self) -> _IndexSig | None:
        try:
            st = os.stat(self.index)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _still_too_large(self, paths: list[str], known: frozenset[str]) -> bool:
        """True when every path was left out of the last tree as too large and still is."""
        return all(p in known for p in paths) and self._too_large(paths) == sorted(paths)

    async def _write_tree(self) -> tuple[str, list[str]]:
        """Bring the private index up to date with the work tree; the tree id and skipped paths.

        Fast path: one `ls-files` that finds nothing new, modified or deleted -> the tree we
        wrote last (the index file must be the one we left, else someone else rewrote it).
        """
        await self._ensure_repo()
        self._sync_info()
        self._clear_stale_lock()
        listed = await self._git("ls-files", "-z", "--others", "--modified", "--exclude-standard")
        candidates = sorted(set(split_z(listed.stdout)))
        clean = self._clean
        if clean is not None and clean[2] == self._index_sig():
            tree, known_big, _ = clean
            if not candidates:
                return tree, self._note_tree(tree, [])
            if self._still_too_large(candidates, known_big):
                return tree, self._note_tree(tree, candidates)
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
        return tree, self._note_tree(tree, big)

    def _note_tree(self, tree: str, skipped: list[str]) -> list[str]:
        """Remember a tree we produced and the paths left out of it as too large (just now)."""
        self._tree_skipped.pop(tree, None)  # most recent last
        self._tree_skipped[tree] = skipped
        while len(self._tree_skipped) > _MAX_KNOWN_TREES:
            del self._tree_skipped[next(iter(self._tree_skipped))]
        return skipped

    async def _commit(self, tree: str, skipped: list[str], title: str, parent: str | None = None) -> str:
        """A snapshot commit of `tree` on top of `parent` (the tip by default); no ref update.

        The tip itself when it already is that tree with the same skipped paths.
        """
        if parent is None:
            tip = self._tip
            if tip is not None and await self._tree_of(tip) == tree and await self._skipped_of(tip) == skipped:
                return tip
            parent = tip
        message = f"{title}\n\n{json.dumps({'skipped': skipped})}\n"
        parents = ["-p", parent] if parent else []
        run = await self._git(
            "commit-tree", "--no-gpg-sign", tree, *parents, "-F", "-", stdin=message.encode()
        )
        commit = run.text.strip()
        self._trees[commit] = tree
        self._skipped[commit] = skipped
        return commit

    async def _tree_of(self, oid: str) -> str:
        """The tree of a snapshot commit, or `oid` itself when it is a tree we wrote."""
        if oid in self._tree_skipped:
            return oid
        if oid not in self._trees:
            run = await self._git("rev-parse", "--verify", f"{oid}^{{tree}}")
            tree = run.text.strip()
            if tree == oid:  # a tree id (one we have forgotten about)
                return oid
            self._trees[oid] = tree
        return self._trees[oid]

    async def _skipped_any(self, oid: str) -> list[str]:
        """The paths too large to snapshot in a tree we wrote or a snapshot commit."""
        if oid in self._tree_skipped:
            return self._tree_skipped[oid]
        return await self._skipped_of(oid)

    async def _skipped_of(self, commit: str) -> list[str]:
        if commit not in self._skipped:
            run = await self._git("cat-file", "commit", commit, check=False)
            body = run.text.split("\n\n", 2)
            try:
                self._skipped[commit] = list(json.loads(body[2]).get("skipped", []))
            except (IndexError, ValueError, AttributeError):
                self._skipped[commit] = []
        return self._skipped[commit]

    async def _changes(self, before: str, after: str, skipped: set[str]) -> dict[str, str]:
        """path -> A/M/D/T between two snapshots, leaving out paths too large to snapshot."""
        run = await self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", before, after)
        fields = split_z(run.stdout)
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
