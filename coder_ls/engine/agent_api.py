"""What the engine needs from an agent, and what it hands one.

The engine owns this interface; `coder_ls.agent` implements it (`agent/runner.py`) and
the two are wired together at the top (`coder_ls/wiring.py`). The engine never imports
the agent, so there is no import circle, and a turn reaches the engine only through the
narrow `TurnContext`: it cannot edit the configuration store or the engine's caches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from coder_ls.engine.host import Host
from coder_ls.engine.results import ResultBuilder
from coder_ls.hooks.dispatch import no_hooks
from coder_ls.hooks.records import AnyHookEvent, Verdict
from coder_ls.hooks.settings import HookSpec
from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.agents import AgentDef, no_agents
from coder_ls.protocol.config import Config, Rule
from coder_ls.protocol.events import Event
from coder_ls.protocol.results import ModelData

if TYPE_CHECKING:
    from coder_ls.engine.session import Session
    from coder_ls.guard.trust import OwnedIds
    from coder_ls.mcp.hub import McpHub


@dataclass(frozen=True)
class SkillInfo:
    """A skill the model may load with its `skill` tool (contract section 10)."""

    name: str
    description: str
    when_to_use: str
    body: str
    skill_dir: Path | None
    plugin_root: Path | None = None  # a plugin's skill: its plugin's folder
    origin: str = "user"  # user | workspace: a personal skill's folder may be read by the agent


def _no_skills() -> Sequence[SkillInfo]:
    return ()


def _no_subtasks(task_id: str, cancel: Callable[[], None]) -> Callable[[], None]:
    return lambda: None


class HookFire(Protocol):
    """Fire an event's hooks (`coder_ls/hooks`); `scoped`: a running skill's or agent's own."""

    async def __call__(self, event: AnyHookEvent, scoped: Sequence[HookSpec] = ()) -> Verdict: ...

    def for_emit(self, emit: Callable[[Event], None]) -> HookFire: ...


@dataclass(frozen=True)
class TurnContext:
    """One submission's view of the engine, for the agent.

    `session` holds the conversation (`context`, `record_message`, `compact`), the shell
    and the todo list; `config()` is the effective configuration *now* (a `/model` or
    `/permissions` sent during the turn applies from the next model request);
    `persist_rule` stores an "Always allow" rule in the workspace configuration."""

    root: Path
    host: Host
    session: Session
    submission_id: str
    emit: Callable[[Event], None]
    report: Callable[[str], None]
    result: ResultBuilder
    config: Callable[[], Config]
    persist_rule: Callable[[Rule], None]
    skills: Callable[[], Sequence[SkillInfo]] = field(default=_no_skills)  # the model-invocable ones, now
    agents: Callable[[], Sequence[AgentDef]] = field(default=no_agents)  # subagent definitions, now
    # A part of the submission with a progress of its own (a subagent): `register(id, cancel)`
    # makes a cancel aimed at `id` (its progress token) call `cancel`; it returns the unregister.
    register_subtask: Callable[[str, Callable[[], None]], Callable[[], None]] = field(default=_no_subtasks)
    # The tasks this user created here (recorded outside the workspace): only these resume.
    owned_tasks: OwnedIds | None = None
    hooks: HookFire = field(default=no_hooks)  # the submission's hooks (events in coder_ls/hooks/records.py)
    # The workspace's MCP servers (coder_ls/mcp/): their tools join the turn's.
    mcp: McpHub | None = None
    # conditional skills not active yet: the `skill` tool is offered for when one activates mid-turn
    pending_skills: Callable[[], Sequence[SkillInfo]] = field(default=_no_skills)

    def model(self) -> tuple[str, str]:
        """(model, provider) for the next request: the session's choice, else the configuration's."""
        config = self.config()
        if self.session.model:
            return self.session.model, self.session.provider or config.provider
        return config.model, config.provider


class AgentRunner(Protocol):
    """An agent: runs a turn, or compacts the conversation, filling `ctx.result`.

    Both may raise `asyncio.CancelledError` (an interrupt) or any exception (a bug): the
    submission frame around them finishes the checkpoint, ends the progress and sends
    `turnFinished` whatever happens."""

    async def run_turn(self, ctx: TurnContext, action: RunAgent) -> None: ...

    async def compact(self, ctx: TurnContext, instructions: str, keep_last: int = 0, clear: bool = False) -> None:
        """`/compact`: a summary (`keep_last` exchanges kept verbatim), or with `clear` only
        the first level (old tool results cleared, no model call)."""
        ...

    async def side_question(self, ctx: TurnContext, question: str) -> None:
        """`/btw`: answer from the session's context as it is, recording nothing."""
        ...

    async def context_report(self, ctx: TurnContext) -> None:
        """`/context`: count what the next model request would send, part by part, into
        `ctx.result` (a `ContextData`)."""
        ...

    def models(self, config: Config, current: str) -> ModelData:
        """`/model`'s listing: what the account can use (else the built-in table), with
        `current` (an id or an alias) resolved."""
        ...


class NoAgent:
    """The engine without an agent (headless tools, unit tests): turns fail clearly."""

    async def run_turn(self, ctx: TurnContext, action: RunAgent) -> None:
        ctx.result.fail("no_agent", "This server has no agent configured.")

    async def compact(self, ctx: TurnContext, instructions: str, keep_last: int = 0, clear: bool = False) -> None:
        ctx.result.fail("no_agent", "This server has no agent configured.")

    async def side_question(self, ctx: TurnContext, question: str) -> None:
        ctx.result.fail("no_agent", "This server has no agent configured.")

    async def context_report(self, ctx: TurnContext) -> None:
        ctx.result.fail("no_agent", "This server has no agent configured.")

    def models(self, config: Config, current: str) -> ModelData:
        from coder_ls.llm.catalog import ModelCatalog, model_data

        return model_data(ModelCatalog(), current, config.provider)
