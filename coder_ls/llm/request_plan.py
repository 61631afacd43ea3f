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
- effort: kept only when the model accepts that level.

Pure and light: no SDK, no I/O.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from coder_ls.llm.base import ProviderRequest
from coder_ls.llm.models import DEFAULT_OUTPUT_CAP, DEFAULT_THINKING_BUDGET, ModelInfo

__all__ = ["MIN_THINKING_BUDGET", "UNKNOWN_MODEL_MAX_TOKENS", "RequestPlan", "plan_request"]

MIN_THINKING_BUDGET = 1024
UNKNOWN_MODEL_MAX_TOKENS = 8192  # a model of no known family: the smallest limit of any Claude


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
    effort = request.effort if request.effort in info.efforts else None
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
