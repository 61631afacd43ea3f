"""The tasks a submission runs inside its frame (`frame.py`): each only does its own job.

Progress, the checkpoint, cancellation, cleanup and `turnFinished` belong to the frame.
A task that must leave a record when it is cancelled does so synchronously in its
`except CancelledError` (no `await` there), so nothing can cut it short.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from coder_ls.engine.frame import Task, TaskContext
from coder_ls.engine.sessions import UnknownSession, fork_notice
from coder_ls.history.checkpoints import UndoUnavailable, restore_to_head
from coder_ls.history.gitops import NotAGitRepo
from coder_ls.protocol.actions import (
    Action,
    ChangeEffort,
    ChangeModel,
    ChangePermissions,
    Compact,
    DiffTurn,
    EnterPlan,
    ExportSession,
    LeavePlan,
    ListShells,
    ResetSession,
    ResumeSession,
    RevokePermission,
    Rewind,
    RunAgent,
    RunPromptCommand,
    RunShell,
    ShowContext,
    ShowCost,
    SideQuestion,
    TrustWorkspace,
    UndoLast,
    WriteConfig,
)
from coder_ls.protocol.events import (
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    ModelChanged,
    PermissionsChanged,
    SessionChanged,
    ShellFinished,
    ShellOutput,
    UserMessage,
)
from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.protocol.results import ErrorInfo, ResumedSession, SessionData, UndoData


def titled(task: Task, title: str) -> Task:
    """A command's own progress message (`progress-message`) on its agent turn."""
    if title and isinstance(task, AgentTask | PromptCommandTask):
        task.title = title
    return task


def task_for(action: Action) -> Task:
    match action:
        case RunShell(command=command):
            return ShellTask(command)
        case RunAgent():
            return AgentTask(action)
        case RunPromptCommand():
            return PromptCommandTask(action)
        case SideQuestion(question=question):
            return SideQuestionTask(question)
        case Compact(instructions=instructions, keep_last=keep_last, clear=clear):
            return CompactTask(instructions, keep_last, clear)
        case UndoLast(all=everything):
            return UndoTask(everything)
        case ChangeModel():
            return ChangeModelTask(action)
        case ChangePermissions(preset=preset):
            return ChangePermissionsTask(preset)
        case TrustWorkspace():
            return TrustTask()
        case ResetSession(kind=kind):
            return ResetTask(kind)
        case ResumeSession(session_id=session_id):
            return ResumeTask(session_id)
        # the tasks of these commands are imported when one is asked for, as `WriteConfig`'s
        case EnterPlan():
            from coder_ls.engine.planmode import EnterPlanTask

            return EnterPlanTask()
        case LeavePlan():
            from coder_ls.engine.planmode import LeavePlanTask

            return LeavePlanTask()
        case ShowContext():
            from coder_ls.engine.iotasks import ContextTask

            return ContextTask()
        case ShowCost():
            from coder_ls.engine.iotasks import CostTask

            return CostTask()
        case ListShells():
            from coder_ls.engine.iotasks import ShellsTask

            return ShellsTask()
        case ExportSession():
            from coder_ls.engine.iotasks import ExportTask

            return ExportTask(action)
        case DiffTurn():
            from coder_ls.engine.rewind import DiffTurnTask

            return DiffTurnTask(action)
        case Rewind():
            from coder_ls.engine.rewind import RewindTask

            return RewindTask(action)
        case WriteConfig():
            from coder_ls.engine.configwrite import WriteConfigTask

            return WriteConfigTask(action)
        case ChangeEffort(level=level):
            from coder_ls.engine.effort import ChangeEffortTask

            return ChangeEffortTask(level)
        case RevokePermission():
            from coder_ls.engine.permlist import RevokeTask

            return RevokeTask(action)


def shell_message(command: str, output: str, exit_code: int | None, *, cancelled: bool = False) -> Message:
    tail = "cancelled" if cancelled else f"exit code {exit_code}"
    text = f"I ran a shell command myself:\n$ {command}\n{output[-8000:]}\n[{tail}]"
    return Message(role="user", content=[TextBlock(text=text)])


