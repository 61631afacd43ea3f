"""The engine: submissions in, results and events out.

Every submission runs in a `Frame` (`frame.py`): queued behind the session's running one
or at once (read-only commands), its tasks (`tasks.py`) planned from the input when it
starts. The agent is handed in (`agent_api.AgentRunner`); the engine never imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from coder_ls.commands.availability import Probe, unavailable
from coder_ls.commands.builtin import register_builtins
from coder_ls.commands.catalog import Listings, visible
from coder_ls.commands.context import CommandContext
from coder_ls.commands.expand import split_arguments
from coder_ls.commands.files import LoadProblem, ParseCache, load_commands, scan_signed
from coder_ls.commands.frontcache import FrontMatterMemo, memo_path
from coder_ls.commands.registry import Registry
from coder_ls.commands.sources import all_dirs
from coder_ls.configcheck import describe
from coder_ls.engine.agent_api import AgentRunner, NoAgent, SkillInfo, TurnContext
from coder_ls.engine.agentlines import RevertHunk, revert_hunks
from coder_ls.engine.attachments import attach_images, place_pastes, refuse_images
from coder_ls.engine.codeaction import code_action_prompt
from coder_ls.engine.completion import complete
from coder_ls.engine.config import ConfigStore
from coder_ls.engine.dispatch import (
    EmptyInput,
    Parsed,
    Prompt,
    Shell,
    Slash,
    UnknownSlash,
    parse_input,
    waits_in_line,
)
from coder_ls.engine.filelist import FileListCache
from coder_ls.engine.frame import Frame, Planner, Task, TaskContext, until_done
from coder_ls.engine.host import Host
from coder_ls.engine.permlist import permission_entries
from coder_ls.engine.planmode import answer_planner, session_config
from coder_ls.engine.results import ResultBuilder
from coder_ls.engine.session import Session
from coder_ls.engine.sessions import SessionManager, UnknownSession
from coder_ls.engine.submission import SubmissionState
from coder_ls.guard.grants import SessionGrants
from coder_ls.guard.origins import command_refusal, shell_refusal
from coder_ls.guard.trust import OwnedIds
from coder_ls.hooks.dispatch import Hooks, SessionHookState
from coder_ls.hooks.records import SessionEnd, SessionEndReason
from coder_ls.protocol.actions import Paste, References, RunAgent
from coder_ls.protocol.agents import AgentDef
from coder_ls.protocol.args import InputOrigin, SelectionContext
from coder_ls.protocol.config import Config, Rule
from coder_ls.protocol.events import CommandsChanged
from coder_ls.protocol.ops import (
    CodeAction,
    CompleteInput,
    Interrupt,
    ListCommands,
    Op,
    PlanAnswer,
    RevertAgentHunk,
    Submission,
    UserInput,
)
from coder_ls.protocol.results import CommandInfo, CommandResult, ErrorInfo, InterruptData, error_result
from coder_ls.store.gitignore import state_problem

if TYPE_CHECKING:
    from coder_ls.commands.plugins import Plugin
    from coder_ls.history.checkpoints import Checkpoints
    from coder_ls.mcp.hub import McpHub

log = logging.getLogger(__name__)


def degraded_message(problem: str) -> str:
    return (
        f"coder-ls cannot keep its state in .coder/ ({problem}): /undo and session persistence "
        "are off (sessions last until the server stops). Everything else works."
    )


LONG_COMMAND = 4096  # bytes: a longer `!cmd` is checked in a worker thread (the loop keeps serving)


def _stamp(path: Path) -> tuple[int, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_mtime_ns, st.st_ino)


class Engine:
    def __init__(self, root: Path, host: Host, env: Mapping[str, str], *, agent: AgentRunner | None = None) -> None:
        self.root = root
        self.host = host
        self.env = env
        self.config_store = ConfigStore(root, env)
        self.registry = Registry()
        register_builtins(self.registry)
        self.listings = Listings()  # the last listing, given again while nothing it shows changed
        # The one place `.coder/` is created; when it cannot be written the server runs in its
        # degraded mode (no checkpoints, sessions in memory), said once, and nothing else stops.
        self.state_problem = state_problem(root)
        if self.state_problem is not None:
            log.warning("degraded mode: %s", self.state_problem)
            host.show_message("warning", degraded_message(self.state_problem))
        self.sessions = SessionManager(
            root, host, lambda: self.config, persist=self.state_problem is None, owned=OwnedIds(env, root, "sessions")
        )
        self._checkpoints: Checkpoints | None = None
        self._mcp: McpHub | None = None
        self._file_list: FileListCache | None = None  # for `@` completion, listed on first use
        self._subtasks: dict[str, Callable[[], None]] = {}  # subagent id -> cancel it alone
        self.agent: AgentRunner = agent if agent is not None else NoAgent()
        self._command_dirs = all_dirs(root, env)
        self._command_signature: tuple[tuple[str, int, int], ...] = ()
        self._front_matter = FrontMatterMemo(memo_path(env))  # read front matter, kept between starts
        self._parsed = ParseCache(self._front_matter)  # command files by (path, mtime, size)
        self._plugins_key: tuple[int, ...] = ()  # the plugin folder's and state's stamps
        self._plugin_problems: list[str] = []
        self._plugins: list[Plugin] = []  # the installed plugins, read when their folder changes
        self._command_problems: set[tuple[str, str]] = set()  # warned about once each
        self.owned_tasks = OwnedIds(env, root, "tasks")  # the gate's row `tasks` (guard/trust.py)
        self.hooks = Hooks(
            root,
            env,
            trusted=self.config_store.workspace_trusted,  # the gate's row `hooks`
            secrets=lambda: self.config.secrets.env_names,
            show=lambda kind, message: host.show_message("warning" if kind == "warning" else "info", message),
        )
        self.refresh_commands()
        from coder_ls.userdirs import fallback_note

        if (note := fallback_note(env)) is not None:  # HOME not writable: said once, then used as is
            host.show_message("warning", note)

    @property
    def mcp(self) -> McpHub:
        """The MCP servers (built on first use; nothing starts before a submission asks)."""
        if self._mcp is None:
            from coder_ls.mcp.hub import McpHub

            self._mcp = McpHub(
                self.root,
                self.env,
                config=lambda: self.config,
                trusted=self.config_store.workspace_trusted,
                on_change=self._mcp_changed,
            )
        return self._mcp

    def _mcp_changed(self) -> None:
        """A server's prompts may have changed: they are commands (`mcp__server__prompt`)."""
        from coder_ls.commands.mcp_prompts import prompt_commands

        if self._mcp is not None and self.registry.set_mcp(prompt_commands(self._mcp)):
            self.announce_commands_changed()

    @property
    def checkpoints(self) -> Checkpoints:
        if self._checkpoints is None:
            from coder_ls.history.checkpoints import Checkpoints  # a listing or /help needs none

            self._checkpoints = Checkpoints(
                self.root, owned=OwnedIds(self.env, self.root, "checkpoints"), unavailable=self.state_problem
            )
        return self._checkpoints

    async def revert_hunks(self, path: Path, current: str, first_line: int, last_line: int) -> list[RevertHunk]:
        """The hunks the last submission that changed `path` wrote and that are still intact
        at lines `first_line..last_line` of `current` (the "Revert agent change" action)."""
        rel = await asyncio.to_thread(self._recorded_rel, path)
        if rel is None:
            return []
        texts = await self.checkpoints.submission_texts(rel)
        if texts is None:
            return []
        submission_id, before, after = texts
        return await asyncio.to_thread(revert_hunks, before, after, current, first_line, last_line, submission_id)

    def _recorded_rel(self, path: Path) -> str | None:
        """`path` relative to the workspace, when submissions were ever recorded (a code-action
        request must not start the checkpoints of a workspace that has none)."""
        if self._checkpoints is None and not (self.root / ".coder" / "checkpoints" / "records.json").is_file():
            return None
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except (OSError, ValueError):
            return None

    # -- configuration ------------------------------------------------------------------
    @property
    def config(self) -> Config:
        return self.config_store.config

    def reload_config(self) -> str | None:
        """Recompute the configuration; a message for the user when part of it is bad."""
        problems = self.config_store.reload()
        messages = [describe(problems)] if problems else []
        untrusted = self.config_store.untrusted_message()
        if untrusted:
            messages.append(untrusted)
        return "\n".join(messages) or None

    def trust_workspace(self) -> str:
        """`/trust`: the folder's files act as the user's (`trust.BOUNDARY`) and the workspace
        file's widening settings apply; what the user is told."""
        from coder_ls.guard.trust import describe_widening

        wide = self.config_store.trust_workspace()
        self.reload_config()
        self._command_signature = ()  # command files are gated at load: load them again
        self.refresh_commands()
        self.mcp.trust()  # the workspace's .mcp.json, as it is now, may start its servers
        head = "Trusted this workspace: its command files, skills and agents now act as yours."
        if not wide:
            return f"{head} Nothing to trust in .coder/config.json: it widens no permission."
        return f"{head} Trusted .coder/config.json: {describe_widening(wide)} now apply (until the file changes them)."

    def persist_settings(self, **values: Any) -> str | None:
        """`/model`, `/permissions`: into `.coder/config.json` and effective at once (the next
        model request of a running turn sees it). Why it could not be saved, if it could not."""
        problem = None
        try:
            self.config_store.update_workspace(lambda c: c.update(values))
        except (ValueError, OSError) as exc:
            problem = str(exc)
        self.config_store.set_runtime(**values)
        self.reload_config()
        return problem

    def persist_rule(self, rule: Rule) -> None:
        """ "Always allow": the structured rule goes into `.coder/config.json`."""
        as_dict = {k: v for k, v in msgspec.to_builtins(rule).items() if v is not None}
        self.config_store.update_workspace(lambda c: c.setdefault("rules", []).append(as_dict))
        self.reload_config()

    def turn_context(self, sub: SubmissionState, result: ResultBuilder) -> TurnContext:
        return TurnContext(
            root=self.root,
            host=self.host,
            session=sub.session,
            submission_id=sub.id,
            emit=sub.emit,
            report=sub.report,
            result=result,
            config=lambda: session_config(self.config, sub.session),  # plan mode's preset (section 22)
            persist_rule=self.persist_rule,
            skills=lambda: self.model_skills(sub.session),
            pending_skills=lambda: self.model_skills(sub.session, pending=True),
            agents=self.agent_defs,
            register_subtask=self._register_subtask,
            owned_tasks=self.owned_tasks,
            hooks=self.hooks.bound(
                sub.session.id,
                self._transcript(sub.session),
                sub.emit,
                lambda: session_config(self.config, sub.session).permissions,
            ),
            mcp=self.mcp,
        )

    def _transcript(self, session: Session) -> str:
        """The session's log, as a hook's `transcript_path` ("" when sessions are not kept)."""
        from coder_ls.store.log import log_path

        return str(log_path(self.root, session.id)) if self.sessions.persist else ""

    def _register_subtask(self, task_id: str, cancel: Callable[[], None]) -> Callable[[], None]:
        self._subtasks[task_id] = cancel

        def unregister() -> None:
            self._subtasks.pop(task_id, None)

        return unregister

    def model_skills(self, session: Session | None = None, *, pending: bool = False) -> list[SkillInfo]:
        """The skills the model may load: from SKILL.md files, without
        `disable-model-invocation: true`, in catalog order; a conditional skill (`paths:`)
        only once the session touched a matching file, saying which (`activation.py`);
        `pending`: the conditional ones not active yet instead."""
        out = []
        for info in self.registry.catalog():
            c = self.registry.get(info.name)
            if c is None or not c.is_skill or c.meta is None or c.meta.disable_model_invocation:
                continue
            description = c.description
            by = session.touched.first_match(c.meta.paths) if session is not None and c.meta.paths else None
            if pending != (c.meta.paths != () and by is None):
                continue
            if by is not None:
                description = f"{description} (activated by {by})"
            out.append(SkillInfo(c.name, description, c.meta.when_to_use, c.body, c.skill_dir, c.plugin_root, c.origin))
        return out

    # -- prompt commands from files ---------------------------------------------------------
    def refresh_commands(self) -> bool:
        """Reload the command and skill files when they changed; True if the catalog did.
        A file that cannot be used is skipped with one warning (until its problem changes)."""
        from coder_ls.commands.plugins import installed, plugin_sources, plugins_dir

        key = _stamp(plugins_dir(self.env)) + _stamp(plugins_dir(self.env).parent / "plugins.json")
        if key != self._plugins_key:  # a plugin installed, removed or switched since
            self._plugins_key = key
            found, self._plugin_problems = installed(self.env)
            self._plugins = found
            self._command_dirs = all_dirs(self.root, self.env, plugin_sources(found))
            roots = [p.root for p in found if p.enabled]  # a plugin's hooks and MCP servers too
            self.hooks.set_plugins(roots)
            if roots or self._mcp is not None:
                self.mcp.set_plugins(roots)
        plugin_problems = self._plugin_problems
        files, sig = scan_signed(self._command_dirs, self._parsed)
        if sig == self._command_signature:
            return False
        self._command_signature = sig
        trusted = self.config_store.workspace_trusted()
        commands, problems = load_commands(
            self._command_dirs, trusted=trusted, cache=self._parsed, found_files=files, stamps=sig
        )
        self._front_matter.save_soon()  # what was read anew, for the next server (off this path)
        changed = self.registry.set_extra(commands)
        problems += [LoadProblem(s.hidden.path, s.message()) for s in self.registry.shadowed if s.hidden.path]
        problems += [LoadProblem(plugins_dir(self.env), p) for p in plugin_problems]
        seen = {(str(p.path), p.message) for p in problems}
        for problem in problems:
            if (str(problem.path), problem.message) not in self._command_problems:
                log.warning("%s", problem.describe())
                self.host.show_message("warning", problem.describe())
        self._command_problems = seen
        return changed

    def command_watch_dirs(self) -> list[Path]:
        from coder_ls.commands.plugins import plugins_dir

        return [d.path for d in self._command_dirs if d.source not in ("plugin", "bundled")] + [plugins_dir(self.env)]

    def announce_commands_changed(self) -> None:
        session = self.sessions.loaded(None)
        if session is not None:
            session.emit(CommandsChanged(), "")
        else:
            self.host.emit(CommandsChanged())

    # -- submissions --------------------------------------------------------------------
    async def submit(self, submission: Submission) -> CommandResult:
        self.mcp.start()  # the first submission starts the MCP servers, in the background
        self.file_list().warm()  # `@` completion answers at once from the first keystroke on
        # Each submission looks at the command files' stats first (documented: a request
        # never sees a catalog older than the files; the watcher only announces sooner).
        if self.refresh_commands():
            self.announce_commands_changed()
        match submission.op:
            case Interrupt(agent_id=str() as agent_id):
                return self._stop_agent_op(submission, agent_id)
            case Interrupt():
                return self._interrupt_op(submission)
            case ListCommands(include_hidden=include_hidden):
                sid = submission.session_id or self.sessions.current_id or ""
                loaded = self.sessions.loaded(sid or None)
                touched = loaded.touched if loaded is not None else ()
                made = self.listings.get(self.registry, self.probe(), include_hidden=include_hidden, touched=touched)
                return CommandResult(
                    session_id=sid,
                    submission_id=submission.id,
                    mode="command",
                    status="completed",
                    reply=made.reply,
                    data=made.catalog,
                )
            case CompleteInput(text=text, position=position):
                return await self._complete_op(submission, text, position)
        if not self.root.is_dir():  # deleted while the server runs: never re-created
            message = f"The workspace folder {self.root} no longer exists; reopen a workspace that does."
            return error_result(submission.session_id or "", submission.id, "workspace_missing", message)
        try:
            session = self.sessions.get(submission.session_id)
        except UnknownSession as exc:
            return error_result(submission.session_id or "", submission.id, "unknown_session", str(exc))
        wrap: Callable[[Planner], Planner] | None = None
        if isinstance(submission.op, UserInput) and submission.op.replaces is not None:
            from coder_ls.engine.rewind import Resend  # edit and resend: the text runs in a fork

            resend = Resend.prepare(self.sessions, session, submission.op)
            if isinstance(resend, ErrorInfo):
                return error_result(session.id, submission.id, resend.code, resend.message)
            session, wrap = resend.fork, resend.planner
        result = ResultBuilder(session.id, submission.id)
        queued, plan = self._plan(submission.op, result)
        if wrap is not None:
            plan = wrap(plan)
        sub = SubmissionState(submission.id, session, queued=queued)
        session.active[sub.id] = sub
        work = asyncio.ensure_future(Frame(self, sub, result, plan).run())
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:  # the request itself went away (shutdown): clean up first
            sub.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await until_done(work)
            raise

    def _plan(self, op: Op, b: ResultBuilder) -> tuple[bool, Planner]:
        """Whether the submission waits in the session's line, and how its tasks are chosen
        when it starts. The input is parsed now (in arrival order); commands run later.
        The tasks module is imported here, not with the engine: the first listing after
        start-up never plans a task (tests/e2e/test_catalog_startup.py)."""
        from coder_ls.engine.tasks import AgentTask

        match op:
            case CodeAction():
                b.mode = "nl"

                async def code_action(ctx: TaskContext) -> list[Task]:
                    prompt = code_action_prompt(op, self.root, self.host)
                    return [AgentTask(RunAgent(prompt=prompt.text, context=prompt.context, plan=False))]

                return True, code_action
            case PlanAnswer():
                b.mode = "nl"
                return True, answer_planner(op, b)
            case RevertAgentHunk(path=path, hunk_id=hunk_id):
                from coder_ls.engine.lenses import RevertHunkTask

                b.mode = "command"

                async def revert(ctx: TaskContext) -> list[Task]:
                    return [RevertHunkTask(path, hunk_id)]

                return True, revert
            case UserInput(text=text, context=context, origin=origin):
                pastes: tuple[Paste, ...] = ()
                if op.pastes:  # a long paste shows as `[Pasted text #N, L lines]` (a prompt's only)
                    text, pastes = place_pastes(text, op.pastes, self.config.input.paste_threshold)
                parsed = parse_input(text, self.registry.known_names())
                if pastes and not isinstance(parsed, Prompt):
                    parsed = parse_input(place_pastes(op.text, op.pastes, sys.maxsize)[0], self.registry.known_names())
                selection = context if isinstance(context, SelectionContext) else None
                planner = self._input_planner(parsed, selection, b, op, pastes, origin)
                return waits_in_line(parsed, self.registry.resolve), planner
        raise AssertionError(f"unsupported operation {type(op).__name__}")

    def probe(self) -> Probe:
        """What availability looks at, now (one per lookup or listing)."""
        return Probe(self.root, self.config, self.env)

    def _input_planner(
        self,
        parsed: Parsed,
        selection: SelectionContext | None,
        b: ResultBuilder,
        op: UserInput,
        pastes: tuple[Paste, ...] = (),
        origin: InputOrigin = "typed",
    ) -> Planner:
        from coder_ls.engine.tasks import AgentTask, task_for, titled

        async def plan(ctx: TaskContext) -> list[Task]:
            ctx.sub.origin = origin
            if op.images and not isinstance(parsed, Prompt):
                refuse_images(op.text, op.images, b, "Images go with a prompt, not with a /command or !shell line.")
                return []
            match parsed:
                case EmptyInput():
                    b.fail("empty_input", "Nothing to do: the input is empty.")
                case UnknownSlash(name=name, suggestions=suggestions):
                    hint = f" Did you mean: {', '.join('/' + s for s in suggestions)}?" if suggestions else ""
                    b.fail("unknown_command", f"Unknown command /{name}.{hint} Type /help for the list.")
                case Shell(command=command):
                    if (refused := shell_refusal(origin)) is not None:
                        b.fail("origin_refused", f"{command!r}: {refused}")
                        return []
                    return await self._plan_shell(ctx, command)
                case Prompt(text=prompt):
                    images = await attach_images(self.root, op.text, op.images, b)
                    if images is None:
                        return []
                    refs = References("typed" if origin == "typed" else "prompt")
                    run = RunAgent(
                        prompt=prompt,
                        context=selection,
                        images=images,
                        references=refs,
                        pastes=pastes,
                        grants=op.grants,
                    )
                    return [AgentTask(run)]
                case Slash(name=name, args=args):
                    found = self.registry.resolve(name)
                    assert found is not None
                    if (refused := command_refusal(found, origin)) is not None:
                        b.fail("origin_refused", refused)
                        return []
                    if (reason := unavailable(found, args, self.probe())) is not None:
                        b.fail("unavailable", reason)
                        return []
                    if found.is_sensitive():
                        ctx.session.masks.add(args, split_arguments(args))
                    outcome = await found.handler(self._command_context(ctx.session), args)
                    if outcome.error is not None:
                        b.fail(outcome.error_code, outcome.error)
                        return []
                    b.mode, b.reply, b.data = "command", outcome.reply, outcome.data
                    return [titled(task_for(action), found.progress_title()) for action in outcome.actions]
            return []

        if isinstance(parsed, Shell):
            b.mode, b.command = "raw", parsed.command
        elif isinstance(parsed, Prompt):
            b.mode = "nl"
        return plan

    async def _plan_shell(self, ctx: TaskContext, command: str) -> list[Task]:
        from coder_ls.engine.tasks import ShellTask
        from coder_ls.guard.safety import check_command  # the shell parser: only for `!cmd`

        b = ctx.result
        if not command:
            b.fail("empty_command", "Nothing to run: the command is empty.")
            return []
        cwd, env = ctx.session.shell.cwd, ctx.session.shell.exports()  # what the shell holds
        if len(command) > LONG_COMMAND:
            reason = await asyncio.to_thread(check_command, command, self.root, cwd=cwd, env=env)
        else:
            reason = check_command(command, self.root, cwd=cwd, env=env)
        if reason is not None:
            b.fail("refused", f"{command!r}: {reason}")
            b.command = command
            return []
        return [ShellTask(command)]

    def interrupt(self, session_id: str | None) -> list[str]:
        """Cancel everything of the session: the running submission and every queued one."""
        session = self.sessions.loaded(session_id)
        if session is None:
            return []
        return [state.id for state in list(session.active.values()) if state.cancel()]

    def interrupt_submission(self, submission_id: str) -> bool:
        """A cancel aimed at one submission (its progress token, its request): the same
        interrupt of its session. False when it has already finished (a stale cancel).
        A subagent's progress cancels that subagent alone."""
        if self._stop_subagent(submission_id):
            return True
        state = self.sessions.find_active(submission_id)
        if state is None or state.finished.is_set():
            return False
        if state.queued:
            self.interrupt(state.session.id)
        else:
            state.cancel()  # a read-only command stands alone
        return True

    def file_list(self) -> FileListCache:
        if self._file_list is None:
            self._file_list = FileListCache(self.root)
        return self._file_list

    async def _complete_op(self, submission: Submission, text: str, position: int) -> CommandResult:
        """`coder.completeInput`: answered at once, outside every session's line."""
        found = await complete(
            text,
            position,
            self.file_list(),
            self.registry.catalog,
            lambda: [(d.name, d.description) for d in self.agent_defs()],
        )
        sid = submission.session_id or self.sessions.current_id or ""
        return CommandResult(sid, submission.id, "command", "completed", data=found)

    def _interrupt_op(self, submission: Submission) -> CommandResult:
        session = self.sessions.loaded(submission.session_id)
        sid = session.id if session else (submission.session_id or "")
        cancelled = self.interrupt(sid) if session else []
        reply = f"Interrupted {len(cancelled)} submission(s)." if cancelled else "Nothing was running."
        return CommandResult(
            session_id=sid,
            submission_id=submission.id,
            mode="command",
            status="completed",
            reply=reply,
            data=InterruptData(cancelled_submissions=cancelled),
        )

    def _stop_agent_op(self, submission: Submission, agent_id: str) -> CommandResult:
        """`coder.interrupt {agentId}`: the Stop of one subagent (the same as cancelling its
        progress); the parent and the other subagents go on. A subagent that has already
        finished is not an error: the click raced its end."""
        sid = submission.session_id or self.sessions.current_id or ""
        stopped = self._stop_subagent(agent_id)
        return CommandResult(
            session_id=sid,
            submission_id=submission.id,
            mode="command",
            status="completed",
            reply=f"Stopped subagent {agent_id}." if stopped else f"Subagent {agent_id} is not running.",
            data=InterruptData(cancelled_submissions=[], cancelled_agents=[agent_id] if stopped else []),
        )

    def _stop_subagent(self, agent_id: str) -> bool:
        """Cancel one running subagent alone; False when none runs under that id."""
        if (cancel := self._subtasks.get(agent_id)) is None:
            return False
        cancel()
        return True

    def _command_context(self, session: Session) -> CommandContext:
        config: Config = self.config
        return CommandContext(
            root=self.root,
            config=config,
            session_id=session.id,
            model=session.model or config.model,
            provider=session.provider or config.provider,
            catalog=lambda: visible(self.registry, touched=session.touched),
            list_sessions=self.sessions.list_infos,
            resolve_session=self.sessions.resolve_info,
            agent_defs=self.agent_defs,
            models=lambda current: self.agent.models(self.config, current),
            owned_tasks=self.owned_tasks,
            mcp=self.mcp,
            env=self.env,
            refresh_commands=self._refresh_and_announce,
            session_effort=session.effort,
            trusted=self.config_store.workspace_trusted(),
            context_percent=min(100, session.last_context_tokens * 100 // max(1, config.context_limit_tokens)),
            unavailable=self._unavailable,
            config_layers=lambda: [(x.source, x.values) for x in self.config_store.layers()],
            permissions=lambda: permission_entries(self.config_store, session.extension(SessionGrants, SessionGrants)),
        )

    def _refresh_and_announce(self) -> bool:
        changed = self.refresh_commands()
        if changed:
            self.announce_commands_changed()
        return changed

    async def _unavailable(self) -> list[CommandInfo]:
        made = self.listings.get(self.registry, self.probe(), include_hidden=True)
        return [c for c in made.catalog.commands if not c.available]

    def agent_defs(self) -> list[AgentDef]:
        """The subagent definitions now (files re-read; each problem warned about once)."""
        from coder_ls.commands.agentdefs import agent_dirs, load_agents
        from coder_ls.commands.plugins import plugin_agent_dirs

        defs, problems = load_agents(
            agent_dirs(self.root, self.env),
            trusted=self.config_store.workspace_trusted(),
            plugins=plugin_agent_dirs(self._plugins),  # as the last refresh_commands read them
        )
        for problem in problems:
            key = (str(problem.path), problem.message)
            if key not in self._command_problems:
                self._command_problems.add(key)
                self.host.show_message("warning", problem.describe())
        return defs

    async def end_session(self, session: Session, reason: SessionEndReason, limit: float | None = None) -> None:
        """SessionEnd hooks, for a session whose SessionStart ran (`limit`: seconds at most, then
        they are killed: at shutdown the editor is waiting)."""
        state = session.extension(SessionHookState, SessionHookState)
        if not state.started:
            return
        state.started = False  # the next prompt starts it again (after /clear)
        fire = self.hooks.bound(
            session.id, self._transcript(session), lambda e: session.emit(e, ""), lambda: self.config.permissions
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(fire(SessionEnd(reason=reason)), limit)

    async def shutdown(self) -> None:
        self._front_matter.save()  # a memo still waiting for its delay
        for session in self.sessions.loaded_sessions():
            await self.end_session(session, "other", limit=5.0)
        await self.sessions.close_all()
        if self._mcp is not None:
            await self._mcp.close()
        if self._checkpoints is not None:
            self._checkpoints.close()
