"""Per-submission snapshots of the workspace behind `/undo`, and `/undo --all`.

Snapshots live in a private git repository, `<root>/.coder/checkpoints/git`, driven with
`GIT_DIR`/`GIT_WORK_TREE=<root>`/`GIT_INDEX_FILE=<checkpoints>/index`, so the user's history,
index, HEAD, stash and refs are never read or written. The private repo sees the workspace's
own `.gitignore` files (git reads them from the work tree), the user's `.git/info/exclude`
(mirrored into ours) and always excludes `/.coder/`; it ignores the user's global config.

`/undo` reverts a path only while it still holds what the submission left there and never
through a symlink (`undofs`); the paths changed since are kept and reported as conflicts.

A snapshot is the tree of the private index brought up to date with the work tree
(`workindex.WorkIndex`). While the file watcher is trusted, only the paths it saw change are
looked at, after a barrier that makes a command's changes visible: a submission that changes
nothing costs no git process. Otherwise a scan: ONE `git ls-files --others --modified
--exclude-standard` (stat data against the index; nothing listed and the index file is the one
we left: the tree we wrote last, no `add`, no `write-tree`), else `git add -A` and `write-tree`.

`snapshot` returns a tree id and writes a durable `Begun` entry (no git process); commits are
only made when `finish` writes a record (the submission changed files): the before and after
trees are committed and chained on `refs/heads/snapshots` (its tip re-read under the lock: every
server on the workspace chains on it), so a gc keeps them and the records survive a restart.
Records belong to a session; which one `/undo` takes, crash recovery and what two servers on one
workspace share are in `undojournal.py`. `git gc --auto`
runs once every `GC_EVERY` records, not on every submission. Files larger than
`MAX_FILE_BYTES` are never snapshotted, and `/undo` leaves them alone (their paths are
recorded in the snapshot's commit message).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from pathlib import Path

import msgspec

from coder_ls.guard.trust import OwnedIds
from coder_ls.history import undojournal as journal
from coder_ls.history.editorbuffers import EditorBuffers
from coder_ls.history.gitops import (
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
from coder_ls.history.undofs import GITLINK, Change, Entry, apply_undo
from coder_ls.history.undojournal import Begun, Record, ServerMark, State, WorkspaceLock, overlaps, pick
from coder_ls.history.workindex import WorkIndex

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_RECORDS = 100
WATCH = True  # track changes with a file watcher (else: scan the workspace per snapshot)
GC_EVERY = 25  # `git gc --auto` once per this many records written
_MAX_KNOWN_TREES = 1024

# git processes started by `Checkpoints` (all of them go through `Checkpoints._git`): tests and
# benchmarks read it to check what a submission which changes nothing costs.
GIT_CALLS = 0


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


class UndoUnavailable(Exception):
    """`/undo` cannot work in this workspace (`.coder/` cannot be written): why."""


class UndoOutcome(msgspec.Struct):
    restored: list[str]
    removed: list[str]
    submission_id: str | None
    conflicts: list[str] = msgspec.field(default_factory=list)


def ensure_state_gitignore(root: Path) -> None:
    """Create `<root>/.coder/.gitignore` (once) so coder_ls state stays out of the user's git."""
    from coder_ls.store.gitignore import ensure_state_dir

    ensure_state_dir(root)


