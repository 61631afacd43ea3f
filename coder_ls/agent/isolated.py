"""A subagent or a `/task` step in its own git worktree (contract section 25, "Worktrees").

An agent definition with `isolation: worktree`, or a `/task` step that may write when
`tasks.isolation` is `"worktree"`, runs with a worktree of the workspace as its root
(`isolation/worktrees.py`: HEAD plus what the user has not committed): its file tools,
its policy and its shell (a sandboxed `AgentShell` of its own, rooted there) see the
worktree, never the user's tree. Its edits go to the worktree's disk (`WorktreeHost`:
the editor has no buffer there). When it ends well, its change comes back as one patch,
applied to the workspace by `isolation/patches.apply_patch` (all or nothing, the edit
guards, the editor's `workspace/applyEdit` for text, inside the submission's checkpoint so
`/undo` reverts it). Patches are applied one at a time per session, and for a `task` call
with several subagents in the order they were given (`PatchOrder`), so which of two
clashing steps lands does not depend on which finished first: the other one's conflict is
reported with both sides. A step that failed, was cancelled, or whose patch did not apply
leaves its worktree (`/worktrees` lists and drops them); one that landed has it removed.

Outside git (or before the first commit) no worktree can be made: the step runs in the
workspace as before, and its answer says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from coder_ls.engine.edgewrite import write_inside
from coder_ls.engine.host import ClientCaps, Host, MessageKind, OpenDocument
from coder_ls.history.gitops import GitError
from coder_ls.isolation import worktrees
from coder_ls.isolation.patches import apply_patch
from coder_ls.protocol.ask import AskAnswer, AskQuestion
from coder_ls.protocol.edits import EditOutcome, EditRequest, Finding
from coder_ls.protocol.events import Event

if TYPE_CHECKING:
    from coder_ls.agent.subagents import SubOutcome
    from coder_ls.engine.agent_api import TurnContext
    from coder_ls.engine.agentshell import AgentShell

# The tools that change files: an agent with none of them needs no worktree.
WRITING_TOOLS = frozenset({"write", "edit", "multiEdit", "bash", "notebookEdit", "task"})


def writes(tools: Sequence[str] | None) -> bool:
    """Whether an agent with these tools (None: all of them) may change files."""
    return tools is None or any(t in WRITING_TOOLS or t.startswith("mcp__") for t in tools)


class WorktreeHost:
    """The editor as a step in a worktree sees it: edits are written to the worktree's disk
    (bounded by its root), no buffer is read or shown from there; questions, messages,
    events and progress are the editor's."""

    def __init__(self, inner: Host) -> None:
        self._inner = inner
        self._caps = msgspec.structs.replace(
            inner.caps, apply_edit=False, change_annotations=False, document_changes=False, show_document=False
        )

    @property
    def caps(self) -> ClientCaps:
        return self._caps

    def emit(self, event: Event) -> None:
        self._inner.emit(event)

    def show_message(self, kind: MessageKind, message: str) -> None:
        self._inner.show_message(kind, message)

    async def ask(self, kind: MessageKind, message: str, choices: list[str]) -> str | None:
        return await self._inner.ask(kind, message, choices)

    async def ask_user(self, submission_id: str, questions: list[AskQuestion]) -> list[AskAnswer] | None:
        return await self._inner.ask_user(submission_id, questions)

    async def apply_edit(self, request: EditRequest) -> EditOutcome:
        root = Path(request.root)
        for change in request.changes:
            failed = await asyncio.to_thread(write_inside, root, change.path, change.new_text)
            if failed is not None:
                return failed
        return EditOutcome(applied=True, written_to_disk=True)

    def open_document(self, path: Path) -> OpenDocument | None:
        return None

    async def fetch_documents(self, paths: Sequence[Path]) -> None:
        return None

    async def begin_progress(self, submission_id: str, title: str, message: str) -> None:
        await self._inner.begin_progress(submission_id, title, message)

    def report_progress(self, submission_id: str, message: str, percentage: int | None = None) -> None:
        self._inner.report_progress(submission_id, message, percentage)

    def end_progress(self, submission_id: str, message: str) -> None:
        self._inner.end_progress(submission_id, message)

    async def show_document(self, path: Path) -> bool:
        return False

    def publish_findings(self, findings: Sequence[Finding]) -> None:
        return None  # a worktree's paths are not the editor's files


