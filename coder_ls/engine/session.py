"""A session: the model context, the user's shell and the agent's, its log and its running submissions."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from coder_ls.commands.activation import Touched
from coder_ls.engine.attachments import collapse_pastes
from coder_ls.engine.host import Host
from coder_ls.engine.queue import SessionQueue
from coder_ls.engine.submission import SubmissionState, stamp
from coder_ls.guard.sensitive import Masks
from coder_ls.protocol.events import Event, TodoItem
from coder_ls.protocol.messages import Message, TextBlock, ToolUseBlock
from coder_ls.protocol.results import HistoryItem
from coder_ls.protocol.tasks import TaskState
from coder_ls.store import log as slog
from coder_ls.store.faults import DiskFull, StorageFault, is_disk_full
from coder_ls.store.index import SessionIndex

if TYPE_CHECKING:
    from coder_ls.engine.agentshell import AgentShell
    from coder_ls.engine.bgshells import ShellInfo
    from coder_ls.engine.redactshell import RedactingShell

log = logging.getLogger(__name__)
T = TypeVar("T")
HISTORY_LIMIT = 200  # messages a /resume hands the client for its transcript
CLOSE_WAIT = 10.0  # seconds a closing session waits for its cancelled submissions to clean up


def history_item(message: Message) -> HistoryItem | None:
    """A message as a transcript shows it; tool results are left out, long pastes shown
    as their `[Pasted text #N, L lines]` marker."""
    text = collapse_pastes(message.text())
    tools = [b.name for b in message.content if isinstance(b, ToolUseBlock)]
    if not text and not tools:
        return None
    return HistoryItem(role=message.role, text=text, tools=tools)


class Session:
    def __init__(
        self,
        session_id: str,
        root: Path,
        host: Host,
        index: SessionIndex,
        *,
        loaded: slog.LoadedSession | None = None,
        log: slog.SessionLog | slog.UnsavedLog | None = None,
        persist: bool = True,
    ) -> None:
        self.id = session_id
        self.root = root
        self.host = host
        self.index = index
        self._shell: RedactingShell | None = None  # made at first use (`shell`)
        self._agent_shell: AgentShell | None = None  # made at first use (`agent_shell`)
        self.seq = 0
        self.active: dict[str, SubmissionState] = {}  # queued, running or immediate submissions
        self.queue = SessionQueue()
        self._extensions: dict[type, Any] = {}  # per-session state of other layers (the agent's grants)
        self.todos: list[TodoItem] = []
        self.masks = Masks()  # a sensitive command's arguments, *** in all the session keeps or shows
        self.touched = Touched(root)  # the files the session touched (conditional skills, `activation.py`)
        self.context: list[Message] = []
        self.last_context_tokens = 0  # what the last model step read and wrote (for auto-compaction)
        self.model: str | None = None
        self.provider: str | None = None
        self.effort: str | None = None  # `/effort`: this session's default (None: the configuration's)
        self.title = ""
        self.message_count = 0
        self.created_at = time.time()
        self.updated_at = self.created_at
        self._log: slog.SessionLog | slog.UnsavedLog | None = log
        self._unindexed: list[slog.Entry] = []  # appended to the log, not yet to the index
        self._index_behind = False  # an index update failed: catch up from the log
        self.forked_from: str | None = None  # the session this one continues (its log was another server's)
        self.persist = persist  # False: `.coder/` cannot be written, the log keeps nothing
        self.transcript: deque[HistoryItem] = deque(maxlen=HISTORY_LIMIT)
        self.closed = False
        if loaded is not None:
            self.context = list(loaded.context)
            for entry in loaded.entries:  # every message, compacted or not: activation lasts
                if isinstance(entry, slog.MessageEntry):
                    self.touched.note(entry.message)
            for entry in loaded.entries[-4 * HISTORY_LIMIT :]:
                if isinstance(entry, slog.MessageEntry):
                    self._remember(entry.message)
            self.title = loaded.title or ""
            self.message_count = loaded.message_count
            if loaded.model is not None:
                self.model, self.provider = loaded.model.model, loaded.model.provider

    @property
    def shell(self) -> RedactingShell:
        """The user's `!` shell; no secret value in what it prints. Made (and its module
        imported) at first use: a prompt's first request needs no shell."""
        if self._shell is None:
            from coder_ls.engine.redactshell import RedactingShell

            self._shell = RedactingShell(self.root)
        return self._shell

    @property
    def agent_shell(self) -> AgentShell:
        """The agent's shell, sandboxed; nothing crosses between it and the user's."""
        if self._agent_shell is None:
            from coder_ls.engine.agentshell import AgentShell

            # in a turn (or with one queued) the shell is never put away for being idle
            self._agent_shell = AgentShell(
                self.root, busy=lambda: not self.idle, on_warning=lambda m: self.host.show_message("warning", m)
            )
        return self._agent_shell

    @property
    def idle(self) -> bool:
        return not self.active and not self.queue.busy

    def extension(self, kind: type[T], make: Callable[[], T]) -> T:
        """The session's instance of `kind` (made on first use): state another layer keeps per
        session without the engine knowing its type, e.g. the agent's "Allow for session" grants."""
        found = self._extensions.get(kind)
        if found is None:
            found = self._extensions[kind] = make()
        return found  # type: ignore[no-any-return]

    def find_extension(self, kind: type[T]) -> T | None:
        """The session's instance of `kind` if one was made (`extension`), else None."""
        return self._extensions.get(kind)  # type: ignore[no-any-return]

    # -- events -------------------------------------------------------------------------
    def emit(self, event: Event, submission_id: str) -> None:
        self.seq += 1
        self.host.emit(stamp(self.masks.struct(event), self.id, submission_id, self.seq))

    # -- persistence --------------------------------------------------------------------
    @property
    def persisted(self) -> bool:
        return self._log is not None

    def log(self) -> slog.SessionLog | slog.UnsavedLog:
        if self._log is None:
            if self.persist:
                self._log = slog.SessionLog.create(self.root, self.id, str(self.root))
            else:
                self._log = slog.UnsavedLog(self.id)
            try:
                self.index.upsert_session(
                    self.id,
                    title=self.title,
                    created_at=self.created_at,
                    updated_at=self.updated_at,
                    message_count=self.message_count,
                    model=self.model or "",
                )
            except sqlite3.Error as exc:  # derived data: caught up from the log at the boundary
                log.warning("session index: %s", exc)
                self._index_behind = True
        return self._log

    def adopt(self, entries: list[slog.Entry]) -> None:
        """Start this session's log with another's history (a fork), in one write."""
        self.log().extend(entries)
        self._index_behind = True  # indexed from the new log at the boundary

    def _append(self, entry: slog.Entry) -> None:
        """To the log now; to the index at the submission's boundary (`flush_index`)."""
        self.log().append(entry)
        self._unindexed.append(entry)

    def set_title_from(self, text: str) -> None:
        if self.title:
            return
        title = " ".join(self.masks.text(text).split())[:80]
        self.title = title
        self._append(slog.TitleEntry(title=title, ts=time.time()))

    def _remember(self, message: Message) -> None:
        item = history_item(message)
        if item is not None:
            self.transcript.append(item)

    def record_message(self, message: Message, submission_id: str, *, in_context: bool = True) -> None:
        now = time.time()
        self.touched.note(message)
        if in_context:
            self.context.append(message)  # the model's context keeps the real text
        message = self.masks.struct(message)  # the log and the index never see a secret argument
        self._append(slog.MessageEntry(message=message, submission_id=submission_id, ts=now))
        self._remember(message)
        self.message_count += 1
        self.updated_at = now

    def record_model(self, model: str, provider: str) -> None:
        self.model, self.provider = model, provider
        self._append(slog.ModelEntry(model=model, provider=provider, ts=time.time()))

    def compact(self, summary: str, kept: list[Message] | None = None) -> None:
        """The summary replaces the context (the log keeps the history before it); `kept`
        (the last exchanges, `/compact --keep-last N`) follows it verbatim."""
        kept = list(kept or [])
        self._append(slog.CompactionEntry(summary=summary, kept=kept, ts=time.time()))
        self.context = [Message(role="user", content=[TextBlock(text=summary)]), *kept]
        self.last_context_tokens = 0

    def record_task(self, state: TaskState) -> None:
        """A `/task` changed: its state, appended to the session log (history only)."""
        self._append(slog.TaskEntry(task=state, ts=time.time()))

    def clear_context(self) -> None:
        self.context = []
        self.todos = []
        self.last_context_tokens = 0
        if self._log is not None:
            self._append(slog.ClearEntry(ts=time.time()))

    def flush_index(self) -> StorageFault | None:
        """Bring the index up to the log, in one transaction (at each submission's end).

        The log is the truth: when the update fails (a full disk), nothing appended is lost,
        the row keeps its old `log_size` (a restart re-reads the log) and the next flush
        re-indexes the session from its log. The fault, saying what was kept, is returned.
        """
        if self._log is None or (not self._unindexed and not self._index_behind):
            return None
        try:
            if self._index_behind and isinstance(self._log, slog.SessionLog):
                self.index.reindex(self._log.read())
            else:
                self.index.apply(self.id, self._unindexed, created_at=self.created_at, log_size=self._log.size)
        except sqlite3.Error as exc:
            self._index_behind = True
            log.warning("session index behind the log of %s: %s", self.id, exc)
            kept = (
                f"the session log kept all {self.message_count} messages; the session index (/sessions, "
                "/resume by prefix) is behind and catches up from the log"
            )
            # Anything but a full disk (a lock held too long by another server) is not the
            # user's to act on: the next submission catches up.
            return DiskFull(f"The disk is full ({exc}): {kept} once there is space.") if is_disk_full(exc) else None
        except (OSError, slog.LogError) as exc:  # the log cannot be read back: try again next time
            self._index_behind = True
            log.warning("session index: cannot re-read the log of %s: %s", self.id, exc)
            return None
        self._unindexed.clear()
        self._index_behind = False
        return None

    def sync(self) -> None:
        if self._log is not None and not self._log.closed:
            self._log.sync()

    async def put_away_agent_shell(self) -> None:
        """Before the server itself rewrites the session's files (/undo, /rewind): the agent's
        sandbox holds protected names by mounts that such a write would undo under it, so it
        is put away first (`AgentShell.put_away`); the next agent command starts it again."""
        if self._agent_shell is not None:
            await self._agent_shell.put_away()

    def background_shells(self) -> list[ShellInfo]:
        """The agent's background shells (`/shells`), without starting the agent's shell."""
        shell = self._agent_shell
        return shell.background.infos() if shell is not None else []

    async def end_background_shells(self) -> None:
        """`/new`: the session is left, its background shells end with it."""
        if self._agent_shell is not None:
            await self._agent_shell.background.kill_all()

    async def close(self) -> None:
        """Cancel what runs, close both shells (their background jobs with them) and the log."""
        self.closed = True
        running = list(self.active.values())
        for sub in running:
            sub.cancel()
        if running:  # let their frames record what happened before the log closes
            await asyncio.wait([asyncio.ensure_future(s.finished.wait()) for s in running], timeout=CLOSE_WAIT)
        for shell in (self._shell, self._agent_shell):  # a shell never used was never made
            if shell is not None:
                await shell.close()
        if self._log is not None:
            fault = self.flush_index()
            if fault is not None:
                log.warning("closing session %s: %s", self.id, fault)
            try:
                self._log.sync()
            finally:
                self._log.close()
