"""Command registry: name -> command, and the ONE precedence order of command sources.

Commands return a CommandOutcome and never touch the session; the executor carries out
the actions they return. Every source of commands hands its candidates here, and the
registry alone decides which one a name means (`LAYERS`, highest first; the contract's
section 18):

    managed > built-in > workspace (trusted) > user > workspace (not trusted) > plugin > bundled > mcp

A workspace's files rank above the user's only once the user ran `/trust` there: before
that, a cloned repository's `/deploy` never hides the user's own (security.md). Within a
layer a skill beats a command file of the same name (Claude Code's documented rule), then
the first found wins (`.coder/` before `.claude/`). The managed layer (an administrator's)
may replace any built-in; the user's own layer a built-in *prompt* command (`/review`,
`/init`, `/commit`), never a local one; nothing else replaces a built-in. Plugin and MCP commands are namespaced
(`/plugin:name`), so they rarely clash. Every candidate that loses is a `Shadow`: its
winner's catalog entry lists it (`shadows`), and the caller warns once per shadowing.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from coder_ls.commands.availability import Need, needs_of
from coder_ls.commands.frontmatter import CommandMeta
from coder_ls.guard.trust import Origin
from coder_ls.protocol.actions import CommandOutcome
from coder_ls.protocol.results import Activation, CommandInfo

if TYPE_CHECKING:
    from coder_ls.commands.context import CommandContext

Handler = Callable[["CommandContext", str], Awaitable[CommandOutcome]]
Kind = Literal["local", "prompt", "agent"]
Source = Literal["builtin", "workspace", "user", "skill", "plugin", "bundled", "managed", "mcp"]
Layer = Literal["builtin", "bundled", "managed", "user", "plugin", "workspace", "mcp"]
LAYERS: tuple[Layer, ...] = ("managed", "builtin", "workspace", "user", "plugin", "bundled", "mcp")
_RANK = {layer: 2 * n for n, layer in enumerate(LAYERS)}
_UNTRUSTED_WORKSPACE = _RANK["user"] + 1  # below the user's own, above plugins
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
    untrusted: bool = False  # a workspace file read before /trust (it ranks below the user's)

    # The command model (contract section 18): data of the command, read by dispatch,
    # the catalog, /help and completion (a file's front matter fills in its own).
    aliases: tuple[str, ...] = ()  # other names it answers to (built-ins only)
    hidden: bool = False  # runnable, left out of /help and the catalog
    immediate: bool = False  # never waits behind a running submission (built-ins only)
    sensitive: bool = False  # its arguments are secret: *** wherever the input is shown
    progress_message: str = ""  # the work-done progress title while its turn runs
    needs: tuple[Need, ...] = ()  # what it needs to run (`availability.py` checks it, every time)
    any_origin: bool = False  # may run from a link, a code action or a client, not only typed

    @property
    def is_skill(self) -> bool:
        return self.skill_dir is not None

    def where(self) -> str:
        """How a shadow names this entry: its file, or its layer."""
        return str(self.path) if self.path is not None else f"the {self.layer} /{self.name}"

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
        model_invocable = not meta.disable_model_invocation if meta is not None and self.is_skill else None
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
            shadows=list(self.shadows) or None,
            namespace=self.namespace or None,
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
    rank = _UNTRUSTED_WORKSPACE if c.layer == "workspace" and c.untrusted else _RANK[c.layer]
    return (rank, 0 if c.is_skill else 1)


class Registry:
    def __init__(self) -> None:
        self._builtin: dict[str, Command] = {}
        self._extra: dict[str, Command] = {}
        self._mcp: dict[str, Command] = {}  # MCP servers' prompts (`mcp__server__prompt`)
        self.shadowed: list[Shadow] = []
        self._builtin_hidden: dict[str, tuple[str, ...]] = {}  # what a built-in hides
        self._catalog: list[CommandInfo] | None = None  # built once per change of the sources
        self._entries: list[tuple[CommandInfo, Command | None, tuple[Need, ...]]] | None = None
        self._unavailable: dict[tuple[str, str], CommandInfo] = {}  # (name, reason) -> its entry
        self._infos: dict[int, tuple[Command, CommandInfo]] = {}  # id -> (command, its entry), held

    def add_builtin(self, command: Command) -> None:
        self._builtin[command.name] = command
        self._catalog = self._entries = None
        self._unavailable = {}

    def local_names(self) -> set[str]:
        """The built-in local commands: a file cannot replace them (a built-in prompt command it can)."""
        return {n for n, c in self._builtin.items() if c.kind == "local"}

    def _beats(self, builtin: Command, other: Command) -> bool:
        if other.layer == "managed":  # the administrator's layer comes first (contract section 18)
            return False
        return builtin.kind == "local" or other.layer not in _REPLACES_BUILTIN_PROMPTS

    def set_extra(self, commands: list[Command]) -> bool:
        """Replace the commands of every non-built-in source with `commands` (any order:
        they are ranked here); True when the catalog or a command's text changed.
        `self.shadowed` then lists every candidate that lost its name."""
        ranked = sorted(enumerate(commands), key=lambda ic: (*_key(ic[1]), ic[0]))
        aliases = {a: c.name for c in self._builtin.values() for a in c.aliases}
        new: dict[str, Command] = {}
        hidden: dict[str, list[Command]] = {}
        shadows: list[Shadow] = []
        for _, c in ranked:
            builtin = self._builtin.get(c.name)
            if builtin is None and (target := aliases.get(c.name)) is not None:
                builtin = msgspec.structs.replace(self._builtin[target], kind="local")  # an alias is never a file's
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
        before = list(self._extra.values())
        self._extra = new
        self.shadowed = shadows
        self._catalog = self._entries = None
        self._unavailable = {}
        return len(before) != len(new) or any(
            a is not b and (a.info(), a.meta, a.body) != (b.info(), b.meta, b.body)
            for a, b in zip(before, new.values(), strict=True)
        )  # an unchanged file's command is the same object (files.py's cache): no entry built

    def set_mcp(self, commands: list[Command]) -> bool:
        """Replace the MCP servers' prompt commands (the last layer, `mcp__server__prompt`:
        a name a built-in or a file already has stays theirs); True when the list changed."""
        before = [c.info() for c in self._mcp.values()]
        taken = self._builtin.keys() | self._extra.keys()
        self._mcp = {c.name: msgspec.structs.replace(c, layer="mcp") for c in commands if c.name not in taken}
        self._catalog = self._entries = None
        self._unavailable = {}
        return before != [c.info() for c in self._mcp.values()]

    def get(self, name: str) -> Command | None:
        return self._extra.get(name) or self._builtin.get(name) or self._mcp.get(name)

    def names(self) -> list[str]:
        return [*self._builtin, *(n for n in self._extra if n not in self._builtin), *self._mcp]

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
        """The entries (a fresh list; the entries themselves are shared until a change: a
        field that depends on the moment, such as availability, is applied by the caller)."""
        if self._catalog is None:
            built: dict[int, tuple[Command, CommandInfo]] = {}
            for c in self.commands():
                hit = self._infos.get(id(c))
                built[id(c)] = hit if hit is not None and hit[0] is c else (c, c.info())
            self._infos = built  # an unchanged command keeps its entry: a change builds only its own
            self._catalog = [info for _, info in built.values()]
        return list(self._catalog)

    def entries(self) -> list[tuple[CommandInfo, Command | None, tuple[Need, ...]]]:
        """(entry, the command it names, what it needs) in catalog order, built once per
        change like `catalog` (whether the needs hold now is the caller's: `catalog.py`)."""
        if self._entries is None:
            self._entries = []
            for info in self.catalog():
                command = self.get(info.name)
                self._entries.append((info, command, needs_of(command) if command is not None else ()))
        return self._entries

    def unavailable_entry(self, info: CommandInfo, reason: str) -> CommandInfo:
        """`info` saying it cannot run now and why (the reason is the caller's, computed at
        each listing; only the entry built from it is kept, until the next change)."""
        key = (info.name, reason)
        entry = self._unavailable.get(key)
        if entry is None:
            entry = self._unavailable[key] = msgspec.structs.replace(info, available=False, reason=reason)
        return entry

    def commands(self) -> list[Command]:
        """Every command a name means, built-ins first, in catalog order."""
        out = [
            self._extra.get(n) or msgspec.structs.replace(c, shadows=self._builtin_hidden.get(n, ()))
            for n, c in self._builtin.items()
        ]
        return out + [c for n, c in self._extra.items() if n not in self._builtin] + list(self._mcp.values())


def closest(name: str, known: Iterable[str], limit: int = 3) -> tuple[str, ...]:
    names = sorted(set(known))
    prefixed = [n for n in names if n.startswith(name) or name.startswith(n)] if name else []
    fuzzy = difflib.get_close_matches(name, names, n=limit, cutoff=0.5)
    out: list[str] = []
    for n in [*prefixed, *fuzzy]:
        if n not in out:
            out.append(n)
    return tuple(out[:limit])