@dataclass
class ShellTask:
    """`!cmd` (already checked against the refused-command list when planned)."""

    command: str
    needs_checkpoint: bool = True

    @property
    def title(self) -> str:
        return f"Running: {self.command}"

    async def run(self, ctx: TaskContext) -> None:
        session, config, b, command = ctx.session, ctx.engine.config, ctx.result, self.command
        b.mode, b.command = "raw", command
        session.set_title_from(f"!{command}")
        ctx.sub.emit(UserMessage(text=f"!{command}"))
        chunks: list[str] = []

        def on_output(chunk: str) -> None:
            chunks.append(chunk)
            ctx.sub.emit(ShellOutput(chunk=chunk))

        try:
            result = await session.shell.run(
                command,
                on_output=on_output,
                timeout=config.shell.timeout_seconds,
                max_output_bytes=config.shell.max_output_bytes,
                hide_env=config.secrets.env_names,
            )
        except asyncio.CancelledError:
            b.raw_output = b.reply = "".join(chunks)
            ctx.sub.emit(ShellFinished(command=command, exit_code=None))
            session.record_message(shell_message(command, b.raw_output, None, cancelled=True), ctx.sub.id)
            raise
        b.raw_output = b.reply = result.output
        b.exit_code = result.exit_code
        ctx.sub.emit(
            ShellFinished(
                command=command, exit_code=result.exit_code, truncated=result.truncated, timed_out=result.timed_out
            )
        )
        session.record_message(shell_message(command, result.output, result.exit_code), ctx.sub.id)
        if result.timed_out:
            message = f"Timed out after {config.shell.timeout_seconds:g}s; the command's processes were killed."
            b.status = "failed"
            b.error = ErrorInfo(code="timeout", message=message)
            b.reply = f"{b.reply}\n[{message}]" if b.reply else message


@dataclass
class AgentTask:
    """An agent turn: a prompt, a code action or a prompt command."""

    action: RunAgent
    title: str = "Thinking"
    needs_checkpoint: bool = True

    async def run(self, ctx: TaskContext) -> None:
        b = ctx.result
        b.mode = "nl"
        said = self.action.shown or self.action.prompt
        ctx.session.set_title_from(said)
        ctx.sub.emit(UserMessage(text=said))
        await ctx.engine.agent.run_turn(ctx.engine.turn_context(ctx.sub, b), self.action)
        if b.status == "failed" and b.error is not None:
            ctx.sub.emit(ErrorEvent(message=b.error.message))


