"""`/diff turn [N]` and `/rewind` (contract section 19): a session's submissions, what each
changed, and going back to before one of them.

Submissions are numbered from the session log (`store/submissions.py`); what each changed
comes from the undo records (`history/checkpoints.py`: before/after snapshots of the whole
workspace, so a shell command's side effects are in them too).

`/rewind N --code` undoes this session's records from the newest back to submission N's, one
by one through `/undo`'s own path (only paths that still hold what the submission left;
the others are kept and listed as conflicts). `--conversation` cuts the model context back
to what it was just before submission N (a compaction entry in the log whose kept messages
are that context, after a note; everything after stays in the log and in `/export`).

Edit and resend (contract section 22, `coder.input {text, replaces}`, `Resend` below) forks
the session before a submission and takes the files back by the same `undo_since`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coder_ls.engine.frame import Planner, Task, TaskContext
from coder_ls.guard.origins import resend_refusal
from coder_ls.history.checkpoints import Checkpoints, UndoUnavailable
from coder_ls.protocol.actions import DiffTurn, Rewind
from coder_ls.protocol.events import Notice, SessionChanged
from coder_ls.protocol.ops import UserInput
from coder_ls.protocol.results import DiffData, ErrorInfo, FileChange, RewindData, SubmissionInfo
from coder_ls.store import log as slog
from coder_ls.store.submissions import LoggedSubmission, context_before, history_before, list_submissions
from coder_ls.store.timefmt import format_time

if TYPE_CHECKING:
    from coder_ls.engine.session import Session
    from coder_ls.engine.sessions import SessionManager

CHANGE_FILES = 50  # files of `/diff turn` sent whole for a diff editor, at most
CHANGE_BYTES = 512 * 1024  # ... each side of each at most (larger or binary: the unified diff only)
REWIND_NOTE = (
    "The user rewound the conversation to before their submission {index} with /rewind: what "
    "came after it is no longer part of this conversation."
)


def _logged(ctx: TaskContext) -> slog.LoadedSession | None:
    return logged(ctx.session)


def logged(session: Session) -> slog.LoadedSession | None:
    """The session's log as read back (None: nothing kept, or kept in memory only)."""
    log = session.log() if session.persisted else None
    return log.read() if isinstance(log, slog.SessionLog) else None


def _infos(ctx: TaskContext, subs: list[LoggedSubmission]) -> list[SubmissionInfo]:
    files: dict[str, list[str]] = {}
    for rec in ctx.engine.checkpoints.records():
        files.setdefault(rec.submission_id, []).extend(
            p for p in rec.paths if p not in files.get(rec.submission_id, [])
        )
    tz = ctx.engine.config.timezone
    return [
        SubmissionInfo(index=s.index, submission_id=s.submission_id, time=format_time(s.ts, tz)[1], text=s.text,
                       files=files.get(s.submission_id, []))
        for s in subs
    ]  # fmt: skip


def _pick(subs: list[LoggedSubmission], index: int | None, what: str) -> LoggedSubmission | str:
    if not subs:
        return f"{what}: this session has no submission yet."
    if index is None:
        return subs[-1]
    if not 1 <= index <= len(subs):
        return f"{what}: no submission {index}; this session has 1 to {len(subs)} (/rewind lists them)."
    return subs[index - 1]


async def _changes(checkpoints: Checkpoints, before: str, after: str, files: list[str]) -> list[FileChange]:
    out: list[FileChange] = []
    for rel in files[:CHANGE_FILES]:
        sides = [await checkpoints.show(before, rel), await checkpoints.show(after, rel)]
        if any(s is not None and (len(s) > CHANGE_BYTES or b"\0" in s[:8192]) for s in sides):
            continue
        text = [s.decode("utf-8", errors="replace") if s is not None else None for s in sides]
        out.append(FileChange(path=rel, before=text[0], after=text[1]))
    return out


