"""What the fake knows of models, as the real API behaves (written from Anthropic's model
pages and migration guides, deliberately apart from coder_ls's own table, so a wrong
entry there fails a test instead of agreeing with itself).

- `listing()`: the objects `GET /v1/models` returns (newest first), with lifecycle,
  line, limits and capabilities, as of late November 2026.
- `check_model(body)`: the 404 a retired model gets, and the 400s a model answers to a
  thinking type, an effort level or a `max_tokens` it does not accept. A model id the
  table does not hold is accepted as it is (tests use made-up ids for gateways).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_XHIGH = ("low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class FakeModel:
    id: str
    display_name: str
    created_at: str
    line: str
    max_input: int = 1_000_000
    max_tokens: int = 128_000
    adaptive: bool = True  # accepts thinking {"type": "adaptive"}
    budget: bool = False  # accepts thinking {"type": "enabled", "budget_tokens": N}
    efforts: tuple[str, ...] = _XHIGH
    lifecycle: str = "active"
    retires_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        def support(on: bool) -> dict[str, bool]:
            return {"supported": on}

        effort = {"supported": bool(self.efforts)} | {lvl: support(lvl in self.efforts) for lvl in _XHIGH}
        return {
            "type": "model",
            "id": self.id,
            "display_name": self.display_name,
            "created_at": self.created_at,
            "lifecycle": self.lifecycle,
            "line": self.line,
            "max_input_tokens": self.max_input,
            "max_tokens": self.max_tokens,
            "deprecated_at": "2026-08-30T00:00:00Z" if self.lifecycle != "active" else None,
            "retires_at": self.retires_at,
            "capabilities": {
                "thinking": {
                    "supported": self.adaptive or self.budget,
                    "types": {
                        "adaptive": support(self.adaptive),
                        "enabled": support(self.budget),
                        "disabled": support(True),
                        "between_tools": support(self.adaptive),
                    },
                },
                "effort": effort,
            },
        }


MODELS: tuple[FakeModel, ...] = (
    FakeModel("claude-fable-5-2", "Claude Fable 5.2", "2026-10-28T00:00:00Z", "fable"),
    FakeModel("claude-sonnet-5-5", "Claude Sonnet 5.5", "2026-10-14T00:00:00Z", "sonnet"),
    FakeModel("claude-haiku-5-5", "Claude Haiku 5.5", "2026-10-14T00:00:00Z", "haiku"),
    FakeModel("claude-opus-5-5", "Claude Opus 5.5", "2026-09-30T00:00:00Z", "opus"),
    FakeModel("claude-fable-5-1", "Claude Fable 5.1", "2026-08-19T00:00:00Z", "fable"),
    FakeModel("claude-sonnet-5", "Claude Sonnet 5", "2026-06-30T00:00:00Z", "sonnet"),
    FakeModel("claude-opus-5", "Claude Opus 5", "2026-05-27T00:00:00Z", "opus"),
    FakeModel("claude-fable-5", "Claude Fable 5", "2026-04-22T00:00:00Z", "fable"),
    FakeModel("claude-opus-4-8", "Claude Opus 4.8", "2026-03-18T00:00:00Z", "opus"),
    FakeModel("claude-opus-4-7", "Claude Opus 4.7", "2026-01-28T00:00:00Z", "opus"),
    FakeModel(
        "claude-opus-4-6", "Claude Opus 4.6", "2025-12-10T00:00:00Z", "opus",
        budget=True, efforts=("low", "medium", "high", "max"),
    ),
    FakeModel(
        "claude-sonnet-4-6", "Claude Sonnet 4.6", "2025-12-10T00:00:00Z", "sonnet",
        budget=True, efforts=("low", "medium", "high"),
    ),
    FakeModel(
        "claude-opus-4-5", "Claude Opus 4.5", "2025-11-24T00:00:00Z", "opus", max_input=200_000,
        max_tokens=64_000, adaptive=False, budget=True, efforts=("low", "medium", "high"),
        lifecycle="deprecated", retires_at="2027-01-22T00:00:00Z",
    ),
    FakeModel(
        "claude-haiku-4-5", "Claude Haiku 4.5", "2025-10-15T00:00:00Z", "haiku", max_input=200_000,
        max_tokens=64_000, adaptive=False, budget=True, efforts=(),
    ),
    FakeModel(
        "claude-sonnet-4-5", "Claude Sonnet 4.5", "2025-09-29T00:00:00Z", "sonnet", max_input=200_000,
        max_tokens=64_000, adaptive=False, budget=True, efforts=(),
        lifecycle="deprecated", retires_at="2026-11-30T00:00:00Z",
    ),
)  # fmt: skip

RETIRED = frozenset({
    "claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022", "claude-3-7-sonnet-latest",
    "claude-3-7-sonnet-20250219", "claude-3-5-haiku-latest", "claude-3-5-haiku-20241022",
    "claude-opus-4-0", "claude-opus-4-20250514", "claude-sonnet-4-0", "claude-sonnet-4-20250514",
    "claude-opus-4-1", "claude-opus-4-1-20250805",
})  # fmt: skip

_BY_ID = {m.id: m for m in MODELS}
_SNAPSHOTS = {"claude-sonnet-4-5-20250929": "claude-sonnet-4-5", "claude-opus-4-5-20251101": "claude-opus-4-5",
              "claude-haiku-4-5-20251001": "claude-haiku-4-5"}  # fmt: skip


def listing(models: tuple[FakeModel, ...] = MODELS) -> list[dict[str, Any]]:
    return [m.to_json() for m in models]


def find(model_id: str, models: tuple[FakeModel, ...] = MODELS) -> FakeModel | None:
    wanted = _SNAPSHOTS.get(model_id, model_id)
    return next((m for m in models if m.id == wanted), None)


def check_model(body: dict[str, Any], listed: list[dict[str, Any]] | None = None) -> tuple[int, str, str] | None:
    """(status, error type, message) of the error the real API answers for this model, or
    None. `listed`: the listing the fake serves (a model it says is retired is gone too)."""
    model_id = str(body.get("model", ""))
    model = find(model_id)
    gone = {m.get("id") for m in listed or [] if m.get("lifecycle") == "retired"}
    if model_id in RETIRED or model_id in gone or (model is not None and model.id in gone):
        return 404, "not_found_error", f"model: {model_id}"
    if model is None:
        return None
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind == "enabled" and not model.budget:
        return 400, "invalid_request_error", (
            "thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and "
            "output_config.effort to control thinking behavior."
        )
    if kind == "adaptive" and not model.adaptive:
        return 400, "invalid_request_error", "adaptive thinking is not supported on this model"
    effort = (body.get("output_config") or {}).get("effort")
    if effort is not None and effort not in model.efforts:
        return 400, "invalid_request_error", f"output_config.effort: {effort!r} is not supported by this model"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > model.max_tokens:
        return 400, "invalid_request_error", (
            f"max_tokens: {max_tokens} > {model.max_tokens}, which is the maximum allowed number of output "
            f"tokens for {model_id}"
        )
    return None
