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
"""

from __future__ import annotations

from dataclasses import dataclass

from coder_ls.engine.frame import TaskContext
from coder_ls.history.checkpoints import Checkpoints, UndoUnavailable
from coder_ls.protocol.actions import DiffTurn, Rewind
from coder_ls.protocol.results import DiffData, FileChange, RewindData, SubmissionInfo
from coder_ls.store import log as slog
from coder_ls.store.submissions import LoggedSubmission, context_before, list_submissions
from coder_ls.store.timefmt import format_time

CHANGE_FILES = 50  # files of `/diff turn` sent whole for a diff editor, at most
CHANGE_BYTES = 512 * 1024  # ... each side of each at most (larger or binary: the unified diff only)
REWIND_NOTE = (
    "The user rewound the conversation to before their submission {index} with /rewind: what "
    "came after it is no longer part of this conversation."
)


def _logged(ctx: TaskContext) -> slog.LoadedSession | None:
    session = ctx.session
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
                await self._code(ctx, later, data)
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

    @staticmethod
    async def _code(ctx: TaskContext, later: set[str], data: RewindData) -> None:
        """Undo this session's records of `later` submissions, newest first, as `/undo` does."""
        checkpoints, sid = ctx.engine.checkpoints, ctx.session.id
        await ctx.session.put_away_agent_shell()
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
