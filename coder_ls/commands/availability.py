"""Whether a command can run now, and why not (contract section 18).

Computed on every lookup and every listing, never cached: the workspace becomes a git
repository, a key is set, the configuration's `commands.disabled` changes, all while the
server runs. A command says what it needs as data (`Command.needs`); this module is the
one place that checks it. One `Probe` serves one lookup or one listing, so a listing looks
for `.git` once, not once per command.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol

import msgspec

from coder_ls.commands.frontmatter import CommandMeta
from coder_ls.protocol.config import Config


class Need(msgspec.Struct, frozen=True):
    """Something a command needs to run: a git repository, or a model to answer."""

    what: Literal["git", "model"]
    only_with: str = ""  # the need applies only when the arguments start with this (`/undo --all`)


_MODEL = (Need("model"),)


class Command(Protocol):
    """What availability reads of a command (`registry.Command` has it): named here so
    that the registry, which holds `Need`s, is not imported back."""

    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def needs(self) -> tuple[Need, ...]: ...
    @property
    def kind(self) -> str: ...
    @property
    def meta(self) -> CommandMeta | None: ...


class Probe:
    """What the checks look at, for one lookup or listing (each looked up at most once)."""

    def __init__(self, root: Path, config: Config, env: Mapping[str, str]) -> None:
        self.root = root
        self.config = config
        self.env = env
        self._git: bool | None = None
        self._model: tuple[str | None] | None = None
        self.disabled = frozenset(config.commands.disabled)
        self._met: dict[tuple[Need, ...], bool] = {}

    def all_met(self, needs: tuple[Need, ...]) -> bool:
        """Whether every need holds whatever the arguments: a listing checks each distinct
        set of needs once, then only the commands whose needs fail say why (`unavailable`)."""
        met = self._met.get(needs)
        if met is None:
            met = self._met[needs] = all(
                self.in_git() if n.what == "git" else self.model_problem() is None for n in needs
            )
        return met

    def conditions(self) -> tuple[bool, str | None, frozenset[str]]:
        """Everything a listing's availability depends on, checked now: (in a git work tree,
        why no model can answer, the disabled names). Equal conditions give equal answers
        for every command (`unavailable` reads nothing else of the moment)."""
        return (self.in_git(), self.model_problem(), self.disabled)

    def in_git(self) -> bool:
        """Whether the workspace is in a git work tree: a `.git` (folder, or a worktree's
        file) in it or a folder above, as git finds it. A stat per folder, no git process:
        a listing costs no fork. A broken `.git` passes here; the command then says why."""
        if self._git is None:
            self._git = any(os.path.lexists(os.path.join(d, ".git")) for d in (self.root, *self.root.parents))
        return self._git

    def model_problem(self) -> str | None:
        """Why no model can answer (no API key and no offline provider), or None."""
        if self._model is None:
            self._model = (self._model_problem(),)
        return self._model[0]

    def _model_problem(self) -> str | None:
        from coder_ls.llm.models import provider_name

        match provider_name(self.config):
            case "anthropic":
                if any((self.env.get(k) or "").strip() for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")):
                    return None
                return 'no API key (set ANTHROPIC_API_KEY, or an offline provider: "provider": "scripted")'
            case "scripted":
                if self.config.scripted_file or self.env.get("CODER_SCRIPTED_FILE"):
                    return None
                return 'the "scripted" provider has no script ("scriptedFile" in .coder/config.json)'
        return None  # another provider says so itself when it runs


def needs_of(command: Command) -> tuple[Need, ...]:
    """A prompt command or skill is an agent turn: it needs a model, whatever it says (a
    skill the user may not invoke needs nothing of the user: its handler says so)."""
    if command.meta is not None and not command.meta.user_invocable:
        return command.needs
    if command.kind != "local" and not command.needs:
        return _MODEL
    if command.kind != "local" and not any(n.what == "model" for n in command.needs):
        return (*command.needs, Need("model"))
    return command.needs


def _applies(need: Need, args: str) -> bool:
    return not need.only_with or args.split()[:1] == [need.only_with]


def unavailable(command: Command, args: str, probe: Probe) -> str | None:
    """Why `command` cannot run now with `args`, or None when it can."""
    if not command.needs and command.kind == "local" and not probe.disabled:
        return None  # most built-ins: nothing to check
    if probe.disabled and not probe.disabled.isdisjoint((command.name, *command.aliases)):
        return f"/{command.name} is turned off by the configuration (commands.disabled)"
    for need in needs_of(command):
        if not _applies(need, args):
            continue
        match need.what:
            case "git":
                if not probe.in_git():
                    what = f"/{command.name} {need.only_with}".rstrip()
                    return f"{what} needs a git repository: not a git repository: {probe.root}"
            case "model":
                if (problem := probe.model_problem()) is not None:
                    return f"/{command.name} needs a model: {problem}"
    return None