@dataclass
class PromptCommandTask:
    """A command or skill from a file: its `` !`cmd` `` run first (each checked against the
    refused commands; one refused fails the whole command and no turn runs), then the turn."""

    action: RunPromptCommand
    title: str = "Thinking"
    needs_checkpoint: bool = True

    async def run(self, ctx: TaskContext) -> None:
        from coder_ls.commands.expand import INLINE_MAX_BYTES, Expanded, InlineRefused, run_inline
        from coder_ls.guard.safety import check_command

        session, config = ctx.session, ctx.engine.config
        root = ctx.engine.root

        def check(command: str) -> str | None:
            return check_command(command, root, cwd=session.shell.cwd, env=session.shell.exports())

        async def run(command: str) -> str:
            ctx.sub.report(f"Running: {command}")
            result = await session.shell.run(
                command,
                on_output=lambda chunk: None,
                timeout=config.shell.timeout_seconds,
                max_output_bytes=INLINE_MAX_BYTES,
                hide_env=config.secrets.env_names,
            )
            if result.timed_out:
                return f"{result.output}\n[timed out after {config.shell.timeout_seconds:g}s]"
            return result.output

        a = self.action
        if a.confirm_commands is not None and a.commands and not await self._approved(ctx):
            ctx.result.fail(
                "not_approved",
                f"/{a.name}: its commands were not run (not approved), and nothing was sent to the model. "
                "/trust this workspace to let its command files run their commands without asking.",
            )
            return
        try:
            prompt = await run_inline(Expanded(a.prompt, a.commands), check, run)
        except InlineRefused as exc:
            ctx.result.fail("refused", f"Refused command in the prompt: {exc}")
            return
        turn = RunAgent(
            prompt=prompt,
            model=a.model,
            grants=a.grants,
            fork=a.fork,
            command=f"/{a.name}",
            hooks=a.hooks,
            hooks_source=a.hooks_source,
            effort=a.effort,
            references=a.references,
        )
        await AgentTask(turn).run(ctx)

    async def _approved(self, ctx: TaskContext) -> bool:
        """The gate's row `commands`: an untrusted workspace's file runs its `` !`cmd` ``
        lines (unsandboxed, in the user's shell) only when the user, shown each exact
        command, says so. A client that cannot ask, or a dismissed question, is a no."""
        host = ctx.engine.host
        if not host.caps.show_message_request:
            return False
        shown = "\n".join(f"  $ {c}" for c in self.action.commands)
        question = (
            f"/{self.action.name} comes from this workspace ({self.action.confirm_commands}), which you "
            f"have not trusted. It wants to run in your shell, unsandboxed:\n{shown}"
        )
        call_id = f"{ctx.sub.id}:commands"
        summary = f"run the commands of /{self.action.name}: " + "; ".join(self.action.commands)
        ctx.sub.emit(ApprovalRequested(call_id=call_id, tool="bash", summary=summary))
        answer = None
        try:  # unanswered for `approvals.timeoutSeconds`: a no, like the policy's questions
            answer = await asyncio.wait_for(
                host.ask("warning", question, ["Run them", "Don't run"]), ctx.engine.config.approvals.timeout_seconds
            )
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            ctx.sub.emit(ApprovalResolved(call_id=call_id, decision="cancelled"))
            raise
        approved = answer == "Run them"
        ctx.sub.emit(ApprovalResolved(call_id=call_id, decision="allowOnce" if approved else "deny"))
        return approved


@dataclass
class SideQuestionTask:
    """`/btw`: never waits in line, and a cancel aimed at it cancels it alone."""

    question: str
    title: str = "Answering a side question"
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        await ctx.engine.agent.side_question(ctx.engine.turn_context(ctx.sub, ctx.result), self.question)


@dataclass
class CompactTask:
    instructions: str
    keep_last: int = 0
    clear: bool = False
    title: str = "Compacting the conversation"
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        if not ctx.session.context:
            ctx.result.reply = "Nothing to compact: the context is empty."
            return
        await ctx.engine.agent.compact(
            ctx.engine.turn_context(ctx.sub, ctx.result), self.instructions, keep_last=self.keep_last, clear=self.clear
        )


@dataclass
class UndoTask:
    everything: bool
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        b = ctx.result
        try:
            await self._undo(ctx)
        except UndoUnavailable as exc:
            b.fail("undo_unavailable", str(exc))
        except NotAGitRepo as exc:
            b.fail("not_a_git_repo", f"/undo --all: {exc} (it restores the workspace to git's HEAD).")

    async def _undo(self, ctx: TaskContext) -> None:
        engine, b = ctx.engine, ctx.result
        await ctx.session.put_away_agent_shell()
        if not self.everything:
            outcome = await engine.checkpoints.undo_last(ctx.session.id)
            if outcome is None:
                b.reply = "Nothing to undo."
                b.data = UndoData(restored=[], removed=[])
                return
            b.data = UndoData(
                restored=outcome.restored,
                removed=outcome.removed,
                submission_id=outcome.submission_id,
                conflicts=outcome.conflicts,
            )
            lines = [f"Undid submission {outcome.submission_id or ''}".rstrip() + "."]
            lines += [f"  restored {p}" for p in outcome.restored] + [f"  removed {p}" for p in outcome.removed]
            if outcome.conflicts:
                lines.append(
                    "Kept, changed since that submission (or while another session's ran too): "
                    + ", ".join(outcome.conflicts)
                )
            b.reply = "\n".join(lines)
            return
        if not engine.host.caps.show_message_request:
            b.fail("confirmation_unavailable", "/undo --all needs a confirmation, and this client cannot ask.")
            return
        preview = await engine.checkpoints.undo_all_preview()
        shown = ", ".join(preview[:10]) + (f" and {len(preview) - 10} more" if len(preview) > 10 else "")
        question = (
            "Restore the whole workspace to HEAD and remove untracked files? "
            f"{len(preview)} path(s) affected{': ' + shown if preview else ''}."
        )
        choice = await engine.host.ask("warning", question, ["Restore to HEAD", "Cancel"])
        if choice != "Restore to HEAD":
            b.reply = "Kept everything: /undo --all was not confirmed."
            b.data = UndoData(restored=[], removed=[])
            return
        try:
            restored = await restore_to_head(engine.root)
        except NotAGitRepo:
            raise
        except Exception as exc:
            b.fail("undo_failed", f"/undo --all failed: {exc}")
            return
        b.data = UndoData(restored=restored.restored, removed=restored.removed)
        counts = len(restored.restored), len(restored.removed)
        b.reply = f"Restored {counts[0]} file(s) to HEAD; removed {counts[1]} untracked path(s)."


