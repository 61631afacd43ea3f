"""The undo records of a workspace, shared by every server on it, and who may undo which.

`<root>/.coder/checkpoints/records.json` holds, oldest first, the submissions that changed
files (`Record`: session, server, before/after snapshots, paths); `running.json` the
submissions still running (`Begun`: session, server, the tree before them) and the clock that
orders every snapshot (a submission that changes nothing rewrites only this small file). Both
are read and rewritten only while
holding the workspace's checkpoint lock (`WorkspaceLock`, an `flock` on
`.coder/checkpoints/lock`), which also serializes every call on the private git repository and
its index: two servers on one workspace (two editor windows) take turns instead of failing on
git's `index.lock`.

Who undoes what:

- `/undo` in a session takes the last record *of that session*. A session with no records of
  its own takes the last record left by a server that has stopped (the previous run of the
  editor, or a crash): after a restart, `/undo` reverts the last turn of the server before.
  Records of sessions whose server still runs are never taken by another session.
- A record is durable before its submission's first change can land: `Begun` is written
  (renamed into place: it survives the server being killed; not fsynced, a power cut is not
  covered) with the snapshot taken before the submission. A `Begun` whose server is gone (it was
  killed mid-turn) becomes a full record the next time any server takes the lock: its "after"
  is the work tree as found then.
- While two sessions' submissions overlap in time, a path changed while both were running
  cannot be attributed from snapshots alone; `overlaps` gives the snapshot pairs bounding those
  stretches, and the caller keeps such paths (listed as conflicts) instead of reverting them.

A server is alive while it holds an `flock` on `.coder/checkpoints/servers/<server id>`
(`ServerMark`): the kernel drops it when the process dies, however it dies, so a pid reused by
another process is never mistaken for the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import msgspec

LOCK_TIMEOUT = 60.0  # seconds to wait for another server's checkpoint work before giving up
_LOCK_POLL = 0.02


class CheckpointBusy(RuntimeError):
    """Another server held the workspace's checkpoint lock for longer than `LOCK_TIMEOUT`."""


class Record(msgspec.Struct):
    submission_id: str
    before: str
    after: str
    paths: list[str]
    created_at: float = 0.0
    started_at: float = 0.0  # when the submission's "before" snapshot began
    session_id: str = ""
    server_id: str = ""  # "": written before records named their server (a stopped server)
    begun_seq: int = 0  # the journal's clock when the "before" snapshot was taken (0: unknown)
    ended_seq: int = 0  # ... and when the "after" snapshot was
    recovered: bool = False  # made by a later server from a killed server's `Begun`
    undone: bool = False  # kept after its `/undo` only to tell what overlapped it (`overlaps`)


class Begun(msgspec.Struct):
    submission_id: str
    session_id: str
    server_id: str
    before: str  # the tree before the submission
    started_at: float
    seq: int


class _Book(msgspec.Struct):
    """records.json"""

    version: int = 1
    records: list[Record] = msgspec.field(default_factory=list)
    written: int = 0  # records ever written (paces `git gc --auto`)


class _Running(msgspec.Struct):
    """running.json"""

    seq: int = 0  # a clock ticking at every snapshot taken under the lock
    begun: list[Begun] = msgspec.field(default_factory=list)


class State:
    """Both files as read under the lock; `save` writes back what changed."""

    def __init__(self, book: _Book, running: _Running) -> None:
        self._book, self._running = book, running
        self.records_changed = False

    @property
    def records(self) -> list[Record]:
        return self._book.records

    @property
    def begun(self) -> list[Begun]:
        return self._running.begun

    def tick(self) -> int:
        self._running.seq += 1
        return self._running.seq

    def add(self, record: Record, keep: int) -> int:
        """Append `record`, keeping at most `keep` (the oldest undone ones go first, then the
        oldest); the number of records ever written."""
        self._book.records.append(record)
        while len(self._book.records) > keep:
            n = next((n for n, r in enumerate(self._book.records) if r.undone), 0)
            del self._book.records[n]
        self._book.written += 1
        self.records_changed = True
        return self._book.written

    def mark_undone(self, record: Record) -> None:
        record.undone = True
        self.records_changed = True

    def take_begun(self, submission_id: str, server_id: str) -> Begun | None:
        for n, b in enumerate(self.begun):
            if b.submission_id == submission_id and b.server_id == server_id:
                return self.begun.pop(n)
        return None


def _read(path: Path, kind: type[msgspec.Struct]) -> Any:
    try:
        return msgspec.json.decode(path.read_bytes(), type=kind)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return kind()


