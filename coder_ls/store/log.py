"""The session log: one append-only JSONL file per session, `<root>/.coder/sessions/<id>.jsonl`.

The log is the truth; the sqlite index is derived from it and can be rebuilt.

Format: the first line is a versioned header
`{"type":"header","version":1,"id":...,"createdAt":...,"cwd":...}`; every other line is
one entry, a msgspec struct tagged by `type`. Timestamps are UTC epoch seconds (float).

Durability: every append is a single `write()` of a whole line on an `O_APPEND`
descriptor (no user-space buffer to flush), and `sync()` fsyncs; the engine calls it at
each submission boundary, so a SIGKILL or power loss costs at most the submission in
flight. A crash mid-write leaves a torn last line: readers ignore it and `open()` cuts it
off before appending. A corrupt line elsewhere is skipped and counted, never fatal.

Versions (`store/migrations.py`): readers migrate in memory; `SessionLog.open()` rewrites
an old log atomically before appending to it. Segments and the one-writer lock:
`store/segments.py`; a full disk or a file-size limit: `store/faults.py`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import msgspec

from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from coder_ls.store.faults import is_too_large, raise_fault
from coder_ls.store.gitignore import ensure_sessions_dir, fsync_dir, state_paths, write_state_file
from coder_ls.store.migrations import MIGRATIONS, RawRecord, migrate
from coder_ls.store.records import (
    _SESSION_ID,
    LOG_VERSION,
    SHELL_OUTPUT_CAP,
    ClearEntry,
    CompactionEntry,
    CorruptLog,
    Entry,
    Header,
    LoadedSession,
    LogBusy,
    LogError,
    MessageEntry,
    ModelEntry,
    ShellEntry,
    TaskEntry,
    TitleEntry,
    UnsupportedLogVersion,
    _encoder,
    _entries_decoder,
    _entry_decoder,
    _header_decoder,
    derive_title,
)
from coder_ls.store.segments import (
    SEGMENT_BYTES,
    committed_size,
    compress_in_background,
    read_segments,
    segment_path,
    segment_paths,
    text_size,
    try_lock,
    write_all,
)

__all__ = [  # the records and migrations live in their own modules; the log's readers import them here
    "LOG_VERSION",
    "MIGRATIONS",
    "SHELL_OUTPUT_CAP",
    "ClearEntry",
    "CompactionEntry",
    "CorruptLog",
    "Entry",
    "Header",
    "LoadedSession",
    "LogBusy",
    "LogError",
    "MessageEntry",
    "ModelEntry",
    "RawRecord",
    "ShellEntry",
    "TaskEntry",
    "TitleEntry",
    "UnsupportedLogVersion",
    "derive_title",
    "migrate",
]

# --------------------------------------------------------------------------- reading


def parse_log(data: bytes) -> LoadedSession:
    """Parse the bytes of a log. Raises `CorruptLog` / `UnsupportedLogVersion` (header only)."""
    last_nl = data.rfind(b"\n")
    torn = last_nl + 1 < len(data)
    body = data[: last_nl + 1]
    first_nl = body.find(b"\n")
    if first_nl < 0:
        raise CorruptLog("no complete header line")
    try:
        raw_header = msgspec.json.decode(body[:first_nl])
    except msgspec.DecodeError as exc:
        raise CorruptLog(f"unreadable header: {exc}") from exc
    if not isinstance(raw_header, dict) or raw_header.get("type") != "header" or "id" not in raw_header:
        raise CorruptLog("the first line is not a session header")
    rest = body[first_nl + 1 :]
    if raw_header.get("version", 0) == LOG_VERSION:
        try:
            header = _header_decoder.decode(body[:first_nl])
        except msgspec.DecodeError as exc:
            raise CorruptLog(f"bad header: {exc}") from exc
        entries, skipped = _decode_entries(rest)
    else:
        header, entries, skipped = _decode_migrated(raw_header, rest)
    return _load(header, entries, skipped=skipped, torn=torn, size=len(body))


def _decode_entries(rest: bytes) -> tuple[list[Entry], int]:
    if not rest:
        return [], 0
    try:  # fast path: the whole file as one JSON array (lines never contain raw newlines)
        return _entries_decoder.decode(b"[" + rest[:-1].replace(b"\n", b",") + b"]"), 0
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    entries: list[Entry] = []
    skipped = 0
    for line in rest.split(b"\n"):
        if not line.strip():
            continue
        try:
            entries.append(_entry_decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            skipped += 1
    return entries, skipped


def _decode_migrated(raw_header: RawRecord, rest: bytes) -> tuple[Header, list[Entry], int]:
    records: list[RawRecord] = [raw_header]
    skipped = 0
    for line in rest.split(b"\n"):
        if not line.strip():
            continue
        try:
            rec = msgspec.json.decode(line)
        except msgspec.DecodeError:
            skipped += 1
            continue
        if isinstance(rec, dict):
            records.append(rec)
        else:
            skipped += 1
    records = migrate(records)
    try:
        header = msgspec.convert(records[0], Header)
    except msgspec.ValidationError as exc:
        raise CorruptLog(f"bad header after migration: {exc}") from exc
    entries: list[Entry] = []
    for rec in records[1:]:
        try:
            entries.append(msgspec.convert(rec, Entry))  # type: ignore[arg-type]
        except msgspec.ValidationError:
            skipped += 1
    return header, entries, skipped


INTERRUPTED_RESULT = "(no result: the server stopped before this tool call finished)"


def answer_tool_calls(context: list[Message]) -> list[Message]:
    """The context with every tool call answered and every tool result asked for, as the
    Messages API requires: a log cut short (the server killed while a tool ran) ends with
    a call that has no result; it gets an error result saying so. A result whose call is
    not in the assistant message just before it is dropped."""
    out: list[Message] = []
    asked: set[str] = set()  # tool_use ids of the last assistant message
    pending: list[str] = []  # of those, not answered yet
    for message in context:
        if message.role == "assistant":
            if pending:
                out.append(_interrupted(pending))
            asked = {b.id for b in message.content if isinstance(b, ToolUseBlock)}
            pending = [b.id for b in message.content if isinstance(b, ToolUseBlock)]
            out.append(message)
            continue
        content = [b for b in message.content if not isinstance(b, ToolResultBlock) or b.tool_use_id in asked]
        answered = {b.tool_use_id for b in content if isinstance(b, ToolResultBlock)}
        pending = [p for p in pending if p not in answered]
        asked -= answered
        if content:
            out.append(message if len(content) == len(message.content) else Message(message.role, content))
    if pending:
        out.append(_interrupted(pending))
    return out


def _interrupted(ids: list[str]) -> Message:
    return Message("user", [ToolResultBlock(tool_use_id=i, content=INTERRUPTED_RESULT, is_error=True) for i in ids])


def _load(header: Header, entries: list[Entry], *, skipped: int, torn: bool, size: int) -> LoadedSession:
    context: list[Message] = []
    summary: str | None = None
    model: ModelEntry | None = None
    title: str | None = None
    count = 0
    for entry in entries:
        if isinstance(entry, MessageEntry):
            context.append(entry.message)
            count += 1
        elif isinstance(entry, ClearEntry):
            context = []
            summary = None
        elif isinstance(entry, CompactionEntry):
            context = list(entry.kept)
            summary = entry.summary
        elif isinstance(entry, ModelEntry):
            model = entry
        elif isinstance(entry, TitleEntry):
            title = entry.title
    if summary is not None:
        context.insert(0, Message(role="user", content=[TextBlock(text=summary)]))
    context = answer_tool_calls(context)
    return LoadedSession(
        header=header,
        entries=entries,
        context=context,
        model=model,
        title=title,
        message_count=count,
        updated_at=entries[-1].ts if entries else header.created_at,
        skipped_lines=skipped,
        torn_tail=torn,
        size=size,
    )


def load_entries(header: Header, entries: list[Entry]) -> LoadedSession:
    """A history replayed as a log's is (a fork's, made from part of another log)."""
    return _load(header, entries, skipped=0, torn=False, size=0)


def read_log(path: str | os.PathLike[str]) -> LoadedSession:
    """Read a log, every segment of it (no lock, no repair)."""
    return parse_log(read_segments(Path(path)))


def log_path(root: str | os.PathLike[str], session_id: str) -> Path:
    check_session_id(session_id)
    return state_paths(root).session_log(session_id)


def list_log_ids(root: str | os.PathLike[str]) -> list[str]:
    """Ids of every session log under `<root>/.coder/sessions/`."""
    sessions = state_paths(root).sessions_dir
    try:
        names = os.listdir(sessions)
    except (FileNotFoundError, NotADirectoryError):  # none yet, or `.coder` is a file (degraded mode)
        return []
    return sorted(n[: -len(".jsonl")] for n in names if n.endswith(".jsonl") and not n.startswith("."))


def check_session_id(session_id: str) -> None:
    if not _SESSION_ID.fullmatch(session_id) or ".." in session_id:
        raise ValueError(f"invalid session id {session_id!r}")


# --------------------------------------------------------------------------- writing


def _lock(path: Path) -> int:
    fd = try_lock(path)
    if fd is None:
        raise LogBusy(f"{path.name} is being written by another coder-ls")
    return fd


class SessionLog:
    """The writer of one session's log (one per session, on the engine's thread)."""

    def __init__(
        self, path: Path, session_id: str, fd: int, size: int, *, lock: int, segment: int = 0, segment_size: int = -1
    ) -> None:
        self.path = path  # the first segment
        self.session_id = session_id
        self._fd: int | None = fd
        self._lock: int | None = lock
        self._size = size  # every segment
        self._segment = segment  # the one appended to
        self._segment_size = size if segment_size < 0 else segment_size
        self.segment_bytes = SEGMENT_BYTES
        self._compressing: list[threading.Thread] = []

    @classmethod
    def create(
        cls, root: str | os.PathLike[str], session_id: str, cwd: str, *, created_at: float | None = None
    ) -> SessionLog:
        """A new log with its header, durable on return. `FileExistsError` if the id is taken."""
        path = log_path(root, session_id)
        created = time.time() if created_at is None else created_at
        header = Header(version=LOG_VERSION, id=session_id, created_at=created, cwd=cwd)
        line = _encoder.encode(header) + b"\n"
        try:
            ensure_sessions_dir(root)
            lock = _lock(path)
        except OSError as exc:
            raise_fault(exc, path, "the session was not created")
            raise
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        except BaseException:
            os.close(lock)
            raise
        try:
            write_all(fd, line)
            os.fsync(fd)
            fsync_dir(path.parent)
        except BaseException as exc:
            os.close(fd)
            os.close(lock)
            if isinstance(exc, OSError):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                raise_fault(exc, path, "the session was not created")
                raise
            raise
        return cls(path, session_id, fd, len(line), lock=lock)

    @classmethod
    def open(cls, root: str | os.PathLike[str], session_id: str) -> SessionLog:
        """Open an existing log for appending: cut a torn tail, upgrade an old version.
        `LogBusy` when another server holds the session's lock."""
        path = log_path(root, session_id)
        if not path.exists():
            raise FileNotFoundError(path)
        lock = _lock(path)
        try:
            return cls._open_locked(path, session_id, lock)
        except BaseException:
            os.close(lock)
            raise

    @classmethod
    def _open_locked(cls, path: Path, session_id: str, lock: int) -> SessionLog:
        with open(path, "rb") as f:
            first = f.readline()
        if not first.endswith(b"\n"):
            raise CorruptLog(f"{path}: no complete header line")
        try:
            raw = msgspec.json.decode(first)
        except msgspec.DecodeError as exc:
            raise CorruptLog(f"{path}: unreadable header: {exc}") from exc
        if not isinstance(raw, dict) or raw.get("type") != "header":
            raise CorruptLog(f"{path}: the first line is not a session header")
        if raw.get("version", 0) != LOG_VERSION:
            loaded = read_log(path)  # migrates, or raises UnsupportedLogVersion
            data = b"".join(_encoder.encode(r) + b"\n" for r in [loaded.header, *loaded.entries])
            write_state_file(path, data)
        segments = segment_paths(path)
        last = segments[-1]
        size = committed_size(last)
        if size != last.stat().st_size:
            os.truncate(last, size)
        before = sum(text_size(p) for p in segments[:-1])
        fd = os.open(last, os.O_WRONLY | os.O_APPEND)
        return cls(path, session_id, fd, before + size, lock=lock, segment=len(segments) - 1, segment_size=size)

    @property
    def size(self) -> int:
        """Bytes written so far (whole lines only)."""
        return self._size

    @property
    def closed(self) -> bool:
        return self._fd is None

    def _fileno(self) -> int:
        if self._fd is None:
            raise ValueError(f"session log {self.session_id} is closed")
        return self._fd

    def append(self, entry: Entry) -> None:
        """Append one entry: one `write()` of a whole line (no fsync: see `sync()`)."""
        self._write(_encoder.encode(entry) + b"\n")

    def extend(self, entries: Iterable[Entry]) -> None:
        """Append several entries in one `write()`."""
        data = b"".join(_encoder.encode(e) + b"\n" for e in entries)
        if data:
            self._write(data)

    def _write(self, data: bytes) -> None:
        try:
            self._write_segment(data)
        except OSError as exc:
            if not is_too_large(exc) or self._segment_size == 0:
                raise_fault(exc, self.path, "this entry was not kept; everything before it was")
                raise
            try:
                self._next_segment()  # EFBIG: the file-size limit; go on in a new segment
                self._write_segment(data)
            except OSError as again:
                raise_fault(again, self.path, "this entry was not kept; everything before it was")
                raise
        if self._segment_size >= self.segment_bytes:  # a long session: close this one, compress it
            closed = segment_path(self.path, self._segment)
            with contextlib.suppress(OSError):  # could not move on: stay in this one
                self._next_segment()
                if self._segment > 1:  # segment 0 (the header) stays plain
                    self._compressing.append(compress_in_background(closed))

    def _write_segment(self, data: bytes) -> None:
        fd = self._fileno()
        try:
            write_all(fd, data)
        except BaseException:
            # A partial line (ENOSPC, EFBIG, signal) must not glue itself to the next append.
            try:
                os.ftruncate(fd, self._segment_size)
            except OSError:
                pass
            raise
        self._size += len(data)
        self._segment_size += len(data)

    def _next_segment(self) -> None:
        """Close the current segment (synced) and append to a new, empty one."""
        fd = self._fileno()
        os.fsync(fd)
        path = segment_path(self.path, self._segment + 1)
        new = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        fsync_dir(path.parent)
        os.close(fd)
        self._fd, self._segment, self._segment_size = new, self._segment + 1, 0

    @property
    def segments(self) -> int:
        return self._segment + 1

    def sync(self) -> None:
        """Make everything appended so far durable (call at each submission boundary)."""
        os.fsync(self._fileno())

    def read(self) -> LoadedSession:
        return read_log(self.path)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
        for thread in self._compressing:
            thread.join()
        if self._lock is not None:
            lock, self._lock = self._lock, None
            os.close(lock)  # the session is free for another server

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SessionLog({self.session_id!r}, size={self._size}, closed={self.closed})"


class UnsavedLog:
    """The writer of a session that is not persisted (`.coder/` cannot be written: the
    server's degraded mode): it keeps nothing; the session lives in memory only."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._closed = False

    @property
    def size(self) -> int:
        return 0

    @property
    def closed(self) -> bool:
        return self._closed

    def append(self, entry: Entry) -> None:
        pass

    def extend(self, entries: Iterable[Entry]) -> None:
        pass

    def sync(self) -> None:
        pass

    def close(self) -> None:
        self._closed = True
