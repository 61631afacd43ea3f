"""Operations: what a client submits to the engine. One submission = one op."""

from __future__ import annotations

from typing import Literal

import msgspec

from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.args import Diagnostic, ImageArg, InputOrigin, Range, SelectionContext


class UserInput(msgspec.Struct, frozen=True):
    """Text as the user typed it: `/cmd`, `!shell` or a prompt (with its images)."""

    text: str
    context: SelectionContext | None = None
    images: tuple[ImageArg, ...] = ()
    pastes: tuple[str, ...] = ()
    origin: InputOrigin = "typed"  # what the user typed, or something else (contract section 18)
    # A prompt's turn grants, set by an edge from the user's own command line (`coder-ls exec
    # --allow/--deny`), never from a client's message: the LSP and ACP decoders leave it empty.
    grants: tuple[ToolGrant, ...] = ()
    replaces: str | None = None  # edit and resend: run in a fork before this submission (`engine/rewind.py`, `Resend`)


class Interrupt(msgspec.Struct, frozen=True):
    """Cancel everything running in the session, or, with `agent_id`, that one subagent."""

    agent_id: str | None = None


class CodeAction(msgspec.Struct, frozen=True):
    uri: str
    range: Range
    action: str
    instruction: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()


class RevertAgentHunk(msgspec.Struct, frozen=True):
    """Put back one hunk the agent wrote (`coder.revertHunk`); `path` as the edge read the uri."""

    path: str
    hunk_id: str


class ListCommands(msgspec.Struct, frozen=True):
    include_hidden: bool = False


class CompleteInput(msgspec.Struct, frozen=True):
    text: str
    position: int


class PlanAnswer(msgspec.Struct, frozen=True):
    """`coder.plan`: the user's answer to the plan `submission_id` proposed."""

    submission_id: str
    action: Literal["approve", "revise", "reject"]
    feedback: str = ""
    mode: str | None = None  # approve: the preset the plan runs in (None: the configuration's)


Op = UserInput | Interrupt | CodeAction | ListCommands | CompleteInput | PlanAnswer | RevertAgentHunk


class Submission(msgspec.Struct, frozen=True):
    id: str
    session_id: str | None
    op: Op
