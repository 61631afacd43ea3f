"""Arguments of the `workspace/executeCommand` commands (one object each)."""

from __future__ import annotations

from typing import Literal

from coder_ls.protocol.base import Wire

# Where an input came from (contract section 18): what the user typed, or something else.
InputOrigin = Literal["typed", "codeAction", "link", "client", "remote"]


class Position(Wire):
    line: int
    character: int


class Range(Wire):
    start: Position
    end: Position


class Diagnostic(Wire, forbid_unknown_fields=False):
    """An LSP diagnostic as the client sent it (only the parts we use are typed)."""

    range: Range
    message: str
    severity: int | None = None
    source: str | None = None
    code: int | str | None = None


class SelectionContext(Wire):
    """Where the user is in the editor: the selection the input is about."""

    uri: str
    range: Range | None = None


class ImageArg(Wire):
    """An image sent with the input: a file (`uri`) or the bytes (`data`, base64, with the
    `mediaType` the client believes it has; the bytes decide)."""

    uri: str | None = None
    data: str | None = None
    media_type: str | None = None


class InputArgs(Wire):
    """`coder.input`: what a user typed."""

    text: str
    session_id: str | None = None
    context: SelectionContext | None = None
    images: list[ImageArg] | None = None
    pastes: list[str] | None = None  # pasted texts, each named in `text` by `[Pasted text #N]`
    origin: InputOrigin = "typed"
    # edit and resend (contract section 22): the submission this text replaces; it runs in a
    # new session forked before that one (the original stays as it is)
    replaces: str | None = None


class ShellArgs(Wire):
    """`coder.shell`: run a command in the session's shell."""

    command: str
    session_id: str | None = None
    origin: InputOrigin = "typed"


class SlashArgs(Wire):
    """`coder.<name>`: one built-in slash command."""

    args: str | None = None
    session_id: str | None = None
    origin: InputOrigin = "typed"


class InterruptArgs(Wire):
    """`coder.interrupt`: cancel everything running in the session; with `agentId`, stop
    that one running subagent alone (its parent and the other subagents go on)."""

    session_id: str | None = None
    agent_id: str | None = None


class FocusArgs(Wire):
    """`coder.focus`: whether the editor's window has the focus now (contract section 22).
    While it has not, a turn that ends or waits for the user is announced
    (`window/showMessage`, or `coder/notify` to a client that declares it)."""

    focused: bool
    session_id: str | None = None


class PlanArgs(Wire):
    """`coder.plan`: the user's answer to a `planProposed` event (contract section 22):
    `approve` runs the plan in the preset `mode` (default: the configuration's) in the same
    session, `revise` sends `feedback` and stays in plan mode, `reject` ends plan mode."""

    submission_id: str
    action: Literal["approve", "revise", "reject"]
    feedback: str | None = None
    mode: Literal["strict", "balanced", "auto-edit", "yolo"] | None = None
    session_id: str | None = None


class ListCommandsArgs(Wire):
    """`coder.listCommands`: sessionId is accepted and ignored; `includeHidden` lists the
    hidden commands too."""

    session_id: str | None = None
    include_hidden: bool = False


class CodeActionArgs(Wire):
    """`coder.codeAction`: what the server's code actions run."""

    uri: str
    range: Range
    action: str  # fix | explain | refactor | tests
    instruction: str | None = None
    diagnostics: list[Diagnostic] | None = None
    session_id: str | None = None


class RevertHunkArgs(Wire):
    """`coder.revertHunk`: the command of a code lens on lines the agent wrote (section 23):
    put that hunk back as it was, when its lines are still the agent's."""

    uri: str
    hunk_id: str  # the lens's own id for the hunk (never a line number: lines move)
    session_id: str | None = None
    # VS Code's client marks the commands it runs itself (`link`, section 18). A revert needs
    # no more than the hunk id, which only this server's lenses carry, and is undoable.
    origin: InputOrigin | None = None


class CompleteInputArgs(Wire):
    """`coder.completeInput`: what can complete the word at `position` (a character offset
    in `text`, default its end) when it starts with `@` (files, folders, agents) or is the
    leading `/command`."""

    text: str
    position: int | None = None
    session_id: str | None = None
