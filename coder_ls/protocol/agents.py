"""A subagent definition (contract section 13), as the command model reads it from its files
(`commands/agentdefs.py`) and the agent runs it (`agent/subagents.py`): shared data, so it
sits with the other shared types and neither side imports the other for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from coder_ls.protocol.config import HookEventName, HookGroup


@dataclass(frozen=True)
class AgentDef:
    """A subagent definition (contract section 13). `tools` None: every tool."""

    name: str
    description: str
    tools: tuple[str, ...] | None
    model: str | None
    prompt: str  # its system prompt (added after the fixed one)
    source: str  # builtin | workspace | user | plugin
    # its `hooks:` front matter, active while it runs (a workspace agent's only once trusted)
    hooks: Mapping[HookEventName, list[HookGroup]] = field(default_factory=dict)
    max_turns: int | None = None  # `maxTurns`: the model requests it may make at most


def _no_agents() -> Sequence[AgentDef]:
    return ()
