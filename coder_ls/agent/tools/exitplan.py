"""`exit_plan_mode {plan}`: how the model hands over its plan in plan mode (contract
section 22).

Offered only in a turn that runs in the `plan` preset. The call keeps the plan on the
tool context; the turn then ends and emits it as `planProposed` (`agent/turn.py`). A
plan-mode turn that ends without the call hands over its final text instead.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput

TOOL_NAME = "exit_plan_mode"
MAX_PLAN_CHARS = 100_000

PLAN_NOTE = (
    "(You are in plan mode: read, search and run read-only commands, ask the user if a decision is "
    "theirs, but change nothing: no file is written and no command that writes runs until the user "
    f"approves. End by calling {TOOL_NAME} with the plan in Markdown.)"
)


class ExitPlanInput(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    plan: Annotated[str, msgspec.Meta(min_length=1, description="The plan, in Markdown")]


def make_exit_plan_tool() -> Tool[ExitPlanInput]:
    async def run(ctx: ToolContext, inp: ExitPlanInput) -> ToolOutput:
        if not inp.plan.strip():
            raise ToolError("the plan is empty: give the steps you would take")
        ctx.proposed_plan = inp.plan[:MAX_PLAN_CHARS]
        return ToolOutput("The plan was handed to the user. Stop here and wait for their answer.")

    return Tool(TOOL_NAME, "Hand over your plan to the user for approval (plan mode).", ExitPlanInput, run)