@dataclass
class ChangeModelTask:
    """`/model <name>`: applies from the next model request, even of a running turn."""

    action: ChangeModel
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        engine, action = ctx.engine, self.action
        provider = action.provider or engine.config.provider
        ctx.session.record_model(action.model, provider)
        saved = engine.persist_settings(model=action.model, provider=provider)
        if saved is not None:
            ctx.result.reply += f"\n(not saved: {saved})"
        ctx.sub.emit(ModelChanged(model=action.model, provider=provider))


@dataclass
class ChangePermissionsTask:
    preset: str
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        saved = ctx.engine.persist_settings(permissions=self.preset)
        if saved is not None:
            ctx.result.reply += f"\n(not saved: {saved})"
        ctx.sub.emit(PermissionsChanged(preset=self.preset))


@dataclass
class TrustTask:
    """`/trust`: the workspace file's widening settings apply; the preset may change."""

    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        before = ctx.engine.config.permissions
        ctx.result.reply = ctx.engine.trust_workspace()
        if ctx.engine.config.permissions != before:
            ctx.sub.emit(PermissionsChanged(preset=ctx.engine.config.permissions))


@dataclass
class ResetTask:
    """`/clear` (same session, empty context) or `/new` (a new session)."""

    kind: str
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        manager, old, b = ctx.engine.sessions, ctx.session, ctx.result
        await ctx.engine.end_session(old, "clear")  # SessionEnd hooks; the next prompt starts it again
        if self.kind == "clear":
            old.clear_context()
            ctx.sub.emit(SessionChanged(reason="clear"))
            b.reply = "Context cleared. Same session, same shell."
            b.data = SessionData(session=manager.session_info(old))
            return
        await old.end_background_shells()  # they end with the session the user leaves
        new = manager.new()
        new.emit(SessionChanged(reason="new", previous_session_id=old.id), ctx.sub.id)
        b.session_id = new.id
        b.reply = f"New session {new.id[:8]}. The previous one ({old.id[:8]}) can be resumed with /resume."
        b.data = SessionData(session=manager.session_info(new), previous_session_id=old.id)


@dataclass
class ResumeTask:
    session_id: str
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        manager, b = ctx.engine.sessions, ctx.result
        try:
            session = manager.resume(self.session_id)
        except UnknownSession as exc:
            b.fail("unknown_session", str(exc))
            return
        session.emit(SessionChanged(reason="resume", previous_session_id=ctx.session.id), ctx.sub.id)
        b.session_id = session.id
        info = manager.session_info(session)
        count = session.message_count
        b.reply = f"Resumed session {session.id[:8]}: {session.title or '(untitled)'} ({count} messages)."
        if session.forked_from is not None:
            b.reply += " " + fork_notice(session.forked_from, session.id)
        b.data = ResumedSession(session=info, message_count=count, history=list(session.transcript))
