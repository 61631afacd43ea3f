"""Input actions: what a slash command asks the executor to do.

A command never touches the session itself; it returns a `CommandOutcome` with
text, typed data and actions, and the executor carries the actions out.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from coder_ls.protocol.args import SelectionContext
from coder_ls.protocol.results import Data


class RunAgent(msgspec.Struct, frozen=True):
    prompt: str
    context: SelectionContext | None = None


class RunShell(msgspec.Struct, frozen=True):
    command: str


class ChangeModel(msgspec.Struct, frozen=True):
    model: str
    provider: str | None = None


class ChangePermissions(msgspec.Struct, frozen=True):
    preset: str


class ResetSession(msgspec.Struct, frozen=True):
    """`/new` (kind new) or `/clear` (kind clear)."""

    kind: Literal["new", "clear"]


class ResumeSession(msgspec.Struct, frozen=True):
    session_id: str


class UndoLast(msgspec.Struct, frozen=True):
    all: bool = False


class Compact(msgspec.Struct, frozen=True):
    instructions: str = ""


Action = RunAgent | RunShell | ChangeModel | ChangePermissions | ResetSession | ResumeSession | UndoLast | Compact


class CommandOutcome(msgspec.Struct):
    """What a slash command produced before its actions run."""

    reply: str = ""
    data: Data | None = None
    actions: list[Action] = msgspec.field(default_factory=list)
    error: str | None = None  # a user mistake: becomes mode "error"
    error_code: str = "invalid_argument"
