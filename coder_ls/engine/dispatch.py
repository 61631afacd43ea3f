"""Input dispatch: what a line of user input means."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Protocol

import msgspec

from coder_ls.commands.registry import closest


class Slash(msgspec.Struct, frozen=True):
    name: str
    args: str


class Shell(msgspec.Struct, frozen=True):
    command: str


class Prompt(msgspec.Struct, frozen=True):
    text: str


class UnknownSlash(msgspec.Struct, frozen=True):
    name: str
    suggestions: tuple[str, ...]


class EmptyInput(msgspec.Struct, frozen=True):
    pass


Parsed = Slash | Shell | Prompt | UnknownSlash | EmptyInput


class _Immediate(Protocol):
    @property
    def immediate(self) -> bool: ...


def waits_in_line(parsed: Parsed, lookup: Callable[[str], _Immediate | None]) -> bool:
    """Whether this input takes its turn in the session's line (else it runs at once):
    a command that is `immediate` never waits behind a running submission (section 12)."""
    match parsed:
        case Slash(name="task", args=args):
            return args.split()[:1] not in (["status"], ["list"])  # looking never waits
        case Slash(name=name):
            command = lookup(name)
            return command is None or not command.immediate
        case Shell() | Prompt():
            return True
        case _:
            return False  # a mistake is answered at once


def parse_input(text: str, known: Iterable[str]) -> Parsed:
    """`/name args` -> Slash; `!cmd` -> Shell; `/abs/path ...` that exists -> Prompt."""
    stripped = text.strip()
    if not stripped:
        return EmptyInput()
    if stripped.startswith("!"):
        return Shell(stripped[1:].strip())
    if stripped.startswith("/"):
        head, _, rest = stripped.partition(" ")
        name = head[1:]
        known_set = set(known)
        if name in known_set:
            return Slash(name, rest.strip())
        if os.path.isabs(head) and os.path.exists(head):
            return Prompt(stripped)
        if "/" in name and os.path.exists(head.split(":")[0]):
            return Prompt(stripped)
        return UnknownSlash(name, closest(name, known_set))
    return Prompt(stripped)
