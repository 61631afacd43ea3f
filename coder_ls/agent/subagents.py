"""Subagents (contract section 13): the `task` tool and the runner behind it.

A subagent is an agent turn of its own: a fresh context (`SubSession`, which keeps its
messages apart from the session's), its definition's tools and model, the same policy
and approvals (the question names it), the session's shell and "Allow for session"
grants. Every event it emits carries its `agentId` and the `parentCallId` of the `task`
call, bracketed by `subagentStarted` / `subagentFinished`. `{tasks: [...]}` runs them at
most `agents.maxConcurrency` at once, `{chain: [...]}` one after another with `{previous}`
replaced by the previous answer; a failed or cancelled one says so in its slot and the
others go on (a chain stops at a failure: what follows depends on it). An interrupt of
the session cancels the `task` call and every subagent under it. Subagents get the
`task` tool only while `agents.maxDepth` allows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import msgspec

from coder_ls.agent.isolated import PatchOrder, Place, run_isolated, writes
from coder_ls.agent.references import attached_text
from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.engine.agent_api import TurnContext
from coder_ls.engine.results import ResultBuilder
from coder_ls.hooks.settings import specs_of
from coder_ls.protocol.actions import RunAgent, ToolGrant
from coder_ls.protocol.agents import AgentDef
from coder_ls.protocol.events import Event, SubagentFinished, SubagentStarted, SubagentUsage
from coder_ls.protocol.messages import Message, TextBlock

if TYPE_CHECKING:
    from coder_ls.agent.runner import Agent
    from coder_ls.protocol.results import UsageData

T = TypeVar("T")
ANSWER_MAX_CHARS = 8_000  # of each subagent's answer, in the task tool's result
MAX_JOBS = 12


class SubSession:
    """What a turn needs of a session, for a subagent: its own messages, the parent's
    agent shell and per-session state (grants, loaded skills)."""

    def __init__(self, parent: Any) -> None:
        self._parent = parent
        self.context: list[Message] = []
        self.todos: list[Any] = []
        self.last_context_tokens = 0
        self.agent_shell = parent.agent_shell
        self.model: str | None = None
        self.effort: str | None = getattr(parent, "effort", None)  # the session's `/effort`
        self.provider: str | None = None

    def record_message(self, message: Message, submission_id: str, *, in_context: bool = True) -> None:
        if in_context:
            self.context.append(message)

    def compact(self, summary: str, kept: list[Message] | None = None) -> None:
        self.context = [Message(role="user", content=[TextBlock(text=summary)]), *(kept or [])]
        self.last_context_tokens = 0

    def extension(self, kind: type[T], make: Callable[[], T]) -> T:
        return cast(T, self._parent.extension(kind, make))


class TaskSpec(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    prompt: str
    agent: str | None = None


class TaskInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Start subagents: one ({prompt, agent?}), several at once ({tasks: [...]}) or one
    after another ({chain: [...]}, where {previous} is the previous one's answer). Each has
    its own context: say everything it needs in its prompt. Agents: see /agents (general
    has every tool, explore only reads)."""

    prompt: str | None = None
    agent: str | None = None
    tasks: list[TaskSpec] | None = None
    chain: list[TaskSpec] | None = None


AGENTS_MAX_CHARS = 6_000  # the task tool's list of agents: every name, descriptions shortened to fit


