"""Fit what the user asked for (output size, thinking, effort) to the model at hand.

A request that does not match its model is either refused by the API (a budget for a
model that only thinks adaptively, `budget_tokens` ≥ `max_tokens`, `max_tokens` past
the model's limit, an effort level it does not know) or wastes money (8K of output for
a model that can write 64K, no thinking for a model built to think). `plan_request`
turns the provider-neutral choices of a `ProviderRequest` into values that are valid
for the model, as the provider's catalog describes it (`coder_ls.llm.catalog`):

- `max_tokens`: the configured value, else the model's output limit capped at
  `DEFAULT_OUTPUT_CAP`; never past the model's limit.
- thinking: "auto" gives adaptive thinking to models that have it and a budget to models
  that think on one; "adaptive" and "enabled" fall back on the other kind where the model
  only has that one; models without extended thinking get none. A budget is at least
  1,024 tokens and leaves at least 1,024 tokens of `max_tokens` for the answer: a
  configured budget raises `max_tokens` (within the model's limit), the default budget
  shrinks to fit a small configured `max_tokens` (or thinking is left off).
- effort (`/effort`, a command's `effort:`, the configuration's `effort`): sent as
  `output_config.effort` to a model that takes effort levels, the asked level or the
  highest it accepts below it (`max` to a model that stops at `high` sends `high`); to a
  model without effort levels that thinks on a budget, and with no budget configured, the
  level chooses the thinking budget (`EFFORT_BUDGETS`: low 2,048, medium 8,192, high
  16,384, max 32,000 tokens, within the model's output limit); elsewhere nothing.

Pure and light: no SDK, no I/O.
"""

from __future__ import annotations

from typing import Literal, cast

import msgspec

from coder_ls.llm.base import ProviderRequest
from coder_ls.llm.models import DEFAULT_OUTPUT_CAP, DEFAULT_THINKING_BUDGET, ModelInfo
from coder_ls.protocol.config import Effort

__all__ = [
    "EFFORT_BUDGETS",
    "MIN_THINKING_BUDGET",
    "UNKNOWN_MODEL_MAX_TOKENS",
    "RequestPlan",
    "effort_of",
    "plan_request",
]

MIN_THINKING_BUDGET = 1024
UNKNOWN_MODEL_MAX_TOKENS = 8192  # a model of no known family: the smallest limit of any Claude


EFFORT_LEVELS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")  # lowest first
# The thinking budget a level gives a model that has no effort levels but thinks on a budget.
EFFORT_BUDGETS = {"low": 2048, "medium": 8192, "high": 16_384, "xhigh": 24_576, "max": 32_000}


def effort_of(level: str | None) -> Effort | None:
    """A level as the request takes it (None for none, "auto" or a level we do not know)."""
    return cast("Effort", level) if level in EFFORT_LEVELS else None


def _accepted(level: str | None, efforts: tuple[str, ...]) -> str | None:
    """The level itself when the model takes it, else the highest it takes below it."""
    if level not in EFFORT_LEVELS:
        return None
    below = EFFORT_LEVELS[: EFFORT_LEVELS.index(level) + 1]
    return next((e for e in reversed(below) if e in efforts), None)


class RequestPlan(msgspec.Struct, frozen=True):
    max_tokens: int
    thinking: Literal["off", "enabled", "adaptive"] = "off"
    budget_tokens: int = 0  # with thinking "enabled"
    effort: str | None = None


def plan_request(request: ProviderRequest, info: ModelInfo | None) -> RequestPlan:
    """The plan for `request` to the model described by `info` (None: a model of no
    known family), from the provider's catalog (`ModelCatalog.info`)."""
    asked = request.max_tokens if request.max_tokens and request.max_tokens > 0 else None
    if info is None:
        return RequestPlan(max_tokens=asked or UNKNOWN_MODEL_MAX_TOKENS)
    limit = info.max_output_tokens
    max_tokens = min(asked, limit) if asked else min(limit, DEFAULT_OUTPUT_CAP)
    effort = _accepted(request.effort, info.efforts)
    if request.effort and not info.efforts and not request.thinking_budget:
        request = msgspec.structs.replace(request, thinking_budget=EFFORT_BUDGETS[request.effort])
    style, mode = info.thinking, request.thinking
    if mode == "off" or style == "none":
        return RequestPlan(max_tokens=max_tokens, effort=effort)
    adaptive_ok = style in ("adaptive", "adaptive-only")
    budget_ok = style in ("budget", "adaptive")
    wants_budget = mode == "enabled" or (mode == "auto" and not adaptive_ok)
    if not (wants_budget and budget_ok) and adaptive_ok:
        return RequestPlan(max_tokens=max_tokens, thinking="adaptive", effort=effort)
    budget = max(MIN_THINKING_BUDGET, request.thinking_budget or DEFAULT_THINKING_BUDGET)
    if budget + MIN_THINKING_BUDGET > max_tokens and request.thinking_budget:
        max_tokens = min(limit, budget + MIN_THINKING_BUDGET)  # a budget the user chose wins
    budget = min(budget, max_tokens - MIN_THINKING_BUDGET)
    if budget < MIN_THINKING_BUDGET:
        return RequestPlan(max_tokens=max_tokens, effort=effort)
    return RequestPlan(max_tokens=max_tokens, thinking="enabled", budget_tokens=budget, effort=effort)
