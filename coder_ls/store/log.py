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

Versions: `MIGRATIONS[n]` turns the raw records (header first) of a version-`n` log into
version `n + 1`. Readers migrate in memory; `SessionLog.open()` rewrites an old log
atomically before appending to it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from coder_ls.protocol.tasks import TaskState
from coder_ls.store.gitignore import ensure_sessions_dir, fsync_dir, state_paths, write_atomic

LOG_VERSION = 1
SHELL_OUTPUT_CAP = 64 * 1024  # characters of `!cmd` output kept in the log
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_TAIL_CHUNK = 64 * 1024


class LogError(Exception):
    """A session log cannot be used."""


class CorruptLog(LogError):
    """The header is missing or unreadable (the entries alone are never fatal)."""


class UnsupportedLogVersion(LogError):
    """The log was written by a newer coder-ls."""


# --------------------------------------------------------------------------- records


class Header(msgspec.Struct, tag_field="type", tag="header", rename="camel", kw_only=True):
    version: int
    id: str
    created_at: float
    cwd: str


class _Entry(msgspec.Struct, tag_field="type", rename="camel", kw_only=True):
    ts: float = msgspec.field(default_factory=time.time)


class MessageEntry(_Entry, tag="message"):
    """A message of the model context: user text, assistant turn, or tool results."""

    message: Message
    submission_id: str | None = None


class ClearEntry(_Entry, tag="clear"):
    """`/clear`: the context is empty from here on (earlier entries remain as history)."""


class CompactionEntry(_Entry, tag="compaction"):
    """A summary that replaces everything before it in the context, followed by the
    exchanges `/compact --keep-last N` kept verbatim."""

    summary: str
    kept: list[Message] = msgspec.field(default_factory=list)


class ModelEntry(_Entry, tag="model"):
    model: str
    provider: str = ""


class TitleEntry(_Entry, tag="title"):
    title: str


class ShellEntry(_Entry, tag="shell"):
    """What a `!cmd` ran (history only; not part of the model context)."""

    command: str
    exit_code: int | None  # None: killed or timed out
    output: str = ""
    submission_id: str | None = None
    truncated: bool = False

    def __post_init__(self) -> None:
        if not self.truncated and len(self.output) > SHELL_OUTPUT_CAP:
            half = SHELL_OUTPUT_CAP // 2
            dropped = len(self.output) - 2 * half
            marker = f"\n[... {dropped} characters not logged ...]\n"
            self.output = self.output[:half] + marker + self.output[-half:]
            self.truncated = True


class TaskEntry(_Entry, tag="task"):
    """A `/task`'s state after one of its changes (contract section 14; history only)."""

    task: TaskState
    version: int = 1


Entry = MessageEntry | ClearEntry | CompactionEntry | ModelEntry | TitleEntry | ShellEntry | TaskEntry

_encoder = msgspec.json.Encoder()
_entry_decoder = msgspec.json.Decoder(Entry)
_entries_decoder = msgspec.json.Decoder(list[Entry])
_header_decoder = msgspec.json.Decoder(Header)


class LoadedSession(msgspec.Struct, kw_only=True):
    """A log as read back: the full history and the derived model context."""

    header: Header
    entries: list[Entry]
    context: list[Message]  # after the last /clear; a compaction summary comes first
    model: ModelEntry | None
    title: str | None  # the last TitleEntry, if any
    message_count: int  # every MessageEntry in the history
    updated_at: float  # ts of the last entry (the header's createdAt when there is none)
    skipped_lines: int = 0  # corrupt lines skipped in the middle of the file
    torn_tail: bool = False  # a partial last line (a crash mid-write) was ignored
    size: int = 0  # bytes of whole lines (what `open()` keeps)

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def display_title(self) -> str:
        """The title, else the first line of the first user text, else ''."""
        return self.title if self.title else derive_title(self.entries)


def derive_title(entries: Iterable[Entry], limit: int = 80) -> str:
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.message.role == "user":
            text = entry.message.text().strip()
            if text:
                line = text.splitlines()[0].strip()
                return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


# --------------------------------------------------------------------------- migrations

RawRecord = dict[str, Any]
Migration = Callable[[list[RawRecord]], list[RawRecord]]


