"""Plan mode over ACP (contract section 22): the mode `plan` beside the presets, and the
answer to a proposed plan as a `session/request_permission`.

- `session/set_mode {modeId: "plan"}` runs `/plan` (typed, as the user chose it in the
  editor); another mode while the session plans runs `/plan off`, then `/permissions <mode>`.
- A prompt whose turn ends with a plan (`planProposed`) asks, before `session/prompt`
  answers, "Approve (<preset>)" for each preset, "Keep planning" or "Reject" (the refusal);
  an approval runs the plan in that preset (`coder.plan approve`) within the same prompt,
  a rejection ends plan mode; "Keep planning" leaves the plan waiting: the next prompt is
  the feedback, still in plan mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coder_ls.engine.planmode import plan_state
from coder_ls.protocol.config import PLAN, PRESETS
from coder_ls.protocol.ops import PlanAnswer

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine

MODES: tuple[str, ...] = (*PRESETS, PLAN)
PLAN_DESCRIPTION = "reads and searches, never writes; ends with a plan for you to approve"
KEEP_PLANNING = "Keep planning"
REJECT = "Reject"
CHOICES = [*(f"Approve ({p})" for p in ("balanced", "auto-edit", "strict", "yolo")), KEEP_PLANNING, REJECT]


def planning(engine: Engine, engine_sid: str) -> bool:
    session = engine.sessions.loaded(engine_sid)
    return session is not None and plan_state(session).planning


def current_mode(engine: Engine, engine_sid: str | None) -> str:
    """The mode a client shows: `plan` while the session plans, else the preset."""
    if engine_sid is not None and planning(engine, engine_sid):
        return PLAN
    return engine.config.permissions


def mode_lines(mode_id: str, is_planning: bool) -> list[str]:
    """What choosing `mode_id` runs in the session."""
    if mode_id == PLAN:
        return ["/plan"]
    return [*(["/plan off"] if is_planning else []), f"/permissions {mode_id}"]


def proposed_plan(engine: Engine, engine_sid: str, submission_id: str) -> str | None:
    """The plan `submission_id` proposed, if it still waits for an answer."""
    session = engine.sessions.loaded(engine_sid)
    return None if session is None else plan_state(session).proposed.get(submission_id)


def question(plan: str) -> str:
    return f"Coder proposes a plan. Run it (in which preset), keep planning, or reject it?\n\n{plan}"


def answer_op(submission_id: str, choice: str | None) -> PlanAnswer | None:
    """The `coder.plan` answer a choice makes (None: keep planning, or no answer)."""
    if choice == REJECT:
        return PlanAnswer(submission_id, "reject")
    if choice and choice.startswith("Approve (") and choice.endswith(")"):
        return PlanAnswer(submission_id, "approve", mode=choice[len("Approve (") : -1])
    return None
