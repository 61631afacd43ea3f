"""Command registry: name -> command. Commands return a CommandOutcome and never
touch the session; the executor carries out the actions they return."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from coder_ls.engine.commands.frontmatter import CommandMeta
from coder_ls.engine.trust import Origin
from coder_ls.protocol.actions import CommandOutcome
from coder_ls.protocol.results import CommandInfo

if TYPE_CHECKING:
    from coder_ls.engine.commands.context import CommandContext

Handler = Callable[["CommandContext", str], Awaitable[CommandOutcome]]
Kind = Literal["local", "prompt", "agent"]
Source = Literal["builtin", "workspace", "user", "skill", "mcp"]


class Command(msgspec.Struct, frozen=True):
    name: str
    description: str
    argument_hint: str
    handler: Handler
    kind: Kind = "local"
    source: Source = "builtin"
    path: Path | None = None  # where a prompt command was defined
    meta: CommandMeta | None = None  # a file's front matter
    body: str = ""  # a file's text after the front matter
    skill_dir: Path | None = None  # a skill's folder
    origin: Origin = "builtin"  # whose file it is (a skill's `source` does not say)

    def info(self) -> CommandInfo:
        meta = self.meta
        model_invocable = not meta.disable_model_invocation if meta is not None and self.source == "skill" else None
        return CommandInfo(
            name=self.name,
            description=self.description,
            argument_hint=self.argument_hint,
            kind=self.kind,
            source=self.source,
            path=str(self.path) if self.path is not None else None,
            user_invocable=meta.user_invocable if meta is not None else None,
            model_invocable=model_invocable,
        )


class Registry:
    def __init__(self) -> None:
        self._builtin: dict[str, Command] = {}
        self._extra: dict[str, Command] = {}
        self._mcp: dict[str, Command] = {}  # MCP servers' prompts (`mcp__server__prompt`)

    def add_builtin(self, command: Command) -> None:
        self._builtin[command.name] = command

    def local_names(self) -> set[str]:
        """The built-in local commands: a file cannot replace them (a built-in prompt command it can)."""
        return {n for n, c in self._builtin.items() if c.kind == "local"}

    def set_extra(self, commands: list[Command]) -> bool:
        """Replace the file-defined commands; True when any changed (its entry or its text)."""
        local = self.local_names()
        new = {c.name: c for c in commands if c.name not in local}
        before = [(c.info(), c.meta, c.body) for c in self._extra.values()]
        self._extra = new
        return before != [(c.info(), c.meta, c.body) for c in new.values()]

    def set_mcp(self, commands: list[Command]) -> bool:
        """Replace the MCP servers' prompt commands; True when the list changed."""
        before = [c.info() for c in self._mcp.values()]
        self._mcp = {c.name: c for c in commands}
        return before != [c.info() for c in self._mcp.values()]

    def get(self, name: str) -> Command | None:
        return self._extra.get(name) or self._builtin.get(name) or self._mcp.get(name)

    def names(self) -> list[str]:
        return [*self._builtin, *(n for n in self._extra if n not in self._builtin), *self._mcp]

    def builtin_names(self) -> list[str]:
        return list(self._builtin)

    def catalog(self) -> list[CommandInfo]:
        commands = [self._extra.get(n, c) for n, c in self._builtin.items()]
        commands += [c for n, c in self._extra.items() if n not in self._builtin]
        commands += list(self._mcp.values())
        return [c.info() for c in commands]
