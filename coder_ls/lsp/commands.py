"""Command ids and their arguments: decode with msgspec into an engine operation."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from coder_ls.protocol.args import (
    CodeActionArgs,
    InputArgs,
    InterruptArgs,
    ListCommandsArgs,
    ShellArgs,
    SlashArgs,
)
from coder_ls.protocol.ops import CodeAction, Interrupt, ListCommands, Op, UserInput

FIXED_IDS = ("coder.input", "coder.shell", "coder.interrupt", "coder.listCommands", "coder.codeAction")


class BadArguments(Exception):
    """Protocol misuse: becomes a JSON-RPC InvalidParams error naming the key."""


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


def _one_object(command: str, arguments: list[Any] | None) -> dict[str, Any]:
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


def decode(command: str, arguments: list[Any] | None, slash_names: list[str]) -> tuple[Op, str | None]:
    """(operation, sessionId) for a command id and its raw arguments."""
    raw = _one_object(command, arguments)
    match command:
        case "coder.input":
            a = _convert(command, raw, InputArgs)
            return UserInput(text=a.text, context=a.context), a.session_id
        case "coder.shell":
            s = _convert(command, raw, ShellArgs)
            return UserInput(text="!" + s.command), s.session_id
        case "coder.interrupt":
            i = _convert(command, raw, InterruptArgs)
            return Interrupt(), i.session_id
        case "coder.listCommands":
            lc = _convert(command, raw, ListCommandsArgs)
            return ListCommands(), lc.session_id
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
                instruction=c.instruction,
                diagnostics=tuple(c.diagnostics or ()),
            )
            return op, c.session_id
    name = command.removeprefix("coder.")
    if command.startswith("coder.") and name in slash_names:
        s2 = _convert(command, raw, SlashArgs)
        text = f"/{name} {s2.args}".rstrip() if s2.args else f"/{name}"
        return UserInput(text=text), s2.session_id
    raise BadArguments(f"unknown command {command!r}")
