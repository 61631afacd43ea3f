"""The read-only view of the engine that slash commands get."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Container, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from coder_ls.protocol.agents import AgentDef, no_agents
from coder_ls.protocol.config import Config
from coder_ls.protocol.results import CommandInfo, ModelData, PermissionEntry, SessionInfo

if TYPE_CHECKING:
    from coder_ls.mcp.hub import McpHub


def _no_refresh() -> bool:
    return False


def _no_entries() -> list[PermissionEntry]:
    return []


def _builtin_models(current: str) -> ModelData:
    from coder_ls.llm.catalog import ModelCatalog, model_data

    return model_data(ModelCatalog(), current, "anthropic")


class CommandContext(msgspec.Struct):
    root: Path
    config: Config
    session_id: str
    model: str
    provider: str
    catalog: Callable[[], list[CommandInfo]]
    list_sessions: Callable[[int], list[SessionInfo]]
    resolve_session: Callable[[str], SessionInfo | str]  # the session, or an error message
    agent_defs: Callable[[], Sequence[AgentDef]] = no_agents  # the subagent definitions
    models: Callable[[str], ModelData] = _builtin_models  # `/model`'s listing, `current` resolved
    owned_tasks: Container[str] = frozenset()  # the ids of the tasks this user created here
    mcp: McpHub | None = None  # the MCP servers (`/mcp`)
    env: Mapping[str, str] = msgspec.field(default_factory=dict)  # the server's environment (user folders)
    refresh_commands: Callable[[], bool] = _no_refresh  # reload the command sources now (after /plugin)
    # for /effort and /status (contract section 18)
    session_effort: str | None = None  # `/effort` of this session
    trusted: bool = False  # the user ran /trust here
    context_percent: int = 0  # of the context window the last model request used
    unavailable: Callable[[], Awaitable[list[CommandInfo]]] | None = None  # commands that cannot run now
    config_layers: Callable[[], list[tuple[str, dict[str, Any]]]] | None = None  # (source, values), lowest first
    # `/permissions`: every rule and session grant in force, numbered (contract section 22)
    permissions: Callable[[], list[PermissionEntry]] = _no_entries