@dataclass
class DiffTurnTask:
    action: DiffTurn
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        b = ctx.result
        loaded = _logged(ctx)
        picked = _pick(list_submissions(loaded) if loaded else [], self.action.index, "/diff turn")
        if isinstance(picked, str):
            b.fail("unknown_submission", picked)
            return
        records = [r for r in ctx.engine.checkpoints.records() if r.submission_id == picked.submission_id]
        if not records:
            b.reply = f"Submission {picked.index} ({picked.text}) changed no file."
            b.data = DiffData(stat="", diff="", files=[], submission=picked.index, submission_id=picked.submission_id)
            return
        stats, patches, files = [], [], []
        for rec in records:
            stat, patch = await ctx.engine.checkpoints.record_diff(rec)
            stats.append(stat)
            patches.append(patch)
            files += [p for p in rec.paths if p not in files]
        undone = " (since undone)" if all(r.undone for r in records) else ""
        stat, patch = "\n".join(stats), "".join(patches)
        b.reply = f"Submission {picked.index} ({picked.text}){undone}:\n{stat}\n\n{patch}".rstrip()
        changes = await _changes(ctx.engine.checkpoints, records[0].before, records[-1].after, files)
        b.data = DiffData(stat=stat, diff=patch, files=files, submission=picked.index,
                          submission_id=picked.submission_id, changes=changes)  # fmt: skip


@dataclass
class RewindTask:
    action: Rewind
    title: str = "Rewinding"
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        b, a = ctx.result, self.action
        loaded = _logged(ctx)
        subs = list_submissions(loaded) if loaded else []
        if a.index is None:
            infos = _infos(ctx, subs)
            lines = [f"{i.index:>3}  {i.time}  {i.text[:70]}" + (f"  [{', '.join(i.files[:4])}]" if i.files else "")
                     for i in infos]  # fmt: skip
            b.reply = "\n".join(["Submissions of this session (/rewind N goes back to before N):", *lines]) if lines \
                else "This session has no submission yet."  # fmt: skip
            b.data = RewindData(submissions=infos)
            return
        picked = _pick(subs, a.index, "/rewind")
        if isinstance(picked, str) or loaded is None:
            b.fail("unknown_submission", picked if isinstance(picked, str) else "/rewind: no log")
            return
        later = {s.submission_id for s in subs[picked.index - 1 :]}
        data = RewindData(submissions=_infos(ctx, subs), index=picked.index, code=a.code, conversation=a.conversation)
        if a.code:
            try:
                await undo_since(ctx.engine.checkpoints, ctx.session, later, data)
            except UndoUnavailable as exc:
                b.fail("undo_unavailable", str(exc))
                return
        if a.conversation:
            session = ctx.session
            kept = context_before(loaded, picked.submission_id)
            data.messages_dropped = max(0, len(session.context) - len(kept))
            note = REWIND_NOTE.format(index=picked.index)
            session.compact(note, kept)
        parts = []
        if a.code:
            parts.append(f"files: {len(data.restored)} restored, {len(data.removed)} removed")
            if data.conflicts:
                parts.append("kept, changed since: " + ", ".join(data.conflicts))
        if a.conversation:
            parts.append(f"conversation: {data.messages_dropped} message(s) cut (still in the log and in /export)")
        b.reply = f"Rewound to before submission {picked.index} ({picked.text}): " + "; ".join(parts) + "."
        b.data = data


async def undo_since(checkpoints: Checkpoints, session: Session, later: set[str], data: RewindData) -> None:
    """Undo `session`'s records of `later` submissions, newest first, as `/undo` does: what
    `/rewind N --code` does to the files, and an edit-and-resend's fork (`Resend`)."""
    sid = session.id
    await session.put_away_agent_shell()
    while True:
        own = [r for r in checkpoints.pending() if r.session_id == sid]
        if not own or own[-1].submission_id not in later:
            return
        outcome = await checkpoints.undo_last(sid)
        if outcome is None:
            return
        data.restored += [p for p in outcome.restored if p not in data.restored]
        data.removed += [p for p in outcome.removed if p not in data.removed]
        data.conflicts += [p for p in outcome.conflicts if p not in data.conflicts]


# -- edit and resend --------------------------------------------------------------------
# Edit and resend (contract section 22): `coder.input {text, replaces: submissionId}`.
#
# The session forks before that submission: a new session whose history is the original's
# log up to (not including) the submission's first entry (`store/submissions.history_before`,
# replayed as a log is, so its model context is what the model saw just before it), and the
# new text runs there as any input does. The original keeps its log, stays in `/sessions`
# and can be resumed whole. The files go back as `/rewind N --code` takes them, by its own
# code (`undo_since`): the original's records from its newest back to that
# submission's are undone, a path changed since (by the user, or another session) is kept
# and named. This happens in the submission's planning, before its checkpoint, so `/undo`
# in the fork undoes the new text's changes only.
#
# Refused before anything is made or changed (the original session, its files and the
# current session stay as they were): a `replaces` that names no submission of the session
# the input is for (unknown, or another session's), one while that session runs or queues a
# submission, an empty text. The fork becomes the current session once the files are back;
# the result and every event of its run carry its id, and `sessionChanged {reason: "fork",
# previousSessionId}` says where it came from.
#
# Known limit: the fork's own history holds the original's earlier submissions, but their
# undo records stay the original's, so `/rewind` in the fork reaches back to the resend only.


