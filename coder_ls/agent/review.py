"""Reviewing the agent's edits (contract section 15): what the user kept.

Two ways for the user to see an edit before it lands (`agent/editpreview.py` decides which
and computes the edit from the tool's input):

- the client supports change annotations: the edit itself is the question (a
  `workspace/applyEdit` whose edits need confirmation); afterwards, what the buffer (or
  the disk) holds is the truth, compared hunk by hunk with what was proposed (here);
- otherwise the approval question carries the change as a short unified diff.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from coder_ls.agent.textedits import _LineIndex
from coder_ls.attribution.agentlines import key_of
from coder_ls.engine.host import Host
from coder_ls.protocol.edits import EditOutcome, EditRequest, FileChange, TextEdit
from coder_ls.protocol.events import ApprovalRequested, ApprovalResolved, EditApplied
from coder_ls.saferead import read_text_or_none

if TYPE_CHECKING:
    from coder_ls.agent.tools.base import ToolContext

BUFFER_GRACE_SECONDS = 1.0  # how long a `didChange` may trail the applyEdit answer
MAX_HUNKS = 200  # past this, the result is not matched hunk by hunk


def review_label(tool: str, rel: str) -> str:
    return f"Coder: {tool} {rel}"


# --- what the user kept ---------------------------------------------------------------------


class HunkResult(msgspec.Struct, frozen=True):
    edit: TextEdit
    old_lines: str  # the whole lines the edit touches, before
    new_lines: str  # and after it
    applied: bool


def _whole_lines(base: str, start: int, end: int, new_text: str) -> tuple[str, str]:
    first = base.rfind("\n", 0, start) + 1
    last = base.find("\n", end)
    last = len(base) if last < 0 else last
    return base[first:last], base[first:start] + new_text + base[end:last]


CURRENT_TEXT_BYTES = 16 * 1024 * 1024  # what the edit tools read at most (`tools.fileio`)


def current_text(host: Host, path: Path) -> str | None:
    """What the file holds now: the open buffer, else the disk (None: no file)."""
    doc = host.open_document(path)
    if doc is not None:
        return doc.text
    return read_text_or_none(path, CURRENT_TEXT_BYTES)  # a regular file only, never a FIFO's open


async def _await_buffer_change(host: Host, path: Path, base_version: int | None) -> None:
    """An open buffer still at the version the edit targeted: give the client a moment for
    its `didChange` (most send it before answering the applyEdit, not all)."""
    if base_version is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BUFFER_GRACE_SECONDS
    while loop.time() < deadline:
        doc = host.open_document(path)
        if doc is None or doc.version != base_version:
            return
        await asyncio.sleep(0.05)


def match_hunks(base: str, edits: tuple[TextEdit, ...], result: str) -> list[HunkResult] | None:
    """Which of `edits` (against `base`) `result` holds; None when it is not `base` with
    some of them applied (the user changed something else too)."""
    if len(edits) > MAX_HUNKS:
        return None
    index = _LineIndex(base)
    spans: list[tuple[int, int, TextEdit]] = []
    for e in edits:
        spans.append((index.offset(e.start_line, e.start_character), index.offset(e.end_line, e.end_character), e))
    spans.sort(key=lambda s: s[0])
    # reachable[pos] = the choices (applied or not, per hunk so far) that produce result[:pos]
    reachable: dict[int, tuple[bool, ...]] = {0: ()}
    cursor = 0
    for start, end, e in spans:
        gap = base[cursor:start]
        nxt: dict[int, tuple[bool, ...]] = {}
        for pos, choices in reachable.items():
            if not result.startswith(gap, pos):
                continue
            at = pos + len(gap)
            for applied, piece in ((True, e.new_text), (False, base[start:end])):
                if result.startswith(piece, at):
                    nxt.setdefault(at + len(piece), (*choices, applied))
        reachable, cursor = nxt, end
        if not reachable:
            return None
    tail = base[cursor:]
    for pos, choices in reachable.items():
        if result[pos:] == tail:
            return [
                HunkResult(e, *_whole_lines(base, s, t, e.new_text), a)
                for (s, t, e), a in zip(spans, choices, strict=True)
            ]
    return None


def _hunk_line(h: HunkResult) -> str:
    a, b = h.edit.start_line + 1, h.edit.end_line + 1
    where = f"line {a}" if a == b else f"lines {a}-{b}"
    old = " ".join(h.old_lines.split())[:100]
    new = " ".join(h.new_lines.split())[:100]
    return f"- {where}: `{old}` -> `{new}`"


def review_message(rel: str, hunks: list[HunkResult] | None) -> tuple[bool, str]:
    """(anything applied, the message for the model; "" when all was applied)."""
    if hunks is None:
        return True, (
            f"The user reviewed the edit of {rel} and changed it: the file now differs from what you "
            "proposed. Read it again before changing it further."
        )
    applied = [h for h in hunks if h.applied]
    rejected = [h for h in hunks if not h.applied]
    if not rejected:
        return True, ""
    if not applied:
        return False, f"the user rejected the edit of {rel}: none of its {len(hunks)} changes was applied."
    lines = [
        f"The user reviewed the edit of {rel} and applied {len(applied)} of its {len(hunks)} changes; "
        "the others were rejected. Applied:",
        *(_hunk_line(h) for h in applied[:20]),
        "Rejected (not in the file):",
        *(_hunk_line(h) for h in rejected[:20]),
        "Do not redo the rejected changes unless the user asks.",
    ]
    return True, "\n".join(lines)


async def commit_reviewed(ctx: ToolContext, path: Path, base_text: str, change: FileChange, tool: str) -> bool:
    """Send `change` as the approval question (needsConfirmation) and read what the user
    kept. Emits the approval and `EditApplied` events; True when all of it was applied,
    else a `ToolError` tells the model what was applied and what was rejected."""
    from coder_ls.agent.tools.base import ToolError

    rel = ctx.rel(path)
    cid = ctx.call_id
    ctx.emit(ApprovalRequested(call_id=cid, tool=tool, summary=f"review the edit of {rel}"))
    timeout = ctx.config.approvals.timeout_seconds
    request = EditRequest(
        label=review_label(tool, rel),
        changes=(change,),
        root=str(ctx.write_root),
        needs_confirmation=True,
        timeout_seconds=timeout,
    )
    uri = path.as_uri()
    lines, key = ctx.agent_lines, key_of(path)
    if lines is not None:
        lines.expect(key, change.new_text)  # the editor's echo of it is not the user's typing
    outcome: EditOutcome | None = None
    try:
        outcome = await ctx.host.apply_edit(request)
    except asyncio.CancelledError:
        ctx.emit(ApprovalResolved(call_id=cid, decision="cancelled"))
        raise
    finally:
        if lines is not None and (outcome is None or not outcome.applied):
            lines.unexpect(key)
    if not outcome.applied:
        ctx.emit(ApprovalResolved(call_id=cid, decision="deny"))
        ctx.emit(EditApplied(uri=uri, applied=False, reason=outcome.reason))
        if outcome.timed_out:  # section 15: denied like an unanswered approval; the editor was told
            ctx.host.show_message(
                "warning", f"Coder: the review of the edit of {rel} was not answered within {timeout:g}s; "
                "the edit was not applied."
            )  # fmt: skip
            raise ToolError(f"the user did not answer the review within {timeout:g}s; the edit was not applied")
        if outcome.failed:
            raise ToolError(f"could not write {rel}: {outcome.reason or 'no reason given'}")
        raise ToolError(f"the user rejected the edit: {outcome.reason or 'no reason given'}")
    await _await_buffer_change(ctx.host, path, change.base_version)
    now = current_text(ctx.host, path)
    if change.kind == "create":
        hunks = match_hunks("", (TextEdit(0, 0, 0, 0, change.new_text),), now or "")
    else:
        hunks = match_hunks(base_text, change.edits, now if now is not None else "")
    any_applied, message = review_message(rel, hunks)
    if lines is not None:  # after the editor's echo (awaited above)
        if any_applied and now is not None:
            lines.wrote(key, rel, base_text, now, ctx.submission_id, ctx.subagent)
        lines.unexpect(key)
    ctx.emit(ApprovalResolved(call_id=cid, decision="allowOnce" if any_applied else "deny"))
    ctx.emit(EditApplied(uri=uri, applied=any_applied, on_disk=outcome.written_to_disk))
    if any_applied:
        ctx.changed_paths.add(str(path))
    if message:
        raise ToolError(message)
    return True