class Checkpoints:
    """Snapshots of `root` and the stack of submissions that changed it."""

    def __init__(
        self, root: Path, *, watch: bool | None = None, owned: OwnedIds | None = None, unavailable: str | None = None
    ) -> None:
        """`owned`: the record of the submissions this user's server snapshotted here (the
        gate's row `checkpoints`, `guard/trust.py`); only their records are undone. None:
        every record in `records.json` is taken (the unit tests' own repositories).
        `unavailable`: why no checkpoint can be kept (`.coder/` cannot be written): then no
        snapshot is taken, nothing is recorded, and `/undo` raises `UndoUnavailable`."""
        self.root = root.resolve()
        self._owned = owned
        self.unavailable = unavailable
        self.dir = self.root / ".coder" / "checkpoints"
        self.git_dir = self.dir / "git"
        self.index = self.dir / "index"
        self.records_file = self.dir / "records.json"
        self._lock = asyncio.Lock()  # this server's tasks, one at a time ...
        self._flock = WorkspaceLock(self.dir / "lock", prepare=self._ensure_dirs)  # ... and one server at a time
        self.mark = ServerMark(self.dir)
        self.editor = EditorBuffers()
        self._started: dict[str, tuple[float, str]] = {}  # submission id -> (when its snapshot began, session)
        self._ready = False
        self._tip: str | None = None
        self._trees: dict[str, str] = {}  # commit -> tree
        self._skipped: dict[str, list[str]] = {}  # commit -> paths too large to snapshot
        self._tree_skipped: dict[str, list[str]] = {}  # tree written here -> paths too large
        self._texts: dict[tuple[str, str], str | None] = {}  # (commit, path) -> text (None: binary)
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
        self.work = WorkIndex(self.root, self.dir, self.index, self._git, WATCH if watch is None else watch)

    # -- public API ---------------------------------------------------------------------------

    async def snapshot(self, submission_id: str, session_id: str = "") -> str:
        """Snapshot the workspace (tracked + untracked, not ignored); returns a tree id.

        Pass it to `finish`. Before returning, the submission is on record as begun:
        if this server dies before `finish`, the next server records what it changed. In the
        common case (nothing changed since the last snapshot) no git process runs.
        """
        if self.unavailable is not None:
            return ""
        started = time.time()
        self._started[submission_id] = (started, session_id)
        while len(self._started) > _MAX_KNOWN_TREES:
            del self._started[next(iter(self._started))]
        async with self._lock, self._flock.hold():
            tree, _ = await self._write_tree()
            state = self._load()
            await self._recover(state, tree)
            if self._owned is not None:  # before any change can land: a crashed turn is this user's too
                self._owned.add(submission_id)
            state.begun.append(Begun(submission_id, session_id, self.mark.id, tree, started, state.tick()))
            self._save(state)
            return tree

    async def finish(self, submission_id: str, before: str) -> list[str]:
        """Snapshot again after the submission; record it when it changed files (the paths).

        `before` is what `snapshot` returned (a tree id; a snapshot commit id works too).
        """
        started, session = self._started.pop(submission_id, (time.time(), ""))
        if self.unavailable is not None or not before:
            return []
        async with self._lock, self._flock.hold():
            state = self._load()
            begun = state.take_begun(submission_id, self.mark.id)
            try:
                tree, skipped = await self._write_tree()
                await self._recover(state, tree)
                began = (started, begun.seq if begun is not None else 0)
                return await self._record(state, submission_id, session, self.mark.id, before, tree, skipped, began)
            finally:
                self._save(state)  # a failed finish drops its `Begun` all the same

    async def _record(
        self, state: State, submission_id: str, session: str, server: str, before: str, tree: str,
        skipped: list[str], began: tuple[float, int], recovered: bool = False,
    ) -> list[str]:  # fmt: skip
        """Append the record of a submission that went from `before` to `tree` (if it changed
        anything) to `state`; the paths it changed."""
        ended = state.tick()
        before_tree = await self._tree_of(before)
        if tree == before_tree:
            return []
        before_skipped = await self._skipped_any(before)
        changes = await self._changes(before_tree, tree, {*before_skipped, *skipped})
        if not changes:
            return []
        head = await self._git("rev-parse", "-q", "--verify", "refs/heads/snapshots", check=False)
        self._tip = head.text.strip() or None  # another server may have moved it
        if before in self._trees:  # already a commit
            before_commit = before
        else:
            before_commit = await self._commit(before_tree, before_skipped, f"before {submission_id}")
        after = await self._commit(tree, skipped, f"after {submission_id}", parent=before_commit)
        await self._git("update-ref", "refs/heads/snapshots", after)
        self._tip = after
        paths = sorted(changes)
        now = time.time()
        record = Record(submission_id, before_commit, after, paths, now, began[0], session, server, began[1], ended,
                        recovered)  # fmt: skip
        if state.add(record, MAX_RECORDS) % GC_EVERY == 0:
            # Packs up loose objects / many small packs when git thinks it is time.
            await self._git("gc", "--auto", "--quiet", check=False)
        return paths

    async def _recover(self, state: State, tree: str | None) -> bool:
        """Turn the `Begun` entries of servers that died mid-submission into records, with the
        work tree as found now (`tree`, else snapshotted here) as their "after"."""
        dead = [b for b in state.begun if not self.mark.alive(b.server_id)]
        if not dead:
            return False
        if tree is None:
            tree, _ = await self._write_tree()
        skipped = self._tree_skipped.get(tree, [])
        for b in dead:
            state.begun.remove(b)
            log.info("recording submission %s of a server that stopped mid-submission", b.submission_id)
            try:
                await self._record(state, b.submission_id, b.session_id, b.server_id, b.before, tree, skipped,
                                   (b.started_at, b.seq), recovered=True)  # fmt: skip
            except GitError as exc:  # e.g. its snapshot is gone: it must not block every later one
                log.warning("could not record submission %s: %s", b.submission_id, exc)
            self.mark.forget(b.server_id)
        return True

    async def undo_last(self, session_id: str = "") -> UndoOutcome | None:
        """Put the paths the last changing submission of `session_id` touched back as they were
        before it (with none of its own: the last one of a server that has stopped).

        Only the paths that still hold what the submission left there (checked byte for byte,
        never through a symlink: `undofs`) are reverted; the others, the ones edited in the
        editor since the submission began, and the ones changed while another session's
        submission ran too, are kept and returned as `conflicts`.
        """
        if self.unavailable is not None:
            raise UndoUnavailable(f"/undo is unavailable in this workspace: {self.unavailable}")
        async with self._lock, self._flock.hold():
            await self._ensure_repo()
            state = self._load()
            recovered = await self._recover(state, None)
            n = pick(state, session_id, self.mark.alive)
            if n is None:
                if recovered:
                    self._save(state)
                return None
            rec = state.records[n]
            skipped = {*await self._skipped_of(rec.before), *await self._skipped_of(rec.after)}
            wanted = set(rec.paths)
            changes = [c for c in await self._raw_changes(rec.before, rec.after, skipped) if c.path in wanted]
            blobs = await self._blobs([c.before.oid for c in changes if c.before is not None])
            kept = self.editor.conflicts(changes, rec.started_at or rec.created_at)
            kept |= await self._shared(state, rec)
            applied = await asyncio.to_thread(apply_undo, str(self.root), changes, blobs, kept, MAX_FILE_BYTES)
            state.mark_undone(rec)
            self._save(state)
            return UndoOutcome(applied.restored, applied.removed, rec.submission_id, applied.conflicts)

    async def _shared(self, state: State, rec: Record) -> set[str]:
        """`rec`'s paths that changed while another session's submission ran too."""
        shared: set[str] = set()
        for o in overlaps(state, rec):
            try:
                changed = set(await self._changes(await self._tree_of(o.low), await self._tree_of(o.high), set()))
            except GitError:  # a snapshot is gone: nothing of that stretch can be told apart
                changed = set(rec.paths)
            paths = changed & set(rec.paths)
            shared |= paths if o.other_paths is None else paths & set(o.other_paths)
        return shared

    def note_editor_change(self, path: Path, text: str | None) -> None:
        """The editor's buffer of `path` changed (didChange/didSave): `text` is its content now,
        None when the editor no longer holds it. A submission's path whose buffer changed while
        it ran (or since) and no longer matches what the submission left is not undone."""
        self.editor.note(self.root, path, text)

    def close(self) -> None:
        """Stop watching the workspace (the server is shutting down)."""
        self.work.close()
        self.mark.release()

    async def undo_all_preview(self) -> list[str]:
        """The paths `/undo --all` would restore or remove (raises `NotAGitRepo`)."""
        restored, removed = await worktree_changes(self.root)
        return sorted({*restored, *removed})

    async def submission_texts(self, rel: str) -> tuple[str, str, str] | None:
        """(submission id, text before, text after) of `rel` for the newest recorded
        submission that changed it; None when none did (or it is not text). Cached per
        snapshot commit: code-action requests come on every cursor move."""
        records = [r for r in self.pending() if rel in r.paths]
        if not records:
            return None
        rec = records[-1]
        texts = []
        for commit in (rec.before, rec.after):
            key = (commit, rel)
            if key not in self._texts:
                run = await self._git("cat-file", "blob", f"{commit}:{rel}", check=False, literal=True)
                data = run.stdout if run.returncode == 0 else b""
                self._texts[key] = None if b"\0" in data[:8192] else data.decode("utf-8", errors="replace")
                while len(self._texts) > _MAX_KNOWN_TREES:
                    del self._texts[next(iter(self._texts))]
            text = self._texts[key]
            if text is None:
                return None
            texts.append(text)
        return rec.submission_id, texts[0], texts[1]

    async def record_diff(self, rec: Record) -> tuple[str, str]:
        """(stat, unified diff) of what the submission of `rec` changed (`/diff turn`): its
        before and after snapshots, shell side effects included."""
        flags = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")
        async with self._lock:
            stat = await self._git("diff", *flags, "--stat=100", rec.before, rec.after, "--", *rec.paths, literal=True)
            patch = await self._git("diff", *flags, rec.before, rec.after, "--", *rec.paths, literal=True)
        return stat.text.rstrip("\n"), patch.text

    async def show(self, commit: str, rel: str) -> bytes | None:
        """The bytes `rel` had in snapshot `commit`, None when it was not there."""
        run = await self._git("cat-file", "blob", f"{commit}:{rel}", check=False, literal=True)
        return run.stdout if run.returncode == 0 else None

    def records(self) -> list[Record]:
        """Every record kept, undone ones too, oldest first (`/rewind`, `/diff turn`)."""
        return [] if self.unavailable is not None else list(self._load().records)

    def pending(self) -> list[Record]:
        """The recorded submissions, oldest first (what successive `/undo`s would revert)."""
        if self.unavailable is not None:
            return []
        return [r for r in self._load().records if not r.undone]

    # -- snapshots ----------------------------------------------------------------------------

    async def _git(self, *args: str, stdin: bytes | None = None, check: bool = True, literal: bool = False) -> GitRun:
        global GIT_CALLS
        GIT_CALLS += 1
        env = self._env if not literal else {**self._env, "GIT_LITERAL_PATHSPECS": "1"}
        return await run_git([*_PRIVATE_FLAGS, *args], cwd=self.root, env=env, stdin=stdin, check=check)

    async def _ensure_repo(self) -> None:
        """Create the private repo on first use (again if someone deleted `.coder/`)."""
        if self._ready and (self.git_dir / "HEAD").exists():
            return
        self._ensure_dirs()
        self.mark.claim()
        if not (self.git_dir / "HEAD").exists():
            await self._git("init", "-q")
            self._trees.clear()
            self._skipped.clear()
            self._tree_skipped.clear()
            self.work.forget()
        head = await self._git("rev-parse", "-q", "--verify", "refs/heads/snapshots", check=False)
        self._tip = head.text.strip() or None
        self._ready = True

    async def _write_tree(self) -> tuple[str, list[str]]:
        """Bring the private index up to date with the work tree; the tree id and skipped paths."""
        await self._ensure_repo()
        tree, skipped = await self.work.write_tree(MAX_FILE_BYTES)
        return tree, self._note_tree(tree, skipped)

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
        run = await self._git("commit-tree", "--no-gpg-sign", tree, *parents, "-F", "-", stdin=message.encode())
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

    async def _raw_changes(self, before: str, after: str, skipped: set[str]) -> list[Change]:
        """The entries that differ between two snapshots (submodules and too-large files left out)."""
        run = await self._git("diff-tree", "-r", "-z", "--no-renames", before, after)
        fields = split_z(run.stdout)
        out: list[Change] = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.lstrip(":").split()
            if len(parts) < 5 or path in skipped or GITLINK in (parts[0], parts[1]):
                continue
            old = Entry(parts[0], parts[2]) if parts[0] != "000000" else None
            new = Entry(parts[1], parts[3]) if parts[1] != "000000" else None
            out.append(Change(path, old, new))
        return out

    async def _blobs(self, oids: list[str]) -> dict[str, bytes]:
        """The contents of the given blobs (one `cat-file --batch`)."""
        wanted = sorted(set(oids))
        if not wanted:
            return {}
        run = await self._git("cat-file", "--batch", stdin="".join(f"{o}\n" for o in wanted).encode())
        data, pos, out = run.stdout, 0, {}
        for oid in wanted:
            eol = data.index(b"\n", pos)
            header = data[pos:eol].split()
            pos = eol + 1
            if len(header) == 3 and header[1] == b"blob":
                size = int(header[2])
                out[oid] = data[pos : pos + size]
                pos += size + 1
        return out

    # -- records ------------------------------------------------------------------------------

    def _ensure_dirs(self) -> None:
        ensure_state_gitignore(self.root)  # never re-creates a deleted workspace (no `parents`)
        self.dir.mkdir(exist_ok=True)

    def _load(self) -> State:
        """The journal, only this user's part: `.coder/checkpoints/` can come with a clone, and
        a shipped record's "before" (or a shipped `Begun`'s) is whatever the repository wants
        written back by `/undo` (the gate's row `checkpoints`, `guard/trust.py`)."""
        state = journal.load(self.dir)
        if self._owned is not None:
            mine = self._owned.ids()
            state.records[:] = [r for r in state.records if r.submission_id in mine]
            state.begun[:] = [b for b in state.begun if b.submission_id in mine]
        return state

    def _save(self, state: State) -> None:
        journal.save(self.root, self.dir, state)


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
    await run_git([*flags, "restore", "--source=HEAD", "--staged", "--worktree", "--", ".", EXCLUDE_CODER], cwd=root)
    await run_git([*flags, "clean", "-f", "-d", "-q", "--", ".", EXCLUDE_CODER], cwd=root)
    return UndoOutcome(restored=restored, removed=removed, submission_id=None)
