"""Command registry: name -> command. Commands return a CommandOutcome and never
touch the session; the executor carries out the actions they return."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from coder_ls.protocol.actions import CommandOutcome
from coder_ls.protocol.results import CommandInfo

if TYPE_CHECKING:
    from coder_ls.engine.commands.context import CommandContext

Handler = Callable[["CommandContext", str], Awaitable[CommandOutcome]]
Kind = Literal["local", "prompt", "agent"]
Source = Literal["builtin", "workspace", "user", "skill"]


class Command(msgspec.Struct, frozen=True):
    name: str
    description: str
    argument_hint: str
    handler: Handler
    kind: Kind = "local"
    source: Source = "builtin"
    path: Path | None = None  # where a prompt command was defined

    def info(self) -> CommandInfo:
        return CommandInfo(
            name=self.name,
            description=self.description,
            argument_hint=self.argument_hint,
            kind=self.kind,
            source=self.source,
        )


class Registry:
    def __init__(self) -> None:
        self._builtin: dict[str, Command] = {}
        self._extra: dict[str, Command] = {}

    def add_builtin(self, command: Command) -> None:
        self._builtin[command.name] = command

    def set_extra(self, commands: list[Command]) -> bool:
        """Replace the file-defined commands; True when the catalog changed."""
        new = {c.name: c for c in commands if c.name not in self._builtin}
        before = {n: (c.description, c.argument_hint, c.source) for n, c in self._extra.items()}
        after = {n: (c.description, c.argument_hint, c.source) for n, c in new.items()}
        self._extra = new
        return before != after

    def get(self, name: str) -> Command | None:
        return self._builtin.get(name) or self._extra.get(name)

    def names(self) -> list[str]:
        return [*self._builtin, *self._extra]

    def builtin_names(self) -> list[str]:
        return list(self._builtin)

    def catalog(self) -> list[CommandInfo]:
        return [c.info() for c in [*self._builtin.values(), *self._extra.values()]]
