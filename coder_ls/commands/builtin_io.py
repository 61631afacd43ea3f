"""The built-in output commands (contract section 19): `/context`, `/cost` and its alias
`/usage`, `/export`, and `/compact --clear`; `/shells` (section 22).

`/usage` is registered as an entry of its own calling `/cost`'s handler until the command
model's `aliases` field (contract section 18) lands; it then becomes an alias of `/cost`.
"""

from __future__ import annotations

import shlex

from coder_ls.commands.context import CommandContext
from coder_ls.commands.registry import Command
from coder_ls.protocol.actions import (
    CommandOutcome,
    Compact,
    DiffTurn,
    ExportSession,
    ListShells,
    Rewind,
    ShowContext,
    ShowCost,
)


def _no_args(name: str, args: str) -> CommandOutcome | None:
    if args.strip():
        return CommandOutcome(error=f"/{name} takes no argument, got {args.strip()!r}", error_code="invalid_argument")
    return None


async def cmd_context(ctx: CommandContext, args: str) -> CommandOutcome:
    return _no_args("context", args) or CommandOutcome(actions=[ShowContext()])


async def cmd_cost(ctx: CommandContext, args: str) -> CommandOutcome:
    return _no_args("cost", args) or CommandOutcome(actions=[ShowCost()])


async def cmd_shells(ctx: CommandContext, args: str) -> CommandOutcome:
    return _no_args("shells", args) or CommandOutcome(actions=[ListShells()])


def compact_clear(keep_last: int, rest: str) -> CommandOutcome:
    """`/compact --clear`: compaction's first level alone (old tool results cleared, no model call)."""
    if keep_last or rest.split()[1:]:
        return CommandOutcome(error="/compact --clear takes nothing else", error_code="invalid_argument")
    return CommandOutcome(actions=[Compact(clear=True)])


def _usage(message: str) -> CommandOutcome:
    return CommandOutcome(error=message, error_code="invalid_argument")


async def cmd_export(ctx: CommandContext, args: str) -> CommandOutcome:
    """`/export [path] [--format md|jsonl] [--force]` (a path with spaces in quotes)."""
    try:
        words = shlex.split(args)
    except ValueError as exc:
        return _usage(f"/export: {exc}")
    path, fmt, force = "", "", False
    while words:
        word = words.pop(0)
        if word == "--force":
            force = True
        elif word == "--format" or word.startswith("--format="):
            value = word.split("=", 1)[1] if "=" in word else (words.pop(0) if words else "")
            if value not in ("md", "jsonl"):
                return _usage(f"/export --format takes md or jsonl, got {value!r}")
            fmt = value
        elif word.startswith("--"):
            return _usage(f"/export: unknown option {word!r} (--format md|jsonl, --force)")
        elif path:
            return _usage(f"/export takes one path, got {path!r} and {word!r}")
        else:
            path = word
    if not fmt:
        fmt = "jsonl" if path.endswith(".jsonl") else "md"
    return CommandOutcome(actions=[ExportSession(path=path, format=fmt, force=force)])


def diff_turn(args: str) -> CommandOutcome:
    """`/diff turn [N]`: what submission N (default: the last) changed."""
    words = args.split()[1:]
    if len(words) > 1 or (words and not (words[0].isdigit() and int(words[0]) > 0)):
        return _usage(f"/diff turn takes a submission number (see /rewind), got {' '.join(words)!r}")
    return CommandOutcome(actions=[DiffTurn(index=int(words[0]) if words else None)])


async def cmd_rewind(ctx: CommandContext, args: str) -> CommandOutcome:
    """`/rewind` lists; `/rewind N [--code|--conversation|--both]` goes back to before N."""
    index: int | None = None
    mode = ""
    for word in args.split():
        if word in ("--code", "--conversation", "--both"):
            if mode and mode != word:
                return _usage("/rewind takes one of --code, --conversation, --both")
            mode = word
        elif word.isdigit() and int(word) > 0 and index is None:
            index = int(word)
        else:
            return _usage(f"/rewind [N] [--code|--conversation|--both]: unexpected {word!r}")
    if index is None and mode:
        return _usage(f"/rewind {mode} needs a submission number (see /rewind)")
    code, conversation = mode in ("", "--both", "--code"), mode in ("", "--both", "--conversation")
    return CommandOutcome(actions=[Rewind(index=index, code=code, conversation=conversation)])


def io_commands() -> tuple[Command, ...]:
    return (
        Command(
            "context",
            "Show what fills the model context, in tokens per part",
            "",
            cmd_context,
            immediate=True,  # it only reads (contract section 19)
            any_origin=True,
        ),
        Command(
            "cost",
            "Show the session's tokens and their estimated price",
            "",
            cmd_cost,
            aliases=("usage",),
            immediate=True,
            any_origin=True,
        ),
        Command(
            "shells",
            "List the agent's background shells (id, command, state, runtime, exit code)",
            "",
            cmd_shells,
            immediate=True,  # it only reads
            any_origin=True,
        ),
        Command(
            "export",
            "Write the session to a file (Markdown or the raw log)",
            "[path] [--format md|jsonl] [--force]",
            cmd_export,
        ),
        Command(
            "rewind",
            "List this session's submissions, or go back to before one (code, conversation or both)",
            "[N] [--code|--conversation|--both]",
            cmd_rewind,
        ),
    )
