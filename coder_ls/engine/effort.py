"""`/effort`: the session's default reasoning effort (contract section 18).

A command's or skill's own `effort:` applies to its turn alone and wins; without either,
the configuration's `effort` applies (and without that, the model's default). What a level
sends to each model is `coder_ls.llm.request_plan`'s (`output_config.effort`, or a
thinking budget for a model without effort levels).
"""

from __future__ import annotations

from dataclasses import dataclass

from coder_ls.engine.frame import TaskContext


@dataclass
class ChangeEffortTask:
    level: str | None  # None: back to the configuration's
    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        ctx.session.effort = self.level