def _v0_to_v1(records: list[RawRecord]) -> list[RawRecord]:
    """v0 (prototype logs): header without `version`, `created` as ISO text, `workdir`;
    messages as `{"type":"msg","role","text"}`; `{"type":"model","name"}`."""
    from coder_ls.store.timefmt import parse_iso

    head, *rest = records
    created: Any = head.get("createdAt", head.get("created")) or 0.0
    header: RawRecord = {
        "type": "header",
        "id": head["id"],
        "createdAt": parse_iso(created) if isinstance(created, str) else float(created),
        "cwd": head.get("cwd", head.get("workdir", "")),
    }
    out = [header]
    for rec in rest:
        kind = rec.get("type")
        ts = rec.get("ts", header["createdAt"])
        if kind == "msg":
            message = {"role": rec.get("role"), "content": [{"type": "text", "text": rec.get("text", "")}]}
            out.append({"type": "message", "message": message, "submissionId": None, "ts": ts})
        elif kind == "model":
            out.append({"type": "model", "model": rec.get("name", ""), "provider": "", "ts": ts})
        else:  # clear, title: unchanged
            out.append(rec)
    return out


MIGRATIONS: dict[int, Migration] = {0: _v0_to_v1}


def migrate(records: list[RawRecord]) -> list[RawRecord]:
    """Raw records (header first) of any known version -> the current version. Pure."""
    version = records[0].get("version", 0)
    if not isinstance(version, int) or version > LOG_VERSION:
        raise UnsupportedLogVersion(f"log version {version!r}; this coder-ls reads up to {LOG_VERSION}")
    while version < LOG_VERSION:
        records = MIGRATIONS[version](records)
        version += 1
        records[0] = {**records[0], "version": version}
    return records


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


def read_log(path: str | os.PathLike[str]) -> LoadedSession:
    """Read a log file (no lock, no repair)."""
    with open(path, "rb") as f:
        return parse_log(f.read())


def log_path(root: str | os.PathLike[str], session_id: str) -> Path:
    check_session_id(session_id)
    return state_paths(root).session_log(session_id)


def list_log_ids(root: str | os.PathLike[str]) -> list[str]:
    """Ids of every session log under `<root>/.coder/sessions/`."""
    sessions = state_paths(root).sessions_dir
    try:
        names = os.listdir(sessions)
    except FileNotFoundError:
        return []
    return sorted(n[: -len(".jsonl")] for n in names if n.endswith(".jsonl") and not n.startswith("."))


def check_session_id(session_id: str) -> None:
    if not _SESSION_ID.fullmatch(session_id) or ".." in session_id:
        raise ValueError(f"invalid session id {session_id!r}")


# --------------------------------------------------------------------------- writing


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _committed_size(path: Path) -> int:
    """Length of the file up to and including its last newline."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        pos = end
        while pos > 0:
            start = max(0, pos - _TAIL_CHUNK)
            f.seek(start)
            chunk = f.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                return start + nl + 1
            pos = start
        return 0


class SessionLog:
    """The writer of one session's log (one per session, on the engine's thread)."""

    def __init__(self, path: Path, session_id: str, fd: int, size: int) -> None:
        self.path = path
        self.session_id = session_id
        self._fd: int | None = fd
        self._size = size

    @classmethod
    def create(
        cls, root: str | os.PathLike[str], session_id: str, cwd: str, *, created_at: float | None = None
    ) -> SessionLog:
        """A new log with its header, durable on return. `FileExistsError` if the id is taken."""
        path = log_path(root, session_id)
        ensure_sessions_dir(root)
        created = time.time() if created_at is None else created_at
        header = Header(version=LOG_VERSION, id=session_id, created_at=created, cwd=cwd)
        line = _encoder.encode(header) + b"\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_all(fd, line)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        fsync_dir(path.parent)
        return cls(path, session_id, fd, len(line))

    @classmethod
    def open(cls, root: str | os.PathLike[str], session_id: str) -> SessionLog:
        """Open an existing log for appending: cut a torn tail, upgrade an old version."""
        path = log_path(root, session_id)
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
            write_atomic(path, data)
        size = _committed_size(path)
        if size != path.stat().st_size:
            os.truncate(path, size)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        return cls(path, session_id, fd, size)

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
        fd = self._fileno()
        try:
            _write_all(fd, data)
        except BaseException:
            # A partial line (ENOSPC, signal) must not glue itself to the next append.
            try:
                os.ftruncate(fd, self._size)
            except OSError:
                pass
            raise
        self._size += len(data)

    def sync(self) -> None:
        """Make everything appended so far durable (call at each submission boundary)."""
        os.fsync(self._fileno())

    def read(self) -> LoadedSession:
        return read_log(self.path)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

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
