"""Command ids and their arguments: decode with msgspec into an engine operation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec
from pygls.uris import to_fs_path

from coder_ls.protocol.args import (
    CodeActionArgs,
    CompleteInputArgs,
    FocusArgs,
    ImageArg,
    InputArgs,
    InterruptArgs,
    ListCommandsArgs,
    PlanArgs,
    RevertHunkArgs,
    ShellArgs,
    SlashArgs,
)
from coder_ls.protocol.ops import (
    CodeAction,
    CompleteInput,
    Interrupt,
    ListCommands,
    Op,
    PlanAnswer,
    RevertAgentHunk,
    UserInput,
)

FIXED_IDS = (
    "coder.input",
    "coder.shell",
    "coder.interrupt",
    "coder.listCommands",
    "coder.codeAction",
    "coder.completeInput",
    "coder.plan",
    "coder.revertHunk",
)


FOCUS_ID = "coder.focus"  # whether the editor's window has the focus: not a submission (lsp/attention.py)


class BadArguments(Exception):
    """Protocol misuse: becomes a JSON-RPC InvalidParams error naming the key."""


class BadInput(Exception):
    """Text the user sent that cannot run (a shell command with a NUL or a lone surrogate):
    becomes an error result with a clear message, like any other user mistake."""

    def __init__(self, message: str, session_id: str | None) -> None:
        super().__init__(message)
        self.session_id = session_id


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _clean(text: str) -> str:
    """A prompt or an argument: a lone UTF-16 surrogate (JSON allows `\\ud800`, UTF-8 cannot
    hold it) becomes U+FFFD, so the text can be stored and sent to the model."""
    if not _has_surrogate(text):
        return text
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def _shell_text(command: str, session_id: str | None) -> str:
    """A shell command is passed to bash as is: refuse what bash cannot take."""
    if "\x00" in command:
        raise BadInput(
            "the command contains a NUL character (\\0): bash cannot take it in a command line; remove it",
            session_id,
        )
    if _has_surrogate(command):
        bad = next(c for c in command if "\ud800" <= c <= "\udfff")
        raise BadInput(
            f"the command contains a lone surrogate (U+{ord(bad):04X}), which is not valid text and "
            "cannot be passed to bash; send the character as proper UTF-8",
            session_id,
        )
    return command


def _images(a: InputArgs) -> tuple[ImageArg, ...]:
    """Each image is a `uri` or `data` (with its `mediaType`), never both nor neither."""
    for n, image in enumerate(a.images or ()):
        if (image.uri is None) == (image.data is None):
            raise BadArguments(f"coder.input: `images[{n}]` takes either `uri` or `data` (base64 with `mediaType`)")
        if image.data is not None and image.media_type is None:
            raise BadArguments(f"coder.input: `images[{n}]` has `data` without its `mediaType`")
    return tuple(a.images or ())


def command_ids(slash_names: list[str]) -> list[str]:
    return [*FIXED_IDS, *(f"coder.{n}" for n in slash_names if f"coder.{n}" not in FIXED_IDS)]


def _explain(command: str, exc: msgspec.ValidationError) -> str:
    text = str(exc)
    unknown = re.search(r"unknown field `([^`]+)`", text)
    if unknown:
        return f"{command}: unknown key `{unknown.group(1)}` in the argument"
    missing = re.search(r"missing required field `([^`]+)`", text)
    if missing:
        return f"{command}: the argument needs the key `{missing.group(1)}`"
    at = re.search(r"(.*) - at `\$\.?([^`]*)`", text)
    if at:
        return f"{command}: bad value for key `{at.group(2)}`: {at.group(1)}"
    return f"{command}: {text}"


def _one_object(command: str, arguments: Sequence[Any] | None) -> dict[str, Any]:
    if not arguments:
        return {}
    if len(arguments) > 1:
        raise BadArguments(f"{command} takes at most one argument (an object), got {len(arguments)}")
    arg = arguments[0]
    if arg is None:
        return {}
    if not isinstance(arg, dict):
        raise BadArguments(f"{command}: the argument must be an object, got {type(arg).__name__}")
    return arg


def _convert(command: str, raw: dict[str, Any], kind: type[Any]) -> Any:
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise BadArguments(_explain(command, exc)) from None


def focus_args(arguments: Sequence[Any] | None) -> FocusArgs:
    """`coder.focus {focused}`: the argument, or InvalidParams naming what is wrong."""
    raw = _one_object(FOCUS_ID, arguments)
    focus: FocusArgs = _convert(FOCUS_ID, raw, FocusArgs)
    return focus


def decode(command: str, arguments: Sequence[Any] | None, slash_names: list[str]) -> tuple[Op, str | None]:
    """(operation, sessionId) for a command id and its raw arguments."""
    raw = _one_object(command, arguments)
    match command:
        case "coder.input":
            a = _convert(command, raw, InputArgs)
            images = _images(a)
            pastes = tuple(_clean(p) for p in a.pastes or ())
            text = _shell_text(a.text, a.session_id) if a.text.strip().startswith("!") else _clean(a.text)
            if a.replaces is not None and not a.replaces.strip():
                raise BadArguments("coder.input: `replaces` is empty (a submissionId, or leave it out)")
            typed = UserInput(
                text=text, context=a.context, images=images, pastes=pastes, origin=a.origin, replaces=a.replaces
            )
            return typed, a.session_id
        case "coder.shell":
            s = _convert(command, raw, ShellArgs)
            return UserInput(text="!" + _shell_text(s.command, s.session_id), origin=s.origin), s.session_id
        case "coder.interrupt":
            i = _convert(command, raw, InterruptArgs)
            if i.agent_id is not None and not i.agent_id.strip():
                raise BadArguments("coder.interrupt: `agentId` is empty (leave it out to interrupt the session)")
            return Interrupt(agent_id=i.agent_id), i.session_id
        case "coder.listCommands":
            lc = _convert(command, raw, ListCommandsArgs)
            return ListCommands(include_hidden=lc.include_hidden), lc.session_id
        case "coder.completeInput":
            ci = _convert(command, raw, CompleteInputArgs)
            position = len(ci.text) if ci.position is None else ci.position
            if not 0 <= position <= len(ci.text):
                raise BadArguments(
                    f"coder.completeInput: `position` {position} is outside the text (0..{len(ci.text)})"
                )
            return CompleteInput(text=ci.text, position=position), ci.session_id
        case "coder.plan":
            p = _convert(command, raw, PlanArgs)
            if not p.submission_id.strip():
                raise BadArguments("coder.plan: `submissionId` is empty (the planProposed event's)")
            feedback = _clean(p.feedback or "")
            return PlanAnswer(p.submission_id, p.action, feedback, p.mode), p.session_id
        case "coder.codeAction":
            c = _convert(command, raw, CodeActionArgs)
            if c.action not in ("fix", "explain", "refactor", "tests"):
                raise BadArguments(
                    f"coder.codeAction: bad value for key `action`: {c.action!r} (one of fix, explain, refactor, tests)"
                )
            op = CodeAction(
                uri=c.uri,
                range=c.range,
                action=c.action,
                instruction=None if c.instruction is None else _clean(c.instruction),
                diagnostics=tuple(c.diagnostics or ()),
            )
            return op, c.session_id
        case "coder.revertHunk":
            r = _convert(command, raw, RevertHunkArgs)
            path = to_fs_path(r.uri) if r.uri.startswith("file:") else None
            if not path:
                raise BadArguments(f"coder.revertHunk: `uri` is not a file: URI: {r.uri!r}")
            if not r.hunk_id.strip():
                raise BadArguments("coder.revertHunk: `hunkId` is empty (the code lens's)")
            return RevertAgentHunk(path=path, hunk_id=r.hunk_id), r.session_id
    name = command.removeprefix("coder.")
    if command.startswith("coder.") and name in slash_names:
        s2 = _convert(command, raw, SlashArgs)
        text = f"/{name} {_clean(s2.args)}".rstrip() if s2.args else f"/{name}"
        return UserInput(text=text, origin=s2.origin), s2.session_id
    raise BadArguments(f"unknown command {command!r}")
