"""A subagent definition (contract section 13), as the command model reads it from its files
(`commands/agentdefs.py`) and the agent runs it (`agent/subagents.py`): shared data, so it
sits with the other shared types and neither side imports the other for it."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from coder_ls.protocol.config import HookEventName, HookGroup


class AgentDef(msgspec.Struct, frozen=True):
    """A subagent definition (contract section 13). `tools` None: every tool."""

    name: str
    description: str
    tools: tuple[str, ...] | None
    model: str | None
    prompt: str  # its system prompt (added after the fixed one)
    source: str  # builtin | workspace | user | plugin
    # its `hooks:` front matter, active while it runs (a workspace agent's only once trusted)
    hooks: dict[HookEventName, list[HookGroup]] = msgspec.field(default_factory=dict)
    max_turns: int | None = None  # `maxTurns`: the model requests it may make at most
    isolation: str | None = None  # `isolation: worktree`: it runs in a git worktree of its own (section 25)


def no_agents() -> Sequence[AgentDef]:
    """The subagent definitions of a context that has none."""
    return ()
