"""The lines the agent wrote, as the editor sees them (contract section 23): the buffer's
changes reach each session's `AgentLines`, code lenses name who wrote which lines, and a
lens's command puts one hunk back.

The revert is a submission like `/undo`: it runs in its frame with a checkpoint, so `/undo`
reverts the revert, and its edit lands through the host as the agent's edits do
(`workspace/applyEdit`, or the server's one write when the file is not open). It is refused,
with the reason, when the hunk's lines are no longer what the agent left there, when the id
is not one this session's lenses gave, or when the path is not the hunk's or not inside the
workspace.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

import msgspec

from coder_ls.attribution.agentlines import AgentLines, Span, changed_since, key_of, revert_text
from coder_ls.engine.frame import TaskContext
from coder_ls.engine.session import Session
from coder_ls.protocol.edits import EditRequest, FileChange, TextEdit
from coder_ls.protocol.events import EditApplied
from coder_ls.protocol.results import RevertData
from coder_ls.saferead import read_text_or_none

MAX_READ = 16 * 1024 * 1024


class Lens(msgspec.Struct, frozen=True):
    """One code lens: on `line` (0-based), the hunk `hunk_id` of `session_id`, `title` shown."""

    line: int
    end_line: int
    title: str
    hunk_id: str
    session_id: str


def _lines_of(session: Session) -> AgentLines | None:
    return session.find_extension(AgentLines)


def editor_changed(sessions: list[Session], path: str, text: str) -> None:
    """The editor's buffer of `path` is now `text` (a versioned didChange)."""
    key = key_of(path)
    for session in sessions:
        lines = _lines_of(session)
        if lines is not None:
            lines.editor_text(key, text)


def version(sessions: list[Session]) -> tuple[tuple[str, int], ...]:
    """Changes when any session's lenses change (the edge refreshes the editor's lenses)."""
    return tuple((s.id, lines.version) for s in sessions if (lines := _lines_of(s)) is not None)


def title(span: Span) -> str:
    who = f"Coder ({span.author.subagent})" if span.author.subagent else "Coder"
    what = f': "{span.author.prompt}"' if span.author.prompt else f" (submission {span.author.submission_id[:8]})"
    return f"{who}{what} · revert"


def lenses(sessions: list[Session], path: str, text: str | None) -> list[Lens]:
    """The lenses of `path` whose buffer holds `text` (None: not open; the disk's text)."""
    key = key_of(path)
    out: list[Lens] = []
    disk: str | None = None
    for session in sessions:
        lines = _lines_of(session)
        if lines is None or lines.text(key) is None:
            continue
        if text is not None:
            lines.editor_text(key, text)
        else:
            disk = disk if disk is not None else read_text_or_none(Path(path), MAX_READ)
            if disk is not None:
                lines.disk_text(key, disk)
        for span in lines.spans(key):
            out.append(Lens(span.start, span.end, title(span), span.id, session.id))
    return sorted(out, key=lambda lens: lens.line)


def _target(root: Path, raw: str) -> tuple[Path, bool]:
    """The path a lens's uri names, and whether it (links followed) is inside `root`."""
    path = Path(os.path.abspath(raw))
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return path, real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


@dataclass
class RevertHunkTask:
    path: str
    hunk_id: str
    title: str = "Reverting an agent change"
    needs_checkpoint: bool = True

    async def run(self, ctx: TaskContext) -> None:
        engine, b = ctx.engine, ctx.result
        b.mode = "command"
        path, inside = await asyncio.to_thread(_target, engine.root, self.path)
        shown = _shown(engine.root, path)
        if not inside:
            b.fail("outside_workspace", f"Not reverted: {self.path} is outside the workspace {engine.root}.")
            return
        lines = _lines_of(ctx.session)
        found = lines.find(self.hunk_id) if lines is not None else None
        if lines is None or found is None:
            b.fail("unknown_hunk", f"Not reverted: this session has no agent change {self.hunk_id!r} "
                   "(the lens is out of date, or the id is not one the server gave).")  # fmt: skip
            return
        key, span = found
        if key != key_of(path):
            b.fail("unknown_hunk", f"Not reverted: agent change {self.hunk_id!r} is not in {shown}.")
            return
        doc = engine.host.open_document(path)
        text = doc.text if doc is not None else await asyncio.to_thread(read_text_or_none, path, MAX_READ)
        if text is None:
            b.fail("changed_since", f"Not reverted: {shown} can no longer be read as text.")
            return
        if doc is not None:  # what the editor or the disk holds now moves the span first
            lines.editor_text(key, text)
        else:
            lines.disk_text(key, text)
        if (why := changed_since(span, text)) is not None:
            b.fail("changed_since", f"Not reverted: in {shown}, {why}.")
            return
        new_text, sl, sc, el, ec, old = revert_text(text, span)
        edit = TextEdit(sl, sc, el, ec, old)
        change = FileChange(str(path), "edit", new_text, (edit,), doc.version if doc is not None else None)
        lines.expect(key, new_text, reverting=span.id)
        label = f"Coder: revert lines {span.start + 1}-{span.end} of {shown}"
        outcome = await engine.host.apply_edit(EditRequest(label=label, changes=(change,), root=str(engine.root)))
        if not outcome.applied:
            lines.unexpect(key)
            ctx.sub.emit(EditApplied(uri=path.as_uri(), applied=False, reason=outcome.reason))
            b.fail("revert_failed", f"Not reverted: {outcome.reason or 'the editor did not apply the edit'}.")
            return
        # as after the agent's edits: a client saves the buffer (the disk, the shell and /undo see it)
        ctx.sub.emit(EditApplied(uri=path.as_uri(), applied=True, on_disk=outcome.written_to_disk))
        lines.reverted(key, span.id, new_text)
        who = title(span).removesuffix(" · revert")
        where = f"line {span.end}" if span.end == span.start + 1 else f"lines {span.start + 1}-{span.end}"
        b.reply = f"Reverted {where} of {shown} ({who})."
        b.data = RevertData(shown, span.start + 1, span.end, span.author.submission_id)


def _shown(root: Path, path: Path) -> str:
    rel = os.path.relpath(path, root)
    return str(path) if rel.startswith("..") else rel