def agents_description(agents: Sequence[AgentDef]) -> str:
    """The task tool's description: what it does, and every agent by name and description
    (the model picks an agent by its description, as in Claude Code)."""
    head = "Run subagents (see the input's description). Agents (name: when to use it):"
    if not agents:
        return "Run subagents (see the input's description)."
    share = max(0, (AGENTS_MAX_CHARS - sum(len(a.name) + 4 for a in agents)) // len(agents))
    lines = []
    for a in agents:
        text = " ".join(a.description.split())
        if len(text) > share:
            text = text[: max(0, share - 1)].rstrip() + "…" if share >= 24 else ""
        lines.append(f"- {a.name}: {text}" if text else f"- {a.name}")
    return head + "\n" + "\n".join(lines)


def make_task_tool(agents: Sequence[AgentDef] = ()) -> Tool[TaskInput]:
    async def run(ctx: ToolContext, inp: TaskInput) -> ToolOutput:
        forms = [x for x in (inp.prompt, inp.tasks, inp.chain) if x is not None]
        if len(forms) != 1:
            raise ToolError("give exactly one of prompt, tasks or chain")
        if ctx.run_subagents is None:
            raise ToolError("subagents cannot start subagents here (agents.maxDepth)")
        if inp.prompt is not None:
            specs = [TaskSpec(prompt=inp.prompt, agent=inp.agent)]
        else:
            specs = list(inp.tasks or inp.chain or [])
        if not specs or len(specs) > MAX_JOBS:
            raise ToolError(f"give 1 to {MAX_JOBS} tasks")
        jobs = [(s.agent or "general", s.prompt) for s in specs]
        text = await ctx.run_subagents(ctx, ctx.call_id, jobs, chain=inp.chain is not None)
        return ToolOutput(text)

    return Tool("task", agents_description(agents), TaskInput, run)


@dataclasses.dataclass
class SubOutcome:
    status: str  # completed | failed | cancelled
    text: str
    code: str = ""  # the error's code when it failed (a provider error's kind)
    tokens: int = 0


class Subagents:
    """The runner for one turn: what `ToolContext.run_subagents` calls."""

    def __init__(self, agent: Agent, parent: TurnContext, depth: int, denied: tuple[ToolGrant, ...] = ()) -> None:
        self.agent, self.parent, self.depth = agent, parent, depth
        # the starting turn's deny grants (`coder-ls exec --deny`, a command's): every subagent
        # under it is refused the same calls (its allow grants stay the turn's own)
        self.denied = tuple(g for g in denied if g.action == "deny")

    async def __call__(self, ctx: ToolContext, call_id: str, jobs: Sequence[tuple[str, str]], chain: bool) -> str:
        defs = {d.name: d for d in self.parent.agents()}
        unknown = sorted({name for name, _ in jobs if name not in defs})
        if unknown:
            raise ToolError(f"no agent named {', '.join(unknown)}. Agents: {', '.join(sorted(defs))}.")
        if chain:
            return await self._chain(call_id, [(defs[n], p) for n, p in jobs])
        limit = asyncio.Semaphore(self.parent.config().agents.max_concurrency)
        order = PatchOrder(len(jobs))  # worktree patches land in the order given

        async def one(i: int, definition: AgentDef, prompt: str) -> str:
            async with limit:
                return await self._slot(i, call_id, definition, prompt, (order, i))

        answers = await asyncio.gather(*(one(i, defs[n], p) for i, (n, p) in enumerate(jobs)))
        return "\n\n".join(answers)

    async def fork(self, action: RunAgent) -> None:
        """`context: fork`: the command runs as a subagent; its answer is the reply, and the
        session's context gets only a note that the command ran and what it answered."""
        defs = {d.name: d for d in self.parent.agents()}
        definition = defs.get(action.fork or "general")
        if definition is None:
            self.parent.result.fail("unknown_agent", f"{action.command}: no agent named {action.fork}")
            return
        if action.model:
            definition = msgspec.structs.replace(definition, model=action.model)
        prompt = action.prompt + await attached_text(self.parent, action)  # its `@` references, as text
        out = await self.run_one(self.parent.submission_id, definition, prompt)
        status, text = out.status, out.text
        who = f"{action.command or 'a command'} as a subagent ({definition.name})"
        note = f"(I ran {who}; it answered:)\n{text[:ANSWER_MAX_CHARS]}"
        parent = self.parent
        parent.session.record_message(Message(role="user", content=[TextBlock(text=note)]), parent.submission_id)
        b = self.parent.result
        b.mode = "nl"
        b.reply = text
        if status != "completed":
            b.fail("subagent_failed" if status == "failed" else status, text, mode="nl")

    async def _chain(self, call_id: str, jobs: list[tuple[AgentDef, str]]) -> str:
        answers: list[str] = []
        previous = ""
        for i, (definition, prompt) in enumerate(jobs):
            out = await self.run_one(call_id, definition, prompt.replace("{previous}", previous))
            status, text = out.status, out.text
            answers.append(_label(i, definition.name, status, text))
            if status != "completed":
                answers += [f"[{k + 1}] {d.name}: not run (an earlier step {status})" for k, (d, _) in
                            enumerate(jobs[i + 1 :], start=i + 1)]  # fmt: skip
                break
            previous = text
        return "\n\n".join(answers)

    async def _slot(
        self, i: int, call_id: str, definition: AgentDef, prompt: str, order: tuple[PatchOrder, int]
    ) -> str:
        out = await self.run_one(call_id, definition, prompt, order=order)
        return _label(i, definition.name, out.status, out.text)

    async def run_one(
        self,
        call_id: str,
        definition: AgentDef,
        prompt: str,
        shown: str | None = None,
        *,
        isolate: bool = False,
        order: tuple[PatchOrder, int] | None = None,
    ) -> SubOutcome:
        """(status, final text) of one subagent, with a work-done progress of its own whose
        Cancel stops it alone (its slot says "cancelled"; the parent goes on). `shown`: what
        its start event and progress say it does, when not its prompt (a /task step's).
        In a worktree of its own (`agent/isolated.py`) when its definition says
        `isolation: worktree`, or `isolate` (a /task step under `tasks.isolation`) and it
        may write; `order`: where its patch lands among its siblings'."""
        try:
            return await self._run_one(call_id, definition, prompt, shown, isolate, order)
        finally:
            if order is not None:
                order[0].done(order[1])

    async def _run_one(
        self,
        call_id: str,
        definition: AgentDef,
        prompt: str,
        shown: str | None,
        isolate: bool,
        order: tuple[PatchOrder, int] | None,
    ) -> SubOutcome:
        parent = self.parent
        agent_id = f"{definition.name}-{uuid.uuid4().hex[:8]}"
        shown = prompt if shown is None else shown
        if (definition.isolation == "worktree" or isolate) and writes(definition.tools):

            def in_place(place: Place | None) -> Awaitable[SubOutcome]:
                return self._body(agent_id, call_id, definition, prompt, shown, place)

            label = f"{definition.name}: {' '.join(shown.split())[:60]}"
            body = asyncio.ensure_future(run_isolated(parent, label, in_place, order))
        else:
            body = asyncio.ensure_future(self._body(agent_id, call_id, definition, prompt, shown))
        stopped = False

        def cancel() -> None:
            nonlocal stopped
            stopped = True
            body.cancel()

        unregister = parent.register_subtask(agent_id, cancel)
        outcome = "Failed"
        try:
            await parent.host.begin_progress(agent_id, f"Coder: {definition.name}", " ".join(shown.split())[:80])
            result = await body
            outcome = "Done" if result.status == "completed" else "Failed"
            return result
        except asyncio.CancelledError:
            outcome = "Cancelled"
            task = asyncio.current_task()
            if stopped and task is not None and not task.cancelling():
                return SubOutcome("cancelled", "cancelled by the user")
            raise
        finally:
            unregister()
            parent.host.end_progress(agent_id, outcome)

    async def _body(
        self, agent_id: str, call_id: str, definition: AgentDef, prompt: str, shown: str, place: Place | None = None
    ) -> SubOutcome:
        from coder_ls.agent.turn import Turn

        parent = self.parent

        def emit(event: Event) -> None:
            parent.emit(msgspec.structs.replace(event, agent_id=agent_id, parent_call_id=call_id))

        def report(message: str) -> None:
            parent.host.report_progress(agent_id, message)

        result = ResultBuilder(parent.result.session_id, parent.result.submission_id)
        sub = SubSession(parent.session)
        hooks = parent.hooks.for_emit(emit)  # its hookRan events are the subagent's
        ctx = dataclasses.replace(parent, session=cast(Any, sub), emit=emit, report=report, result=result, hooks=hooks)
        if place is not None:  # in a worktree: its root, its disk, its shell
            ctx = dataclasses.replace(ctx, root=place.root, host=place.host)
            sub.agent_shell = place.shell
        if definition.max_turns:  # the definition's `maxTurns`: its model requests, at most
            cap = definition.max_turns

            def capped() -> Any:
                config = parent.config()
                return msgspec.structs.replace(config, max_steps=min(config.max_steps, cap))

            ctx = dataclasses.replace(ctx, config=capped)
        emit(SubagentStarted(agent=definition.name, prompt=shown[:2000]))
        status = "failed"
        turn: Turn | None = None
        try:
            skills = ctx.skills()
            deeper = self.depth + 1 < parent.config().agents.max_depth
            registry, _ = self.agent.tools_for(skills, subagents=deeper, agents=ctx.agents(), config=ctx.config())
            names = definition.tools
            if names is not None and "bash" in names:  # its background shells: readable, killable
                names = (*names, *(n for n in ("shell_output", "shell_kill") if n not in names))
            tools = registry.subset(names)
            specs = [t.spec() for t in tools]

            def providers(c: TurnContext) -> Any:
                return self.agent.provider(c, definition.model)

            def system(config: Any) -> str:
                base = self.agent.system(config, skills)
                return f"{base}\n\n# Your role\n{definition.prompt}" if definition.prompt else base

            runner = Subagents(self.agent, ctx, self.depth + 1, self.denied) if deeper else None
            actor = f"Coder (subagent {definition.name})"
            turn = Turn(
                ctx,
                tools,
                providers,
                specs,
                system=system,
                subagents=runner,
                actor=actor,
                agent_type=definition.name,
                hooks=specs_of(definition.hooks, f"agent {definition.name}", "agent"),
            )
            await turn.run(RunAgent(prompt=prompt, plan=False, grants=self.denied))
            status = "completed" if result.status == "completed" else "failed"
            why = result.error.message if result.error else result.reply
            tokens = turn.usage.input_tokens + turn.usage.output_tokens
            if status == "completed":
                return SubOutcome(status, result.reply, tokens=tokens)
            return SubOutcome(status, f"failed: {why}", result.error.code if result.error else "", tokens)
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        except Exception as exc:  # a bug in one subagent: its slot says so, the others go on
            return SubOutcome("failed", f"failed: {type(exc).__name__}: {exc}", "internal")
        finally:
            emit(subagent_finished(cast(Any, status), turn.usage if turn is not None else None))


def subagent_finished(status: Literal["completed", "cancelled", "failed"], usage: UsageData | None) -> SubagentFinished:
    """The event that closes a subagent (or the /task planner), with what its turn used."""
    return SubagentFinished(
        status=status,
        usage=SubagentUsage(
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            steps=usage.steps if usage else 0,
        ),
    )


def _label(i: int, name: str, status: str, text: str) -> str:
    body = text if len(text) <= ANSWER_MAX_CHARS else text[:ANSWER_MAX_CHARS] + "\n[… cut]"
    return f"[{i + 1}] {name} ({status}):\n{body or '(no answer)'}"