def load(state_dir: Path) -> State:
    return State(_read(state_dir / "records.json", _Book), _read(state_dir / "running.json", _Running))


def load_records(state_dir: Path) -> list[Record]:
    return list(_read(state_dir / "records.json", _Book).records)


def save(root: Path, state_dir: Path, state: State) -> None:
    """Renamed into place: it survives this process dying however it dies. Not fsynced (a power
    cut may lose the last change): that measured ~7 ms more on every submission."""
    from coder_ls.fsutil import write_atomic

    write_atomic(state_dir / "running.json", msgspec.json.encode(state._running), root=root, fsync=False)
    if state.records_changed:
        write_atomic(state_dir / "records.json", msgspec.json.encode(state._book), root=root, fsync=False)
        state.records_changed = False


class Overlap(msgspec.Struct):
    """A stretch while another session's submission ran too: the paths that changed between
    the snapshots `low` and `high` (and, for a finished one, that it changed too) are shared."""

    low: str
    high: str
    other_paths: list[str] | None  # None: still running, anything may be its


def pick(state: State, session_id: str, alive: Callable[[str], bool]) -> int | None:
    """The index of the record `/undo` in `session_id` reverts (see the module docstring)."""
    records = state.records
    for n in range(len(records) - 1, -1, -1):
        if not records[n].undone and records[n].session_id == session_id:
            return n
    for n in range(len(records) - 1, -1, -1):
        if not records[n].undone and not alive(records[n].server_id):
            return n
    return None


def overlaps(state: State, rec: Record) -> list[Overlap]:
    """The stretches of `rec`'s submission during which another session's submission ran
    (undone or not: what its `/undo` kept is still not `rec`'s to claim)."""
    out: list[Overlap] = []
    if not rec.begun_seq or not rec.ended_seq:
        return out
    for other in state.records:
        if other is rec or other.session_id == rec.session_id or not other.begun_seq or not other.ended_seq:
            continue
        if other.begun_seq < rec.ended_seq and other.ended_seq > rec.begun_seq:
            low = rec.before if rec.begun_seq > other.begun_seq else other.before
            high = rec.after if rec.ended_seq < other.ended_seq else other.after
            out.append(Overlap(low, high, other.paths))
    for run in state.begun:
        if run.session_id != rec.session_id and run.seq < rec.ended_seq:
            low = rec.before if rec.begun_seq > run.seq else run.before
            out.append(Overlap(low, rec.after, None))
    return out


class WorkspaceLock:
    """An exclusive `flock` on `path`, taken without blocking the event loop."""

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT, prepare: Callable[[], None] | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self._prepare = prepare  # makes the lock's folder (without re-creating a deleted workspace)

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        if self._prepare is not None:
            self._prepare()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            deadline = time.monotonic() + self.timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise CheckpointBusy(
                            f"another coder_ls server on this workspace has held {self.path} for over "
                            f"{self.timeout:.0f} s"
                        ) from None
                    await asyncio.sleep(_LOCK_POLL)
            yield
        finally:
            os.close(fd)  # drops the lock


class ServerMark:
    """This server's mark on the workspace: held (`flock`) for as long as the process lives."""

    def __init__(self, state_dir: Path) -> None:
        self.id = uuid.uuid4().hex
        self.dir = state_dir / "servers"
        self._fd: int | None = None

    def claim(self) -> None:
        """Hold the mark (again, if `.coder/` was deleted under it: others would think us dead)."""
        if self._fd is not None:
            if os.fstat(self._fd).st_nlink > 0:
                return
            os.close(self._fd)
            self._fd = None
        try:
            self.dir.mkdir(exist_ok=True)  # under `.coder/checkpoints`, made by the lock before
            fd = os.open(self.dir / self.id, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return  # a read-only `.coder/`: no records are written either
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh id: nobody else holds it
        self._fd = fd

    def alive(self, server_id: str) -> bool:
        """True while the server `server_id` runs (this one included)."""
        if server_id == self.id:
            return True
        if not server_id.isalnum():  # "" (an older record), or not a name we made: not a path to follow
            return False
        try:
            fd = os.open(self.dir / server_id, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def forget(self, server_id: str) -> None:
        """Remove the mark a stopped server left (its `Begun` records were recovered)."""
        if server_id and server_id != self.id and not self.alive(server_id):
            with contextlib.suppress(OSError):
                (self.dir / server_id).unlink()

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                (self.dir / self.id).unlink()
            os.close(self._fd)
            self._fd = None
