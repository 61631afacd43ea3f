"""Plan mode in a session (contract section 22): `/plan [prompt]` enters it, the agent's
turn ends with a `planProposed` event, and `coder.plan {submissionId, action}` answers it.

The session keeps a `PlanState` (an extension: the engine does not know the agent's
types, the agent reads and fills this one). While `planning`, every configuration the
session's turns see (`session_config`) has the preset `plan` and a `read-only` sandbox:
the one tool-call pipeline then judges each call in that preset (`agent/planpolicy.py`).

- `approve` leaves plan mode and runs the plan in the preset the user picks (`mode`,
  applied as `/permissions` applies one; none: the configuration's, `balanced` when that
  is `plan` itself), in the same session;
- `revise` sends the feedback and stays in plan mode;
- `reject` leaves plan mode and runs nothing.

The `userMessage` of an approval or a revision says what the user did ("Approved the plan
(auto-edit)", "Revise the plan: <feedback>"), not the instruction the model gets.

Only the latest proposed plan of a session can be answered, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from coder_ls.protocol.actions import RunAgent
from coder_ls.protocol.config import PLAN, Config
from coder_ls.protocol.events import PermissionsChanged, PlanProposed
from coder_ls.protocol.ops import PlanAnswer

if TYPE_CHECKING:
    from coder_ls.engine.frame import Planner, Task, TaskContext
    from coder_ls.engine.results import ResultBuilder
    from coder_ls.engine.session import Session

APPROVED = "The user approved your plan. Carry it out now, step by step.\n\nThe plan:\n\n{plan}"
REVISE = (
    "The user asks you to revise the plan before anything is done. You are still in plan mode: "
    "read and search as needed, then hand over the revised plan.\n\nThe user's feedback:\n\n{feedback}"
)
FALLBACK_MODE = "balanced"  # approving a plan when the configuration's own preset is `plan`


@dataclass
class PlanState:
    """A session's plan mode: whether it is planning, and the plan awaiting an answer."""

    planning: bool = False
    proposed: dict[str, str] = field(default_factory=dict)  # submissionId -> plan (the latest only)


def plan_state(session: Session) -> PlanState:
    return session.extension(PlanState, PlanState)


def session_config(config: Config, session: Session) -> Config:
    """The configuration the session's turns see: in plan mode, the `plan` preset and a
    read-only sandbox (unless the sandbox is off, where only the policy holds)."""
    if not plan_state(session).planning and config.permissions != PLAN:
        return config
    sandbox = config.sandbox
    if sandbox.mode != "off":
        sandbox = msgspec.structs.replace(sandbox, mode="read-only")
    return msgspec.structs.replace(config, permissions=PLAN, sandbox=sandbox)


def propose(session: Session, submission_id: str, plan: str) -> PlanProposed:
    """The agent's plan is handed over: remember it for `coder.plan`, and the event to emit."""
    state = plan_state(session)
    state.proposed.clear()
    state.proposed[submission_id] = plan
    return PlanProposed(plan=plan)


@dataclass
class EnterPlanTask:
    """`/plan`: the session plans from now on."""

    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        plan_state(ctx.session).planning = True
        ctx.sub.emit(PermissionsChanged(preset=PLAN))


@dataclass
class LeavePlanTask:
    """`/plan off`: plan mode ends without a plan; the preset is the configuration's again."""

    title: str = ""
    needs_checkpoint: bool = False

    async def run(self, ctx: TaskContext) -> None:
        state, b = plan_state(ctx.session), ctx.result
        b.mode = "command"
        if ctx.engine.config.permissions == PLAN:
            b.reply = 'Every session plans: the configuration says "permissions": "plan".'
            return
        if not state.planning:
            b.reply = "This session is not in plan mode."
            return
        state.planning = False
        state.proposed.clear()
        b.reply = f"Plan mode off: the agent works in {ctx.engine.config.permissions} again; no plan was run."
        ctx.sub.emit(PermissionsChanged(preset=ctx.engine.config.permissions))


def answer_planner(op: PlanAnswer, b: ResultBuilder) -> Planner:
    """The tasks of a `coder.plan` answer, chosen when its submission starts."""

    async def plan(ctx: TaskContext) -> list[Task]:
        from coder_ls.engine.tasks import AgentTask, ChangePermissionsTask

        state = plan_state(ctx.session)
        proposed = state.proposed.get(op.submission_id)
        if proposed is None:
            b.fail("unknown_plan", f"coder.plan: no plan awaits an answer for submission {op.submission_id!r}.")
            return []
        state.proposed.clear()
        if op.action == "reject":
            state.planning = False
            b.mode, b.reply = "command", "Plan rejected: plan mode ended, nothing was changed."
            ctx.sub.emit(PermissionsChanged(preset=ctx.engine.config.permissions))
            return []
        b.mode = "nl"
        if op.action == "revise":
            state.planning = True
            feedback = op.feedback or "(no feedback given: improve the plan)"
            shown = f"Revise the plan: {feedback}"
            return [AgentTask(RunAgent(prompt=REVISE.format(feedback=feedback), plan=False, shown=shown))]
        state.planning = False
        mode = op.mode or (FALLBACK_MODE if ctx.engine.config.permissions == PLAN else None)
        tasks: list[Task] = [ChangePermissionsTask(mode)] if mode else []
        if not mode:
            ctx.sub.emit(PermissionsChanged(preset=ctx.engine.config.permissions))
        shown = f"Approved the plan ({mode or ctx.engine.config.permissions})"
        return [*tasks, AgentTask(RunAgent(prompt=APPROVED.format(plan=proposed), plan=False, shown=shown))]

    return plan
