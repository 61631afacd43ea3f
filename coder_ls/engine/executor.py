"""The executor: one submission per request; actions run as tasks registered under it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coder_ls.engine.checkpoints import Checkpoints
from coder_ls.engine.commands.builtin import register_builtins
from coder_ls.engine.commands.context import CommandContext
from coder_ls.engine.commands.files import command_dirs, load_prompt_commands, signature
from coder_ls.engine.commands.registry import Registry
from coder_ls.engine.config import ConfigStore, describe
from coder_ls.engine.dispatch import EmptyInput, Prompt, Shell, Slash, UnknownSlash, parse_input
from coder_ls.engine.host import Host
from coder_ls.engine.results import ResultBuilder
from coder_ls.engine.session import Session
from coder_ls.engine.sessions import SessionManager, UnknownSession
from coder_ls.engine.submission import SubmissionState
from coder_ls.protocol.actions import (
    Action,
    ChangeModel,
    ChangePermissions,
    CommandOutcome,
    Compact,
    ResetSession,
    ResumeSession,
    RunAgent,
    RunShell,
    UndoLast,
)
from coder_ls.protocol.config import Config
from coder_ls.protocol.events import CommandsChanged
from coder_ls.protocol.ops import CodeAction, Interrupt, ListCommands, Op, Submission, UserInput
from coder_ls.protocol.results import CommandCatalog, CommandResult, InterruptData, error_result

log = logging.getLogger(__name__)


class Engine:
    def __init__(self, root: Path, host: Host, env: Mapping[str, str]) -> None:
        self.root = root
        self.host = host
        self.env = env
        self.config_store = ConfigStore(root, env)
        self.registry = Registry()
        register_builtins(self.registry)
        self.sessions = SessionManager(root, host, lambda: self.config)
        self._checkpoints: Checkpoints | None = None
        self.agent_tools: Any = None  # the agent's tool registry, built by the first turn
        self.providers: dict[tuple[str, ...], Any] = {}  # model providers, kept across turns
        self._command_dirs = command_dirs(root, env)
        self._command_signature: tuple[tuple[str, int, int], ...] = ()
        self.refresh_commands()

    @property
    def checkpoints(self) -> Checkpoints:
        if self._checkpoints is None:
            self._checkpoints = Checkpoints(self.root)
        return self._checkpoints

    # -- configuration ------------------------------------------------------------------
    @property
    def config(self) -> Config:
        return self.config_store.config

    def reload_config(self) -> str | None:
        """Recompute the configuration; a message for the user when part of it is bad."""
        problems = self.config_store.reload()
        return describe(problems) if problems else None

    # -- prompt commands from files ---------------------------------------------------------
    def refresh_commands(self) -> bool:
        """Reload `.coder/commands/*.md` (and the user's) when they changed; True if the catalog did."""
        sig = signature(self._command_dirs)
        if sig == self._command_signature:
            return False
        self._command_signature = sig
        return self.registry.set_extra(load_prompt_commands(self._command_dirs))

    def command_watch_dirs(self) -> list[Path]:
        return [d for d, _ in self._command_dirs]

    def announce_commands_changed(self) -> None:
        session = self.sessions.loaded(None)
        if session is not None:
            session.emit(CommandsChanged(), "")
        else:
            self.host.emit(CommandsChanged())

    # -- submissions --------------------------------------------------------------------
    async def submit(self, submission: Submission) -> CommandResult:
        if self.refresh_commands():
            self.announce_commands_changed()
        match submission.op:
            case Interrupt():
                return self._interrupt_op(submission)
            case ListCommands():
                sid = submission.session_id or self.sessions.current_id or ""
                return CommandResult(
                    session_id=sid,
                    submission_id=submission.id,
                    mode="command",
                    status="completed",
                    reply="\n".join(f"/{c.name} {c.argument_hint}".rstrip() for c in self.registry.catalog()),
                    data=CommandCatalog(commands=self.registry.catalog()),
                )
        try:
            session = self.sessions.get(submission.session_id)
        except UnknownSession as exc:
            return error_result(submission.session_id or "", submission.id, "unknown_session", str(exc))
        state = SubmissionState(submission.id, session)
        session.active[state.id] = state
        builder = ResultBuilder(session.id, state.id)
        main = state.spawn(self._execute(state, submission.op, builder))
        try:
            await asyncio.wait({main})
            await state.drain()
        finally:
            session.active.pop(state.id, None)
            session.sync()
        if main.cancelled() or state.cancelled:
            builder.status = "cancelled"
        elif (failure := main.exception()) is not None:
            log.error("submission %s failed", state.id, exc_info=failure)
            builder.fail("internal_error", f"internal error: {type(failure).__name__}: {failure}")
        return builder.build()

    def interrupt(self, session_id: str | None, submission_id: str | None = None) -> list[str]:
        """Cancel the session's running submissions (or just one). A stale id does nothing."""
        session = self.sessions.loaded(session_id)
        if session is None:
            return []
        if submission_id is not None:
            state = session.active.get(submission_id)
            if state is None:
                return []
            state.cancel()
            return [submission_id]
        cancelled = []
        for state in list(session.active.values()):
            state.cancel()
            cancelled.append(state.id)
        return cancelled

    def interrupt_submission(self, submission_id: str) -> bool:
        """Cancel one submission wherever it runs; False when it has already finished."""
        state = self.sessions.find_active(submission_id)
        if state is None:
            return False
        state.cancel()
        return True

    def _interrupt_op(self, submission: Submission) -> CommandResult:
        session = self.sessions.loaded(submission.session_id)
        sid = session.id if session else (submission.session_id or "")
        cancelled = self.interrupt(sid) if session else []
        reply = f"Interrupted {len(cancelled)} running submission(s)." if cancelled else "Nothing was running."
        return CommandResult(
            session_id=sid,
            submission_id=submission.id,
            mode="command",
            status="completed",
            reply=reply,
            data=InterruptData(cancelled_submissions=cancelled),
        )

    async def _execute(self, state: SubmissionState, op: Op, b: ResultBuilder) -> None:
        match op:
            case UserInput(text=text, context=context):
                await self._user_input(state, text, context, b)
            case CodeAction():
                from coder_ls.engine.codeaction import code_action_prompt

                prompt = code_action_prompt(op, self.root, self.host)
                await self._run_action(state, RunAgent(prompt=prompt.text, context=prompt.context), b)
            case _:
                b.fail("invalid_operation", f"unsupported operation {type(op).__name__}")

    async def _user_input(self, state: SubmissionState, text: str, context: object, b: ResultBuilder) -> None:
        from coder_ls.protocol.args import SelectionContext

        ctx = context if isinstance(context, SelectionContext) else None
        match parse_input(text, self.registry.names()):
            case EmptyInput():
                b.fail("empty_input", "Nothing to do: the input is empty.")
            case Shell(command=command):
                await self._run_action(state, RunShell(command=command), b)
            case Prompt(text=prompt):
                await self._run_action(state, RunAgent(prompt=prompt, context=ctx), b)
            case UnknownSlash(name=name, suggestions=suggestions):
                hint = f" Did you mean: {', '.join('/' + s for s in suggestions)}?" if suggestions else ""
                b.fail("unknown_command", f"Unknown command /{name}.{hint} Type /help for the list.")
            case Slash(name=slash_name, args=args):
                found = self.registry.get(slash_name)
                assert found is not None
                outcome = await found.handler(self._command_context(state.session), args)
                await self._apply_outcome(state, outcome, b)

    async def _apply_outcome(self, state: SubmissionState, outcome: CommandOutcome, b: ResultBuilder) -> None:
        if outcome.error is not None:
            b.fail(outcome.error_code, outcome.error)
            return
        b.mode = "command"
        b.reply = outcome.reply
        b.data = outcome.data
        for action in outcome.actions:
            await self._run_action(state, action, b)
            if b.status == "failed":
                return

    async def _run_action(self, state: SubmissionState, action: Action, b: ResultBuilder) -> None:
        from coder_ls.engine import actions as run

        match action:
            case RunShell(command=command):
                await run.run_shell(self, state, command, b)
            case RunAgent():
                await run.run_agent(self, state, action, b)
            case ChangeModel():
                run.change_model(self, state, action, b)
            case ChangePermissions(preset=preset):
                run.change_permissions(self, state, preset, b)
            case ResetSession(kind=kind):
                run.reset_session(self, state, kind, b)
            case ResumeSession(session_id=session_id):
                run.resume_session(self, state, session_id, b)
            case UndoLast(all=everything):
                await run.undo(self, state, everything, b)
            case Compact(instructions=instructions):
                await run.compact(self, state, instructions, b)

    def _command_context(self, session: Session) -> CommandContext:
        config = self.config
        return CommandContext(
            root=self.root,
            config=config,
            session_id=session.id,
            model=session.model or config.model,
            provider=session.provider or config.provider,
            catalog=self.registry.catalog,
            list_sessions=self.sessions.list_infos,
            resolve_session=self.sessions.resolve_info,
        )

    async def shutdown(self) -> None:
        await self.sessions.close_all()

