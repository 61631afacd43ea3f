"""The sessions one server holds: the current one, loaded ones, and those on disk.

At most `max_idle` loaded sessions sit idle (not current, nothing running or queued); the
least recently used beyond that are evicted: their shell is closed (background jobs
killed), their log closed. An evicted session is loaded again from its log on demand
(its shell starts afresh at the workspace root; "Allow for session" grants are gone).

A clone can ship `.coder/sessions/` too: a well-formed log with a forged conversation
("you already agreed to ..."). Only the sessions this user's server created here are the
user's (their ids recorded outside the workspace, `trust.OwnedIds`; the gate's row
`sessions`): no other log is listed, resolved or loaded, whatever id a client names.

One writer per log: a server holds a session's lock (`store/segments.py`) while it has it
loaded. A session another server holds (two editor windows, one workspace) is not
appended to here: it continues as a fork, a new session with the same history, and the
server says so (a warning, and the `/resume` reply). A lock dies with its process.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import sys
import uuid
from collections import OrderedDict
from collections.abc import Callable, Container
from pathlib import Path

from coder_ls.engine.host import Host
from coder_ls.engine.session import Session
from coder_ls.engine.submission import SubmissionState
from coder_ls.guard.trust import OwnedIds
from coder_ls.protocol.config import Config
from coder_ls.protocol.results import SessionInfo
from coder_ls.store import log as slog
from coder_ls.store.index import AmbiguousPrefix, SessionIndex, SessionRow

log = logging.getLogger(__name__)
MAX_IDLE_SESSIONS = 8


class UnknownSession(Exception):
    pass


class SessionManager:
    def __init__(
        self,
        root: Path,
        host: Host,
        config: Callable[[], Config],
        *,
        owned: OwnedIds | None = None,
        max_idle: int = MAX_IDLE_SESSIONS,
        persist: bool = True,
    ) -> None:
        """`owned`: the record of this user's sessions here (None: none is loaded from disk)."""
        self.root = root
        self._owned = owned
        self.persist = persist  # False: `.coder/` cannot be written (index in memory, logs kept nowhere)
        self.host = host
        self._config = config
        self.max_idle = max_idle
        self._index: SessionIndex | None = None
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self._closing: set[asyncio.Task[None]] = set()
        self.current_id: str | None = None
        self._forks: dict[str, str] = {}  # a session another server writes -> its fork here

    @property
    def index(self) -> SessionIndex:
        if self._index is None:
            self._index = SessionIndex(self.root, in_memory=not self.persist)
            self._index.refresh_from_logs()  # logs are the truth: catch up after a crash
        return self._index

    def mine(self) -> Container[str]:
        """The ids of this user's sessions here, now."""
        return self._owned.ids() if self._owned is not None else frozenset()

    def loaded(self, session_id: str | None) -> Session | None:
        sid = session_id or self.current_id
        return self._sessions.get(sid) if sid else None

    def loaded_count(self) -> int:
        return len(self._sessions)

    def loaded_sessions(self) -> list[Session]:
        return list(self._sessions.values())

    def find_active(self, submission_id: str) -> SubmissionState | None:
        for session in self._sessions.values():
            state = session.active.get(submission_id)
            if state is not None:
                return state
        return None

    def get(self, session_id: str | None) -> Session:
        """The session a submission runs in: the given one, else the current one."""
        if session_id is None:
            if self.current_id is None or self.current_id not in self._sessions:
                return self.new()
            return self._touch(self._sessions[self.current_id])
        session_id = self._forks.get(session_id, session_id)
        if session_id in self._sessions:
            return self._touch(self._sessions[session_id])
        session = self._load(session_id)
        if session is None:
            raise UnknownSession(f"Unknown session {session_id!r}. Use /sessions to list them.")
        if self.current_id is None:
            self.current_id = session.id
        return session

    def _touch(self, session: Session) -> Session:
        self._sessions.move_to_end(session.id)
        return session

    def _load(self, session_id: str) -> Session | None:
        if session_id not in self.mine():
            return None  # not this user's: a log that came with the workspace is data
        try:
            path = slog.log_path(self.root, session_id)
        except ValueError:
            return None  # not a session id at all
        if not path.exists():
            return None
        writer: slog.SessionLog | slog.UnsavedLog
        if self.persist:
            try:
                writer = slog.SessionLog.open(self.root, session_id)  # cuts a torn tail, upgrades an old log
            except slog.LogBusy:
                return self._fork(session_id, path)
            try:
                loaded = writer.read()
            except BaseException:
                writer.close()
                raise
        else:  # read what is there; what follows is kept in memory only
            loaded, writer = slog.read_log(path), slog.UnsavedLog(session_id)
        session = Session(session_id, self.root, self.host, self.index, loaded=loaded, log=writer, persist=self.persist)
        row = self.index.get(session_id)
        if row is not None:
            session.created_at, session.updated_at = row.created_at, row.updated_at
        if row is None or row.message_count != loaded.message_count:  # the index is behind its log
            try:
                self.index.reindex(loaded)
            except sqlite3.Error as exc:
                log.warning("session index behind the log of %s: %s", session_id, exc)
        self._add(session)
        return session

    def _fork(self, session_id: str, path: Path) -> Session:
        """Another server writes `session_id`: a new session here with the same history."""
        loaded = slog.read_log(path)
        fork = Session(uuid.uuid4().hex, self.root, self.host, self.index, loaded=loaded, persist=self.persist)
        fork.forked_from = session_id
        if self._owned is not None:
            self._owned.add(fork.id)
        fork.adopt(loaded.entries)
        self._forks[session_id] = fork.id
        self._add(fork)
        self.host.show_message("warning", fork_notice(session_id, fork.id))
        return fork

    def fork_before(self, loaded: slog.LoadedSession) -> Session:
        """A new session holding `loaded` (part of another's history: edit and resend),
        loaded here but in memory only until `keep_fork` (or gone with `drop`)."""
        fork = Session(uuid.uuid4().hex, self.root, self.host, self.index, loaded=loaded, persist=self.persist)
        self._add(fork)
        return fork

    def keep_fork(self, fork: Session, history: list[slog.Entry]) -> None:
        """The fork is the user's and the current session; its log starts with `history`."""
        if self._owned is not None:
            self._owned.add(fork.id)  # before its log exists, as `new`
        fork.adopt(history)
        self.current_id = fork.id

    def drop(self, session: Session) -> None:
        """A fork that was not kept: forgotten, it never had a log."""
        if self._sessions.get(session.id) is session:
            del self._sessions[session.id]

    def _add(self, session: Session) -> None:
        self._sessions[session.id] = session
        self.evict_idle()

    def evict_idle(self) -> list[str]:
        """Close the least recently used idle sessions beyond `max_idle`; their ids."""
        idle = [s for s in self._sessions.values() if s.idle and s.id != self.current_id]
        evicted = []
        for session in idle[: max(0, len(idle) - self.max_idle)]:
            del self._sessions[session.id]
            evicted.append(session.id)
            task = asyncio.get_running_loop().create_task(session.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        if evicted:
            log.debug("evicted %d idle session(s)", len(evicted))
        return evicted

    def new(self) -> Session:
        session = Session(uuid.uuid4().hex, self.root, self.host, self.index, persist=self.persist)
        if self._owned is not None:
            self._owned.add(session.id)  # before its log exists: every log this server writes is the user's
        self.current_id = session.id
        self._add(session)
        return session

    def resume(self, session_id: str) -> Session:
        session_id = self._forks.get(session_id, session_id)
        session = self._sessions.get(session_id) or self._load(session_id)
        if session is None:
            raise UnknownSession(f"Unknown session {session_id!r}.")
        self.current_id = session.id
        return self._touch(session)

    def info(self, row: SessionRow) -> SessionInfo:
        return row.to_info(self._config().timezone, current=row.id == self.current_id)

    def session_info(self, session: Session) -> SessionInfo:
        row = SessionRow(
            id=session.id,
            title=session.title,
            created_at=session.created_at,
            updated_at=session.updated_at,
            message_count=session.message_count,
            model=session.model,
        )
        return self.info(row)

    def list_infos(self, limit: int) -> list[SessionInfo]:
        mine = self.mine()
        rows = [row for row in self.index.list_sessions(limit) if row.id in mine]
        if len(rows) < limit:  # some of the newest are not the user's: look further
            rows = [row for row in self.index.list_sessions(None) if row.id in mine][:limit]
        infos = [self.info(row) for row in rows]
        current = self.loaded(None)
        if current is not None and not current.persisted:
            infos.insert(0, self.session_info(current))  # a new session, nothing in it yet
        return infos[:limit]

    def resolve_info(self, prefix: str) -> SessionInfo | str:
        current = self.loaded(None)  # listed by /sessions before it has a message: resumable too
        if current is not None and not current.persisted and prefix.strip() and current.id.startswith(prefix.strip()):
            return self.session_info(current)
        found = self.index.resolve(prefix)
        foreign = None
        if isinstance(found, AmbiguousPrefix):
            ours = [c for c in found.candidates if c.id in self.mine()]
            foreign = found.candidates[0] if not ours else None
            found = ours[0] if len(ours) == 1 else (AmbiguousPrefix(found.prefix, ours) if ours else None)
        elif found is not None and found.id not in self.mine():
            found, foreign = None, found
        if found is None and foreign is not None:
            return (
                f"Session {foreign.id[:8]} is in this workspace's .coder/sessions but was not started by you "
                "here (it came with the workspace, or from a coder-ls older than the untrusted-workspace "
                f"gate), so it is not resumed; its log is left as it is: .coder/sessions/{foreign.id}.jsonl"
            )
        if found is None:
            return f"No session matches {prefix!r}. Use /sessions to list them."
        if isinstance(found, AmbiguousPrefix):
            ids = ", ".join(c.id[:8] for c in found.candidates[:5])
            return f"{prefix!r} matches several sessions ({ids}); type more of the id."
        return self.info(found)

    async def close_all(self) -> None:
        for session in list(self._sessions.values()):
            await session.close()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        if self._index is not None:
            self._index.close()
        # the agent shells' network proxy (one per server), started only if a sandbox needed it
        if (proxy := sys.modules.get("coder_ls.guard.netproxy")) is not None:
            await proxy.shutdown()


def fork_notice(session_id: str, fork_id: str) -> str:
    return (
        f"Session {session_id[:8]} is open in another coder-ls (another editor window on this "
        f"workspace), which writes its log. It continues here as a new session, {fork_id[:8]}, "
        "with the same history; what you do here is saved there, and the other window's "
        "session is left to it."
    )