@dataclasses.dataclass(frozen=True)
class Place:
    """Where an isolated step runs: its root, its editor and its shell."""

    root: Path
    host: Host
    shell: AgentShell


class PatchOrder:
    """The patches of one `task` call's subagents land in the order they were given:
    slot `i` applies once slot `i - 1` has applied, failed or been cancelled."""

    def __init__(self, count: int) -> None:
        self._done = [asyncio.Event() for _ in range(count)]

    async def wait(self, i: int) -> None:
        if i > 0:
            await self._done[i - 1].wait()

    def done(self, i: int) -> None:
        self._done[i].set()


class _ApplyLock:
    """One patch at a time per session (a session extension)."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()


def _shell(parent: TurnContext, root: Path) -> AgentShell:
    from coder_ls.engine.agentshell import AgentShell
    from coder_ls.guard import sandbox

    real = os.path.realpath(root)
    private = tuple(p for p in sandbox.server_dirs() if not Path(real).is_relative_to(p))

    def warn(message: str) -> None:
        parent.host.show_message("warning", message)

    return AgentShell(root, busy=lambda: True, on_warning=warn, private=private)


def _kept(kept: worktrees.Kept) -> str:
    wt = kept.worktree
    return (
        f"Its worktree is kept at {wt.root} ({kept.reason}): /worktrees lists it, /worktrees drop {wt.id} removes it."
    )


async def run_isolated(
    parent: TurnContext,
    label: str,
    run: Callable[[Place | None], Awaitable[SubOutcome]],
    order: tuple[PatchOrder, int] | None = None,
) -> SubOutcome:
    """`run` a step in a new worktree (`Place`), then bring its change back (module
    docstring). `label` names the step in the editor and in `/worktrees`."""
    try:
        wt = await worktrees.create(parent.root, label)
    except worktrees.NotIsolated as exc:
        parent.host.show_message("warning", f"coder: {label}: {exc}")
        out = await run(None)
        return dataclasses.replace(out, text=f"{out.text}\n\n(Not isolated: {exc}.)")
    except GitError as exc:
        from coder_ls.agent.subagents import SubOutcome

        return SubOutcome("failed", f"failed: its worktree could not be made: {exc}", "worktree")
    shell = _shell(parent, Path(wt.root))
    try:
        out = await run(Place(Path(wt.root), WorktreeHost(parent.host), shell))
    except BaseException:
        with contextlib.suppress(Exception):
            await asyncio.shield(shell.close())
        worktrees.keep(wt, "cancelled")
        raise
    await shell.close()
    if out.status != "completed":
        return dataclasses.replace(out, text=f"{out.text}\n\n{_kept(worktrees.keep(wt, f'the step {out.status}'))}")
    try:
        return await _land(parent, wt, out, label, order)
    except asyncio.CancelledError:
        worktrees.keep(wt, "cancelled before its patch landed")  # a note on a removed one is dropped
        raise


async def _land(
    parent: TurnContext, wt: worktrees.Worktree, out: SubOutcome, label: str, order: tuple[PatchOrder, int] | None
) -> SubOutcome:
    if order is not None:
        await order[0].wait(order[1])
    lock: Any = parent.session.extension(_ApplyLock, _ApplyLock)
    async with lock.lock:
        try:
            patch = await worktrees.patch(wt)
        except GitError as exc:
            kept = worktrees.keep(wt, "its change could not be read")
            return dataclasses.replace(out, status="failed", text=f"{out.text}\n\nfailed: {exc}\n{_kept(kept)}")
        result = await apply_patch(patch, root=parent.root, editor=parent.host, label=f"Coder: {label}")
    if result.ok:
        await worktrees.remove(wt)
        return dataclasses.replace(out, text=f"{out.text}\n\n{result.message}")
    kept = worktrees.keep(wt, f"its patch was {result.status}" if result.status != "failed" else "its patch failed")
    text = f"{out.text}\n\n{result.message}\n\n{_kept(kept)}"
    return dataclasses.replace(out, status="failed", text=text, code=result.status)
