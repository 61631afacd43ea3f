"""The built-in output commands (contract section 19): `/context`, `/cost` and its alias `/usage`.

`/usage` is registered as an entry of its own calling `/cost`'s handler until the command
model's `aliases` field (contract section 18) lands; it then becomes an alias of `/cost`.
"""

from __future__ import annotations

from coder_ls.engine.commands.context import CommandContext
from coder_ls.engine.commands.registry import Command
from coder_ls.protocol.actions import CommandOutcome, Compact, ShowContext, ShowCost


def _no_args(name: str, args: str) -> CommandOutcome | None:
    if args.strip():
        return CommandOutcome(error=f"/{name} takes no argument, got {args.strip()!r}", error_code="invalid_argument")
    return None


async def cmd_context(ctx: CommandContext, args: str) -> CommandOutcome:
    return _no_args("context", args) or CommandOutcome(actions=[ShowContext()])


async def cmd_cost(ctx: CommandContext, args: str) -> CommandOutcome:
    return _no_args("cost", args) or CommandOutcome(actions=[ShowCost()])


def compact_clear(keep_last: int, rest: str) -> CommandOutcome:
    """`/compact --clear`: compaction's first level alone (old tool results cleared, no model call)."""
    if keep_last or rest.split()[1:]:
        return CommandOutcome(error="/compact --clear takes nothing else", error_code="invalid_argument")
    return CommandOutcome(actions=[Compact(clear=True)])


def io_commands() -> tuple[Command, ...]:
    return (
        Command("context", "Show what fills the model context, in tokens per part", "", cmd_context),
        Command("cost", "Show the session's tokens and their estimated price", "", cmd_cost),
        Command("usage", "Same as /cost", "", cmd_cost),
    )
