"""The tasks of the output commands (contract section 19): `/context` and `/cost`.

Both only read: they never wait in the session's line (`dispatch.IMMEDIATE_COMMANDS`) and
take no checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass

from coder_ls.engine.frame import TaskContext
from coder_ls.engine.usage import SessionUsage, cost_report


@dataclass
class ContextTask:
    """`/context`: the agent counts what its next request would send."""

    title: str = "Counting the context"
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        await ctx.engine.agent.context_report(ctx.engine.turn_context(ctx.sub, ctx.result))


@dataclass
class CostTask:
    """`/cost` (`/usage`): the session's tokens (`engine/usage.py`), priced from the configuration."""

    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        usage = ctx.session.extension(SessionUsage, SessionUsage)
        ctx.result.reply, ctx.result.data = cost_report(usage, ctx.engine.config.pricing)
