"""Command registry: name -> command. Commands return a CommandOutcome and never
touch the session; the executor carries out the actions they return."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from coder_ls.engine.commands.availability import Need
from coder_ls.engine.commands.frontmatter import CommandMeta
from coder_ls.engine.trust import Origin
from coder_ls.protocol.actions import CommandOutcome
from coder_ls.protocol.results import Activation, CommandInfo

if TYPE_CHECKING:
    from coder_ls.engine.commands.context import CommandContext

Handler = Callable[["CommandContext", str], Awaitable[CommandOutcome]]
Kind = Literal["local", "prompt", "agent"]
Source = Literal["builtin", "workspace", "user", "skill", "bundled", "managed", "plugin", "mcp"]


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
    # The command model (contract section 18): data of the command, read by dispatch,
    # the catalog, /help and completion (a file's front matter fills in its own).
    aliases: tuple[str, ...] = ()  # other names it answers to (built-ins only)
    hidden: bool = False  # runnable, left out of /help and the catalog
    immediate: bool = False  # never waits behind a running submission (built-ins only)
    sensitive: bool = False  # its arguments are secret: *** wherever the input is shown
    progress_message: str = ""  # the work-done progress title while its turn runs
    needs: tuple[Need, ...] = ()  # what it needs to run (`availability.py` checks it, every time)
    any_origin: bool = False  # may run from a link, a code action or a client, not only typed

    def is_hidden(self) -> bool:
        return self.hidden or (self.meta is not None and self.meta.hidden)

    def is_sensitive(self) -> bool:
        return self.sensitive or (self.meta is not None and self.meta.sensitive)

    def progress_title(self) -> str:
        return self.progress_message or (self.meta.progress_message if self.meta is not None else "")

    def hint(self) -> str:
        """The argument hint, or one derived from the named arguments (`<file> <focus>`)."""
        if self.argument_hint or self.meta is None or not self.meta.arguments:
            return self.argument_hint
        return " ".join(f"<{a}>" for a in self.meta.arguments)

    def info(self, reason: str | None = None, active_by: str | None = None) -> CommandInfo:
        """The catalog entry; `reason`: why it cannot run now (availability is the caller's,
        computed at each listing); `active_by`: the file that activated a conditional skill."""
        meta = self.meta
        is_skill = meta is not None and self.skill_dir is not None  # a SKILL.md, whatever its source
        model_invocable = not meta.disable_model_invocation if meta is not None and is_skill else None
        activation = None
        if meta is not None and meta.paths:
            activation = Activation(paths=list(meta.paths), active=active_by is not None, by=active_by)
        return CommandInfo(
            name=self.name,
            description=self.description,
            argument_hint=self.hint(),
            kind=self.kind,
            source=self.source,
            path=str(self.path) if self.path is not None else None,
            user_invocable=meta.user_invocable if meta is not None else None,
            model_invocable=model_invocable,
            aliases=list(self.aliases),
            hidden=self.is_hidden(),
            available=reason is None,
            reason=reason,
            immediate=self.immediate,
            sensitive=self.is_sensitive(),
            progress_message=self.progress_title() or None,
            when_to_use=(meta.when_to_use or None) if meta is not None else None,
            arguments=list(meta.arguments) if meta is not None else [],
            effort=(meta.effort or None) if meta is not None else None,
            activation=activation,
        )


class Registry:
    def __init__(self) -> None:
        self._builtin: dict[str, Command] = {}
        self._extra: dict[str, Command] = {}

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

    def get(self, name: str) -> Command | None:
        return self._extra.get(name) or self._builtin.get(name)

    def names(self) -> list[str]:
        return [*self._builtin, *(n for n in self._extra if n not in self._builtin)]

    def builtin_names(self) -> list[str]:
        return list(self._builtin)

    # -- aliases (contract section 18): a built-in's other names --------------------------
    def alias_target(self, name: str) -> str | None:
        """The built-in that `name` is an alias of, or None."""
        return next((c.name for c in self._builtin.values() if name in c.aliases), None)

    def resolve(self, name: str) -> Command | None:
        """The command `name` runs: by its name, else as a built-in's alias."""
        found = self.get(name)
        if found is None and (target := self.alias_target(name)) is not None:
            found = self.get(target)
        return found

    def reserved_names(self) -> set[str]:
        """What no file command can take: the built-in local commands and every alias."""
        return self.local_names() | {a for c in self._builtin.values() for a in c.aliases}

    def builtin_ids(self) -> list[str]:
        """The names `coder.<name>` takes: the built-ins and their aliases."""
        return [*self.builtin_names(), *(a for c in self._builtin.values() for a in c.aliases)]

    def known_names(self) -> list[str]:
        """Every name input may use: the commands and the aliases (typo suggestions too)."""
        return [*self.names(), *(a for c in self._builtin.values() for a in c.aliases)]

    def catalog(self) -> list[CommandInfo]:
        commands = [self._extra.get(n, c) for n, c in self._builtin.items()]
        commands += [c for n, c in self._extra.items() if n not in self._builtin]
        return [c.info() for c in commands]
