"""Carrying out input actions: shell, agent turn, model/permission changes, sessions, undo."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from coder_ls.engine.checkpoints import restore_to_head
from coder_ls.engine.results import ResultBuilder
from coder_ls.engine.safety import check_command
from coder_ls.engine.sessions import UnknownSession
from coder_ls.engine.submission import SubmissionState
from coder_ls.protocol.actions import ChangeModel, RunAgent
from coder_ls.protocol.events import (
    ErrorEvent,
    ModelChanged,
    Notice,
    PermissionsChanged,
    SessionChanged,
    ShellFinished,
    ShellOutput,
    TurnFinished,
    UserMessage,
)
from coder_ls.protocol.messages import Message, TextBlock
from coder_ls.protocol.results import CompactedData, ErrorInfo, ResumedSession, SessionData, UndoData

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine

log = logging.getLogger(__name__)


class Progress:
    """Work-done progress for one long submission: begin now, end with its outcome."""

    def __init__(self, engine: Engine, state: SubmissionState, b: ResultBuilder, message: str) -> None:
        self.engine, self.state, self.b, self.message = engine, state, b, message

    async def __aenter__(self) -> Progress:
        await self.engine.host.begin_progress(self.state.id, "coder", self.message)
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is asyncio.CancelledError or self.state.cancelled:
            message = "Cancelled"
        elif exc is not None:
            message = f"Failed: {exc}"
        elif self.b.status == "failed" and self.b.error is not None:
            message = f"Failed: {self.b.error.message}"
        else:
            message = "Done"
        self.engine.host.end_progress(self.state.id, message)


async def snapshot_around(engine: Engine, state: SubmissionState) -> str | None:
    try:
        return await engine.checkpoints.snapshot(state.id)
    except Exception as exc:  # a broken snapshot must not stop the user's command
        log.warning("checkpoint snapshot failed: %s", exc)
        state.emit(Notice(message=f"/undo will not cover this submission: snapshot failed ({exc})"))
        return None


async def finish_snapshot(engine: Engine, state: SubmissionState, before: str | None) -> list[str]:
    if before is None:
        return []
    try:
        return await asyncio.shield(engine.checkpoints.finish(state.id, before))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.warning("checkpoint finish failed: %s", exc)
        return []


async def run_shell(engine: Engine, state: SubmissionState, command: str, b: ResultBuilder) -> None:
    session, config = state.session, engine.config
    b.mode, b.command = "raw", command
    if not command:
        b.fail("empty_command", "Nothing to run: the command is empty.")
        return
    reason = check_command(command, engine.root, cwd=session.shell.cwd)
    if reason is not None:
        b.fail("refused", f"{command!r}: {reason}")
        b.command = command
        return
    session.set_title_from(f"!{command}")
    state.emit(UserMessage(text=f"!{command}"))
    chunks: list[str] = []

    def on_output(chunk: str) -> None:
        chunks.append(chunk)
        state.emit(ShellOutput(chunk=chunk))

    async with Progress(engine, state, b, f"Running: {command}"):
        before = await snapshot_around(engine, state)
        try:
            result = await session.shell.run(
                command,
                on_output=on_output,
                timeout=config.shell.timeout_seconds,
                max_output_bytes=config.shell.max_output_bytes,
            )
        except asyncio.CancelledError:
            b.raw_output = b.reply = "".join(chunks)
            state.emit(ShellFinished(command=command, exit_code=None))
            await finish_snapshot(engine, state, before)
            session.record_message(_shell_message(command, b.raw_output, None, cancelled=True), state.id)
            raise
        await finish_snapshot(engine, state, before)
        b.raw_output = b.reply = result.output
        b.exit_code = result.exit_code
        state.emit(
            ShellFinished(
                command=command, exit_code=result.exit_code, truncated=result.truncated, timed_out=result.timed_out
            )
        )
        session.record_message(_shell_message(command, result.output, result.exit_code), state.id)
        if result.timed_out:
            b.status = "failed"
            message = f"Timed out after {config.shell.timeout_seconds:g}s; the command's processes were killed."
            b.error = ErrorInfo(code="timeout", message=message)
            b.reply = f"{b.reply}\n[{message}]" if b.reply else message


def _shell_message(command: str, output: str, exit_code: int | None, *, cancelled: bool = False) -> Message:
    tail = "cancelled" if cancelled else f"exit code {exit_code}"
    text = f"I ran a shell command myself:\n$ {command}\n{output[-8000:]}\n[{tail}]"
    return Message(role="user", content=[TextBlock(text=text)])


async def run_agent(engine: Engine, state: SubmissionState, action: RunAgent, b: ResultBuilder) -> None:
    from coder_ls.agent.turn import run_turn

    session = state.session
    b.mode = "nl"
    session.set_title_from(action.prompt)
    state.emit(UserMessage(text=action.prompt))
    async with session.turn_lock, Progress(engine, state, b, "Thinking"):
        before = await snapshot_around(engine, state)
        try:
            await run_turn(engine, state, action, b)
        except asyncio.CancelledError:
            state.emit(TurnFinished(status="cancelled"))
            await finish_snapshot(engine, state, before)
            raise
        await finish_snapshot(engine, state, before)
    if b.status == "failed" and b.error is not None:
        state.emit(ErrorEvent(message=b.error.message))
    state.emit(TurnFinished(status=b.status))


def change_model(engine: Engine, state: SubmissionState, action: ChangeModel, b: ResultBuilder) -> None:
    provider = action.provider or engine.config.provider
    state.session.record_model(action.model, provider)
    try:
        engine.config_store.update_workspace(lambda c: c.update(model=action.model, provider=provider))
    except (ValueError, OSError) as exc:
        b.reply += f"\n(not saved: {exc})"
    engine.config_store.set_runtime(model=action.model, provider=provider)
    engine.reload_config()
    state.emit(ModelChanged(model=action.model, provider=provider))


def change_permissions(engine: Engine, state: SubmissionState, preset: str, b: ResultBuilder) -> None:
    try:
        engine.config_store.update_workspace(lambda c: c.update(permissions=preset))
    except (ValueError, OSError) as exc:
        b.reply += f"\n(not saved: {exc})"
    engine.config_store.set_runtime(permissions=preset)
    engine.reload_config()
    state.emit(PermissionsChanged(preset=preset))


def reset_session(engine: Engine, state: SubmissionState, kind: str, b: ResultBuilder) -> None:
    manager = engine.sessions
    old = state.session
    if kind == "clear":
        old.clear_context()
        state.emit(SessionChanged(reason="clear"))
        b.reply = "Context cleared. Same session, same shell."
        b.data = SessionData(session=manager.session_info(old))
        return
    new = manager.new()
    new.emit(SessionChanged(reason="new", previous_session_id=old.id), state.id)
    b.session_id = new.id
    b.reply = f"New session {new.id[:8]}. The previous one ({old.id[:8]}) can be resumed with /resume."
    b.data = SessionData(session=manager.session_info(new), previous_session_id=old.id)


def resume_session(engine: Engine, state: SubmissionState, session_id: str, b: ResultBuilder) -> None:
    manager = engine.sessions
    try:
        session = manager.resume(session_id)
    except UnknownSession as exc:
        b.fail("unknown_session", str(exc))
        return
    session.emit(SessionChanged(reason="resume", previous_session_id=state.session.id), state.id)
    b.session_id = session.id
    info = manager.session_info(session)
    b.reply = f"Resumed session {session.id[:8]}: {session.title or '(untitled)'} ({session.message_count} messages)."
    b.data = ResumedSession(session=info, message_count=session.message_count, history=list(session.transcript))


async def undo(engine: Engine, state: SubmissionState, everything: bool, b: ResultBuilder) -> None:
    if not everything:
        outcome = await engine.checkpoints.undo_last()
        if outcome is None:
            b.reply = "Nothing to undo."
            b.data = UndoData(restored=[], removed=[])
            return
        b.data = UndoData(restored=outcome.restored, removed=outcome.removed, submission_id=outcome.submission_id)
        lines = [f"Undid submission {outcome.submission_id or ''}".rstrip() + "."]
        lines += [f"  restored {p}" for p in outcome.restored] + [f"  removed {p}" for p in outcome.removed]
        conflicts = getattr(outcome, "conflicts", [])
        if conflicts:
            lines.append("Changed again since then (restored anyway): " + ", ".join(conflicts))
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
        outcome = await restore_to_head(engine.root)
    except Exception as exc:
        b.fail("undo_failed", f"/undo --all failed: {exc}")
        return
    b.data = UndoData(restored=outcome.restored, removed=outcome.removed)
    b.reply = f"Restored {len(outcome.restored)} file(s) to HEAD; removed {len(outcome.removed)} untracked path(s)."


async def compact(engine: Engine, state: SubmissionState, instructions: str, b: ResultBuilder) -> None:
    from coder_ls.agent.compact import apply_summary, summarise
    from coder_ls.agent.turn import provider_for
    from coder_ls.llm.base import ProviderError

    session = state.session
    if not session.context:
        b.reply = "Nothing to compact: the context is empty."
        return
    async with session.turn_lock, Progress(engine, state, b, "Compacting the conversation"):
        try:
            provider, model = provider_for(engine, session)
            summary = await summarise(engine, state, provider, model, instructions)
        except ProviderError as exc:
            b.fail("no_model" if exc.kind == "config" else exc.kind, exc.message)
            return
        if not summary:
            b.fail("empty_summary", "The model returned no summary; the context was kept as it was.")
            return
        before = apply_summary(state, summary)
    b.reply = f"Compacted {before} messages into a summary.\n\n{summary}"
    b.data = CompactedData(summary=summary, messages_before=before)
