"""The records of a session log (see `store/log.py`): the header, the entries, and the
session as read back. msgspec structs tagged by `type`; timestamps are UTC epoch seconds."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable

import msgspec

from coder_ls.protocol.messages import Message
from coder_ls.protocol.tasks import TaskState
from coder_ls.protocol.wiretext import CarryingEncoder

LOG_VERSION = 1
SHELL_OUTPUT_CAP = 64 * 1024  # characters of `!cmd` output kept in the log
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class LogError(Exception):
    """A session log cannot be used."""


class CorruptLog(LogError):
    """The header is missing or unreadable (the entries alone are never fatal)."""


class UnsupportedLogVersion(LogError):
    """The log was written by a newer coder-ls."""


class LogBusy(LogError):
    """Another process holds the session's lock: it is that server's to write."""


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

_encoder = CarryingEncoder()  # a text UTF-8 cannot carry is stored shown (protocol/wiretext.py)
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
