"""The session index: `<root>/.coder/index.sqlite` (stdlib sqlite3, WAL).

Derived data only. The JSONL logs are the truth; the index serves `/sessions`, `/resume`
(prefix resolution) and search, and can always be rebuilt from the logs:

- a missing, corrupt or older-schema index is rebuilt when `SessionIndex` opens it;
- `refresh_from_logs()` re-reads only the logs whose size differs from what the index
  recorded (`log_size`), e.g. after a kill -9 between a log append and the index update;
- `rebuild_from_logs()` starts over from every log.

The connection belongs to one thread (the asyncio loop). Writes are autocommit unless
grouped with `batch()`; the engine does one batch per submission (`record()` fits that).
Durability is relaxed on purpose (`synchronous=NORMAL`): whatever is lost is rebuilt.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from coder_ls.protocol.results import SessionInfo
from coder_ls.store.gitignore import ensure_state_dir, state_paths
from coder_ls.store.log import (
    Entry,
    LoadedSession,
    LogError,
    MessageEntry,
    ModelEntry,
    TitleEntry,
    derive_title,
    list_log_ids,
    read_log,
)
from coder_ls.store.timefmt import format_time

SCHEMA_VERSION = 1
_SNIPPET = 60  # characters of context on each side of a search hit

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS sessions (
        id            TEXT PRIMARY KEY,
        title         TEXT NOT NULL DEFAULT '',
        created_at    REAL NOT NULL,
        updated_at    REAL NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0,
        model         TEXT,
        log_size      INTEGER  -- bytes of the log this row reflects (NULL: unknown)
    )""",
    "CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions (updated_at DESC)",
    """CREATE TABLE IF NOT EXISTS messages (
        session_id TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        role       TEXT NOT NULL,
        text       TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID""",
)

_ROW_COLUMNS = "id, title, created_at, updated_at, message_count, model"


class SessionRow(msgspec.Struct, frozen=True):
    id: str
    title: str
    created_at: float  # UTC epoch seconds
    updated_at: float  # UTC epoch seconds
    message_count: int
    model: str | None

    def to_info(self, tz_name: str, *, current: bool = False) -> SessionInfo:
        """The wire form (`SessionInfo`), times shown in `tz_name`."""
        iso, human = format_time(self.updated_at, tz_name)
        return SessionInfo(
            id=self.id,
            title=self.title,
            updated_at=iso,
            updated=human,
            message_count=self.message_count,
            current=current,
        )


class AmbiguousPrefix(msgspec.Struct, frozen=True):
    """`prefix` matches several sessions (the most recent first, at most 10)."""

    prefix: str
    candidates: list[SessionRow]


class SearchHit(msgspec.Struct, frozen=True):
    session_id: str
    seq: int
    role: str
    snippet: str
    title: str
    updated_at: float


class RebuildReport(msgspec.Struct):
    indexed: int = 0  # sessions (re)indexed from their logs
    removed: int = 0  # index rows whose log is gone
    unreadable: list[str] = msgspec.field(default_factory=list)  # logs with a bad header


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _message_text(entry: MessageEntry) -> str:
    return entry.message.text().strip()


