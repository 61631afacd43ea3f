"""Command registry: name -> command, and the ONE precedence order of command sources.

Commands return a CommandOutcome and never touch the session; the executor carries out
the actions they return. Every source of commands hands its candidates here, and the
registry alone decides which one a name means (`LAYERS`, highest first):

    builtin > bundled > managed > user > plugin > workspace > mcp

Within a layer a skill beats a command file of the same name (Claude Code's documented
rule), then the first found wins (`.coder/` before `.claude/`). The user's own layer
may replace a built-in *prompt* command (`/review`, `/init`, `/commit`), never a local
one; nothing else replaces a built-in. Plugin and MCP commands are namespaced
(`/plugin:name`), so they rarely clash. Every candidate that loses is a `Shadow`: its
winner's catalog entry lists it (`shadows`), and the caller warns once per shadowing.
"""

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
Source = Literal["builtin", "workspace", "user", "skill", "plugin", "bundled", "managed", "mcp"]
Layer = Literal["builtin", "bundled", "managed", "user", "plugin", "workspace", "mcp"]
LAYERS: tuple[Layer, ...] = ("builtin", "bundled", "managed", "user", "plugin", "workspace", "mcp")
_RANK = {layer: n for n, layer in enumerate(LAYERS)}
# The layers that may replace a built-in prompt command: the user's own choices.
_REPLACES_BUILTIN_PROMPTS = frozenset({"managed", "user"})


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
    layer: Layer = "builtin"  # its place in the precedence order (LAYERS)
    namespace: str = ""  # the sub-folder (`dev` of `/dev:review`) or the plugin's name
    shadows: tuple[str, ...] = ()  # what this entry hides (set by the registry)
    plugin_root: Path | None = None  # a plugin command's plugin folder (${CLAUDE_PLUGIN_ROOT})

    @property
    def is_skill(self) -> bool:
        return self.skill_dir is not None

    def where(self) -> str:
        """How a shadow names this entry: its file, or its layer."""
        return str(self.path) if self.path is not None else f"the {self.layer} /{self.name}"

    def info(self) -> CommandInfo:
        meta = self.meta
        model_invocable = not meta.disable_model_invocation if meta is not None and self.is_skill else None
        return CommandInfo(
            name=self.name,
            description=self.description,
            argument_hint=self.argument_hint,
            kind=self.kind,
            source=self.source,
            path=str(self.path) if self.path is not None else None,
            user_invocable=meta.user_invocable if meta is not None else None,
            model_invocable=model_invocable,
            shadows=list(self.shadows) or None,
            namespace=self.namespace or None,
        )


class Shadow(msgspec.Struct, frozen=True):
    """`hidden` lost the name `name` to `winner` (one warning each)."""

    name: str
    hidden: Command
    winner: Command

    def message(self) -> str:
        w, h = self.winner, self.hidden
        if w.layer == "builtin":
            if h.layer == "workspace":
                return f"{h.name!r} is a built-in command: a workspace file cannot replace it"
            return f"/{h.name} is a built-in command and cannot be replaced"
        if h.layer == "workspace" and w.layer in ("user", "managed"):
            return f"{h.name!r} is your own ({w.where()}): the workspace's is ignored"
        if w.is_skill and not h.is_skill and w.layer == h.layer:
            return f"/{h.name} is also a skill ({w.where()}), which takes precedence over a command file"
        return f"/{h.name} is also defined by {w.where()} ({w.layer}), which takes precedence"


def _key(c: Command) -> tuple[int, int]:
    return (_RANK[c.layer], 0 if c.is_skill else 1)


class Registry:
    def __init__(self) -> None:
        self._builtin: dict[str, Command] = {}
        self._extra: dict[str, Command] = {}
        self._mcp: dict[str, Command] = {}  # MCP servers' prompts (`mcp__server__prompt`)
        self.shadowed: list[Shadow] = []
        self._builtin_hidden: dict[str, tuple[str, ...]] = {}  # what a built-in hides
        self._catalog: list[CommandInfo] | None = None  # built once per change of the sources

    def add_builtin(self, command: Command) -> None:
        self._builtin[command.name] = command
        self._catalog = None

    def local_names(self) -> set[str]:
        """The built-in local commands: a file cannot replace them (a built-in prompt command it can)."""
        return {n for n, c in self._builtin.items() if c.kind == "local"}

    def _beats(self, builtin: Command, other: Command) -> bool:
        return builtin.kind == "local" or other.layer not in _REPLACES_BUILTIN_PROMPTS

    def set_extra(self, commands: list[Command]) -> bool:
        """Replace the commands of every non-built-in source with `commands` (any order:
        they are ranked here); True when the catalog or a command's text changed.
        `self.shadowed` then lists every candidate that lost its name."""
        ranked = sorted(enumerate(commands), key=lambda ic: (*_key(ic[1]), ic[0]))
        new: dict[str, Command] = {}
        hidden: dict[str, list[Command]] = {}
        shadows: list[Shadow] = []
        for _, c in ranked:
            builtin = self._builtin.get(c.name)
            winner = new.get(c.name) or (builtin if builtin is not None and self._beats(builtin, c) else None)
            if winner is not None:
                shadows.append(Shadow(c.name, c, winner))
                hidden.setdefault(c.name, []).append(c)
                continue
            new[c.name] = c
        self._builtin_hidden = {}
        for name, lost in hidden.items():
            where = tuple(h.where() for h in lost)
            if name not in new:
                self._builtin_hidden[name] = where
        for name, c in new.items():
            where = tuple(h.where() for h in hidden.get(name, ()))
            if name in self._builtin:
                where = (f"the built-in /{name}", *where)
            if where:
                new[name] = msgspec.structs.replace(c, shadows=where)
        before = [(c.info(), c.meta, c.body) for c in self._extra.values()]
        self._extra = new
        self.shadowed = shadows
        self._catalog = None
        return before != [(c.info(), c.meta, c.body) for c in new.values()]

    def set_mcp(self, commands: list[Command]) -> bool:
        """Replace the MCP servers' prompt commands (the last layer, `mcp__server__prompt`:
        a name a built-in or a file already has stays theirs); True when the list changed."""
        before = [c.info() for c in self._mcp.values()]
        taken = self._builtin.keys() | self._extra.keys()
        self._mcp = {c.name: msgspec.structs.replace(c, layer="mcp") for c in commands if c.name not in taken}
        self._catalog = None
        return before != [c.info() for c in self._mcp.values()]

    def get(self, name: str) -> Command | None:
        return self._extra.get(name) or self._builtin.get(name) or self._mcp.get(name)

    def names(self) -> list[str]:
        return [*self._builtin, *(n for n in self._extra if n not in self._builtin), *self._mcp]

    def builtin_names(self) -> list[str]:
        return list(self._builtin)

    def catalog(self) -> list[CommandInfo]:
        """The entries (a fresh list; the entries themselves are shared until a change: a
        field that depends on the moment, such as availability, is applied by the caller)."""
        if self._catalog is None:
            self._catalog = [c.info() for c in self.commands()]
        return list(self._catalog)

    def commands(self) -> list[Command]:
        """Every command a name means, built-ins first, in catalog order."""
        out = [
            self._extra.get(n) or msgspec.structs.replace(c, shadows=self._builtin_hidden.get(n, ()))
            for n, c in self._builtin.items()
        ]
        return out + [c for n, c in self._extra.items() if n not in self._builtin] + list(self._mcp.values())
