"""The sessions one server holds: the current one, loaded ones, and those on disk."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from coder_ls.engine.host import Host
from coder_ls.engine.session import Session
from coder_ls.engine.submission import SubmissionState
from coder_ls.protocol.config import Config
from coder_ls.protocol.results import SessionInfo
from coder_ls.store import log as slog
from coder_ls.store.index import AmbiguousPrefix, SessionIndex, SessionRow


class UnknownSession(Exception):
    pass


class SessionManager:
    def __init__(self, root: Path, host: Host, config: Callable[[], Config]) -> None:
        self.root = root
        self.host = host
        self._config = config
        self._index: SessionIndex | None = None
        self._sessions: dict[str, Session] = {}
        self.current_id: str | None = None

    @property
    def index(self) -> SessionIndex:
        if self._index is None:
            self._index = SessionIndex(self.root)
            self._index.refresh_from_logs()  # logs are the truth: catch up after a crash
        return self._index

    def loaded(self, session_id: str | None) -> Session | None:
        sid = session_id or self.current_id
        return self._sessions.get(sid) if sid else None

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
            return self._sessions[self.current_id]
        if session_id in self._sessions:
            return self._sessions[session_id]
        session = self._load(session_id)
        if session is None:
            raise UnknownSession(f"Unknown session {session_id!r}. Use /sessions to list them.")
        if self.current_id is None:
            self.current_id = session.id
        return session

    def _load(self, session_id: str) -> Session | None:
        if not slog.log_path(self.root, session_id).exists():
            return None
        loaded = slog.SessionLog.open(self.root, session_id).read()
        session = Session(session_id, self.root, self.host, self.index, loaded=loaded)
        row = self.index.get(session_id)
        if row is not None:
            session.created_at, session.updated_at = row.created_at, row.updated_at
        self._sessions[session_id] = session
        return session

    def new(self) -> Session:
        session = Session(uuid.uuid4().hex, self.root, self.host, self.index)
        self._sessions[session.id] = session
        self.current_id = session.id
        return session

    def resume(self, session_id: str) -> Session:
        session = self._sessions.get(session_id) or self._load(session_id)
        if session is None:
            raise UnknownSession(f"Unknown session {session_id!r}.")
        self.current_id = session.id
        return session

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
        infos = [self.info(row) for row in self.index.list_sessions(limit)]
        current = self.loaded(None)
        if current is not None and not current.persisted:
            infos.insert(0, self.session_info(current))  # a new session, nothing in it yet
        return infos[:limit]

    def resolve_info(self, prefix: str) -> SessionInfo | str:
        found = self.index.resolve(prefix)
        if found is None:
            return f"No session matches {prefix!r}. Use /sessions to list them."
        if isinstance(found, AmbiguousPrefix):
            ids = ", ".join(c.id[:8] for c in found.candidates[:5])
            return f"{prefix!r} matches several sessions ({ids}); type more of the id."
        return self.info(found)

    async def close_all(self) -> None:
        for session in list(self._sessions.values()):
            await session.close()
        if self._index is not None:
            self._index.close()