class SessionIndex:
    def __init__(self, root: str | os.PathLike[str], *, auto_rebuild: bool = True, in_memory: bool = False) -> None:
        """`in_memory`: `.coder/` cannot be written (the server's degraded mode): the index
        lives in memory, filled from the logs already there, and is gone at exit."""
        if not in_memory:
            ensure_state_dir(root)
        self.root = root
        self.path = state_paths(root).index_path
        self._in_memory = in_memory
        self._depth = 0
        fresh = in_memory or not self.path.exists()
        try:
            self._conn = self._connect()
            fresh = self._ensure_schema() or fresh
        except sqlite3.OperationalError:
            raise  # locked, unreadable, ...: not corruption, leave the file alone
        except sqlite3.DatabaseError:  # not a database / malformed: start over
            with contextlib.suppress(Exception):
                self._conn.close()
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.path}{suffix}")
            self._conn = self._connect()
            self._ensure_schema()
            fresh = True
        if fresh and auto_rebuild:
            self.rebuild_from_logs()

    def _connect(self) -> sqlite3.Connection:
        if self._in_memory:
            return sqlite3.connect(":memory:", isolation_level=None, check_same_thread=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=True)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=2000")
        return conn

    def _ensure_schema(self) -> bool:
        """Create or reset the schema; True if the index was (re)created empty."""
        (version,) = self._conn.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:
            return False
        with self.batch():
            self._conn.execute("DROP TABLE IF EXISTS sessions")
            self._conn.execute("DROP TABLE IF EXISTS messages")
            for statement in _SCHEMA:
                self._conn.execute(statement)
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return True

    # ------------------------------------------------------------------ transactions

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes into one transaction (re-entrant; the outermost one commits)."""
        if self._depth == 0:
            self._conn.execute("BEGIN IMMEDIATE")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                self._conn.execute("ROLLBACK")
            raise
        self._depth -= 1
        if self._depth == 0:
            self._conn.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writes

    def upsert_session(
        self,
        session_id: str,
        *,
        created_at: float,
        updated_at: float | None = None,
        title: str = "",
        message_count: int = 0,
        model: str | None = None,
        log_size: int | None = None,
    ) -> None:
        """Insert or fully replace a session row (its messages are kept)."""
        self._conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, message_count, model, log_size)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET title=excluded.title,"
            " created_at=excluded.created_at, updated_at=excluded.updated_at,"
            " message_count=excluded.message_count, model=excluded.model, log_size=excluded.log_size",
            (
                session_id,
                title,
                created_at,
                created_at if updated_at is None else updated_at,
                message_count,
                model,
                log_size,
            ),
        )

    def touch(
        self, session_id: str, updated_at: float, message_delta: int = 0, *, log_size: int | None = None
    ) -> bool:
        """Bump the last update (never backwards) and the message count; False if unknown.

        Pass the log's size (`SessionLog.size`) so `refresh_from_logs()` can tell this row
        is up to date; without it the row counts as stale and is re-read on refresh.
        """
        cur = self._conn.execute(
            "UPDATE sessions SET updated_at = max(updated_at, ?), message_count = message_count + ?,"
            " log_size = ? WHERE id = ?",
            (updated_at, message_delta, log_size, session_id),
        )
        return cur.rowcount > 0

    def set_title(self, session_id: str, title: str) -> None:
        self._conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))

    def set_model(self, session_id: str, model: str | None) -> None:
        self._conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))

    def add_message(self, session_id: str, role: str, text: str) -> int:
        """Add a message to the search table; returns its sequence number in the session."""
        (seq,) = self._conn.execute(
            "SELECT coalesce(max(seq), -1) + 1 FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        self._conn.execute(
            "INSERT INTO messages (session_id, seq, role, text) VALUES (?, ?, ?, ?)",
            (session_id, seq, role, text),
        )
        return int(seq)

    def record(self, session_id: str, entries: Sequence[Entry], *, log_size: int | None = None) -> None:
        """Apply what a submission appended to the log, in one transaction.

        Messages with text go to search; the count, last update, model and title follow
        the entries (an untitled session takes its first user line as title).
        """
        if not entries:
            return
        with self.batch():
            count = 0
            for entry in entries:
                if isinstance(entry, MessageEntry):
                    count += 1
                    text = _message_text(entry)
                    if text:
                        self.add_message(session_id, entry.message.role, text)
                elif isinstance(entry, ModelEntry):
                    self.set_model(session_id, entry.model)
                elif isinstance(entry, TitleEntry):
                    self.set_title(session_id, entry.title)
            self.touch(session_id, max(e.ts for e in entries), count, log_size=log_size)
            row = self.get(session_id)
            if row is not None and not row.title:
                derived = derive_title(entries)
                if derived:
                    self.set_title(session_id, derived)

    def remove_session(self, session_id: str) -> None:
        with self.batch():
            self._conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self._conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    # ------------------------------------------------------------------ reads

    def list_sessions(self, limit: int | None = 50) -> list[SessionRow]:
        """The sessions, most recently updated first."""
        rows = self._conn.execute(
            f"SELECT {_ROW_COLUMNS} FROM sessions ORDER BY updated_at DESC, id LIMIT ?",
            (-1 if limit is None else limit,),
        ).fetchall()
        return [SessionRow(*row) for row in rows]

    def get(self, session_id: str) -> SessionRow | None:
        row = self._conn.execute(
            f"SELECT {_ROW_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return SessionRow(*row) if row else None

    def resolve(self, prefix: str) -> SessionRow | AmbiguousPrefix | None:
        """The session whose id is `prefix` or uniquely starts with it."""
        prefix = prefix.strip()
        if not prefix:
            return None
        exact = self.get(prefix)
        if exact is not None:
            return exact
        rows = self._conn.execute(
            f"SELECT {_ROW_COLUMNS} FROM sessions WHERE substr(id, 1, ?) = ?"
            " ORDER BY updated_at DESC, id LIMIT 10",
            (len(prefix), prefix),
        ).fetchall()
        if not rows:
            return None
        if len(rows) == 1:
            return SessionRow(*rows[0])
        return AmbiguousPrefix(prefix=prefix, candidates=[SessionRow(*r) for r in rows])

    def search(self, text: str, limit: int = 20) -> list[SearchHit]:
        """Messages containing `text` (case-insensitive for ASCII), recent sessions first."""
        needle = text.strip()
        if not needle:
            return []
        rows = self._conn.execute(
            "SELECT m.session_id, m.seq, m.role, m.text, s.title, s.updated_at"
            " FROM messages m JOIN sessions s ON s.id = m.session_id"
            " WHERE m.text LIKE ? ESCAPE '\\' ORDER BY s.updated_at DESC, m.seq LIMIT ?",
            (f"%{_escape_like(needle)}%", limit),
        ).fetchall()
        return [
            SearchHit(
                session_id=sid,
                seq=seq,
                role=role,
                snippet=_snippet(body, needle),
                title=title,
                updated_at=updated,
            )
            for sid, seq, role, body, title, updated in rows
        ]

    def log_sizes(self) -> dict[str, int | None]:
        return dict(self._conn.execute("SELECT id, log_size FROM sessions").fetchall())

    # ------------------------------------------------------------------ from the logs

    def _index_loaded(self, loaded: LoadedSession) -> None:
        sid = loaded.id
        self._conn.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
        rows: list[tuple[str, int, str, str]] = []
        for entry in loaded.entries:
            if isinstance(entry, MessageEntry):
                text = _message_text(entry)
                if text:
                    rows.append((sid, len(rows), entry.message.role, text))
        self._conn.executemany("INSERT INTO messages (session_id, seq, role, text) VALUES (?, ?, ?, ?)", rows)
        self.upsert_session(
            sid,
            created_at=loaded.header.created_at,
            updated_at=loaded.updated_at,
            title=loaded.display_title,
            message_count=loaded.message_count,
            model=loaded.model.model if loaded.model else None,
            log_size=loaded.size,
        )

    def _reindex(self, ids: Iterable[str], report: RebuildReport) -> None:
        paths = state_paths(self.root)
        for sid in ids:
            try:
                loaded = read_log(paths.session_log(sid))
            except (OSError, LogError):
                report.unreadable.append(sid)
                continue
            if loaded.id != sid:  # a header naming another session: not this file's truth
                report.unreadable.append(sid)
                continue
            self._index_loaded(loaded)
            report.indexed += 1

    def rebuild_from_logs(self) -> RebuildReport:
        """Drop everything and index every log again."""
        report = RebuildReport()
        on_disk = list_log_ids(self.root)
        with self.batch():
            report.removed = len(self.log_sizes().keys() - set(on_disk))
            self._conn.execute("DELETE FROM messages")
            self._conn.execute("DELETE FROM sessions")
            self._reindex(on_disk, report)
        return report

    def refresh_from_logs(self) -> RebuildReport:
        """Re-read only the logs the index is behind on; drop rows whose log is gone."""
        report = RebuildReport()
        known = self.log_sizes()
        sessions_dir = state_paths(self.root).sessions_dir
        stale: list[str] = []
        on_disk = set(list_log_ids(self.root))
        for sid in on_disk:
            try:
                size = os.stat(sessions_dir / f"{sid}.jsonl").st_size
            except OSError:
                continue
            if sid not in known or known[sid] != size:
                stale.append(sid)
        with self.batch():
            for sid in known.keys() - on_disk:
                self.remove_session(sid)
                report.removed += 1
            self._reindex(sorted(stale), report)
        return report


def _snippet(body: str, needle: str) -> str:
    at = body.lower().find(needle.lower())
    if at < 0:
        at = 0
    start = max(0, at - _SNIPPET)
    end = min(len(body), at + len(needle) + _SNIPPET)
    text = " ".join(body[start:end].split())
    return ("…" if start > 0 else "") + text + ("…" if end < len(body) else "")