def _refused(code: str, message: str) -> ErrorInfo:
    return ErrorInfo(code=code, message=f"Edit and resend: {message} Nothing was changed.")


@dataclass
class Resend:
    """A resend under way: the original session, the fork the new text runs in, and what
    the fork's log starts with."""

    original: Session
    fork: Session
    picked: LoggedSubmission
    later: set[str]  # the submissions whose file changes go: the replaced one and those after it
    history: list[slog.Entry]

    @classmethod
    def prepare(cls, manager: SessionManager, session: Session, op: UserInput) -> Resend | ErrorInfo:
        """Check `op.replaces` against `session`; the fork, held in memory, or why not."""
        replaces = op.replaces or ""
        if (refused := resend_refusal(op.origin)) is not None:
            return _refused("origin_refused", f"{refused}.")
        if not op.text.strip():
            return _refused("empty_input", "the new text is empty.")
        if not session.idle:
            return _refused(
                "busy",
                f"session {session.id[:8]} is running or has queued a submission; interrupt it or wait, then resend.",
            )
        loaded = logged(session)
        subs = list_submissions(loaded) if loaded is not None else []
        picked = next((s for s in subs if s.submission_id == replaces), None)
        if picked is None or loaded is None:
            return _refused(
                "unknown_submission",
                f"{replaces!r} is not a submission of session {session.id[:8]} (its submissions: /rewind).",
            )
        history = history_before(loaded, replaces)
        later = {s.submission_id for s in subs[picked.index - 1 :]}
        fork = manager.fork_before(history)
        return cls(original=session, fork=fork, picked=picked, later=later, history=history.entries)

    def planner(self, inner: Planner) -> Planner:
        """The input's own planning, after the files are back and the fork is kept."""

        async def plan(ctx: TaskContext) -> list[Task]:
            if not await self._fork(ctx):
                return []
            return await inner(ctx)

        return plan

    async def _fork(self, ctx: TaskContext) -> bool:
        b, manager = ctx.result, ctx.engine.sessions
        if not self.original.idle:  # something started there since the check: refuse, as then
            return self._abandon(ctx, _refused("busy", f"session {self.original.id[:8]} started a submission."))
        data = RewindData(submissions=[], index=self.picked.index, code=True, conversation=False)
        self.original.queue.enter(ctx.sub)  # idle, so admitted at once: the original's line waits meanwhile
        try:
            await undo_since(ctx.engine.checkpoints, self.original, self.later, data)
        except UndoUnavailable as exc:
            return self._abandon(ctx, _refused("undo_unavailable", f"{exc}."))
        except asyncio.CancelledError:  # interrupted while the files went back: no fork
            b.session_id = self.original.id
            manager.drop(self.fork)
            raise
        finally:
            self.original.queue.leave(ctx.sub)
        manager.keep_fork(self.fork, self.history)
        ctx.sub.emit(SessionChanged(reason="fork", previous_session_id=self.original.id))
        ctx.sub.emit(Notice(message=self._notice(data)))
        b.session_id = self.fork.id
        return True

    def _abandon(self, ctx: TaskContext, error: ErrorInfo) -> bool:
        """Fail the submission where the client looks (the original session); the fork goes."""
        ctx.result.fail(error.code, error.message)
        ctx.result.session_id = self.original.id
        ctx.engine.sessions.drop(self.fork)
        return False

    def _notice(self, data: RewindData) -> str:
        text = (
            f"Forked session {self.original.id[:8]} before submission {self.picked.index} "
            f"({self.picked.text[:60]}) as {self.fork.id[:8]}; the original is kept (/sessions, /resume)."
        )
        if data.restored or data.removed:
            text += f" Files: {len(data.restored)} restored, {len(data.removed)} removed."
        if data.conflicts:
            text += " Kept, changed since: " + ", ".join(data.conflicts) + "."
        return text
