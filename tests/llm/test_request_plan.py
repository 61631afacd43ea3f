"""The model table and the request shape fitted to each model (no SDK, no network)."""

from __future__ import annotations

from typing import Any

import pytest

from coder_ls.llm import anthropic_convert, request_plan
from coder_ls.llm.base import ProviderRequest
from coder_ls.llm.models import DEFAULT_OUTPUT_CAP, DEFAULT_THINKING_BUDGET, KNOWN_MODELS, find_model, model_info
from coder_ls.llm.request_plan import MIN_THINKING_BUDGET, RequestPlan
from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock


def plan_request(r: ProviderRequest) -> RequestPlan:
    """The plan for a request as the built-in table describes its model."""
    return request_plan.plan_request(r, model_info(r.model))


def to_api_params(r: ProviderRequest) -> dict[str, Any]:
    return anthropic_convert.to_api_params(r, model_info(r.model))


def request(model: str, **fields: Any) -> ProviderRequest:
    return ProviderRequest(model=model, system="s", messages=[Message("user", [TextBlock("hi")])], **fields)


def valid_for_the_api(params: dict[str, Any]) -> None:
    """The combinations the Messages API refuses."""
    info = model_info(params["model"])
    if info is not None:
        assert params["max_tokens"] <= info.max_output_tokens
    thinking = params.get("thinking")
    if thinking and thinking["type"] == "enabled":
        assert info is not None and info.thinking in ("budget", "adaptive")
        assert MIN_THINKING_BUDGET <= thinking["budget_tokens"] < params["max_tokens"]
    if thinking and thinking["type"] == "adaptive":
        assert info is not None and info.thinking in ("adaptive", "adaptive-only")
        assert "budget_tokens" not in thinking
    if "output_config" in params:
        assert info is not None and params["output_config"]["effort"] in info.efforts
    assert "temperature" not in params


def test_table_is_the_models_the_sdk_names() -> None:
    """The table holds exactly the ids the SDK offers (`anthropic.types.ModelParam`, kept
    by Anthropic, not by us), dated snapshots aside: a retired model has left it."""
    from typing import get_args

    from anthropic.types import ModelParam

    offered = {name for name in get_args(get_args(ModelParam)[0]) if not name[-8:].isdigit()}
    offered -= {n for n in offered if "mythos" in n}  # research-preview access only
    names = {m.name for m in KNOWN_MODELS if m.provider == "anthropic"}
    assert names == offered
    assert len(names) == len(KNOWN_MODELS) - 1  # and "scripted"
    for retired in ("claude-3-5-sonnet-latest", "claude-3-7-sonnet-latest", "claude-3-5-haiku-latest",
                    "claude-opus-4-1", "claude-opus-4-0", "claude-sonnet-4-0"):  # fmt: skip
        assert find_model(retired) is None
    for info in KNOWN_MODELS:
        assert info.max_output_tokens >= 8192 and info.context_window >= 200_000
        assert not (info.efforts and info.thinking == "none")
        assert info.provider != "anthropic" or info.family in ("sonnet", "opus", "haiku", "fable")


def test_default_shapes_per_model() -> None:
    # a budget model: its limit capped, budget thinking with the default budget
    assert plan_request(request("claude-sonnet-4-5")) == RequestPlan(
        max_tokens=DEFAULT_OUTPUT_CAP, thinking="enabled", budget_tokens=DEFAULT_THINKING_BUDGET
    )
    # its limit below the cap: the limit (an unknown 4.x: the family's conservative limit)
    assert plan_request(request("claude-opus-4-1")).max_tokens == 32_000
    # adaptive models think adaptively, no budget
    assert plan_request(request("claude-opus-4-6")) == RequestPlan(max_tokens=DEFAULT_OUTPUT_CAP, thinking="adaptive")
    # the 5 generation: adaptive only, 128K output (capped)
    assert plan_request(request("claude-sonnet-5-5")) == RequestPlan(max_tokens=DEFAULT_OUTPUT_CAP, thinking="adaptive")
    assert plan_request(request("claude-opus-5-5", thinking="enabled")).thinking == "adaptive"
    # an id of no known family: the smallest limit, nothing else
    assert plan_request(request("my-gateway-model")) == RequestPlan(max_tokens=8192)
    # a newer family not in the table: adaptive only, never a budget
    assert plan_request(request("claude-sonnet-6", thinking="enabled")).thinking == "adaptive"


def test_configured_values_are_fitted() -> None:
    assert plan_request(request("claude-haiku-4-5", max_tokens=500_000)).max_tokens == 64_000
    off = plan_request(request("claude-opus-4-6", thinking="off"))
    assert off == RequestPlan(max_tokens=DEFAULT_OUTPUT_CAP)
    # a budget for a model that only thinks adaptively: adaptive (a budget is a 400 there)
    assert plan_request(request("claude-opus-4-7", thinking="enabled", thinking_budget=5000)).thinking == "adaptive"
    # a budget for an adaptive model that still takes one: the budget
    plan = plan_request(request("claude-sonnet-4-6", thinking="enabled", thinking_budget=5000))
    assert (plan.thinking, plan.budget_tokens) == ("enabled", 5000)
    # adaptive asked of a budget model: a budget
    assert plan_request(request("claude-haiku-4-5", thinking="adaptive")).thinking == "enabled"
    # a budget below the minimum is raised to it
    assert plan_request(request("claude-sonnet-4-5", thinking_budget=10)).budget_tokens == MIN_THINKING_BUDGET
    # the default budget shrinks into a small maxOutputTokens, or thinking stays off
    small = plan_request(request("claude-sonnet-4-5", max_tokens=3000))
    assert (small.max_tokens, small.budget_tokens) == (3000, 3000 - MIN_THINKING_BUDGET)
    assert plan_request(request("claude-sonnet-4-5", max_tokens=1500)) == RequestPlan(max_tokens=1500)
    # a configured budget raises a small maxOutputTokens
    raised = plan_request(request("claude-sonnet-4-5", max_tokens=1000, thinking_budget=8000))
    assert raised.budget_tokens == 8000 and raised.max_tokens > 8000


def test_effort_only_where_the_model_takes_that_level() -> None:
    assert plan_request(request("claude-opus-4-6", effort="max")).effort == "max"
    # a level past what the model takes sends the highest it takes (section 18: `/effort max` still means "most")
    assert plan_request(request("claude-sonnet-4-6", effort="max")).effort == "high"
    assert plan_request(request("claude-opus-4-5", effort="low")).effort == "low"
    assert plan_request(request("claude-sonnet-4-5", effort="low")).effort is None
    assert plan_request(request("claude-opus-4-7", effort="xhigh")).effort == "xhigh"
    assert plan_request(request("claude-sonnet-5-5", effort="xhigh")).effort == "xhigh"
    assert plan_request(request("claude-haiku-4-5", effort="low")).effort is None


@pytest.mark.parametrize("model", [m.name for m in KNOWN_MODELS] + ["claude-opus-5", "claude-sonnet-4-9", "x"])
@pytest.mark.parametrize("thinking", ["auto", "adaptive", "enabled", "off"])
@pytest.mark.parametrize(("max_tokens", "budget"), [(None, None), (2048, None), (1000, 30_000), (200_000, 2000)])
@pytest.mark.parametrize("effort", [None, "low", "max"])
def test_every_combination_is_valid(
    model: str, thinking: Any, max_tokens: int | None, budget: int | None, effort: Any
) -> None:
    params = to_api_params(
        request(model, thinking=thinking, max_tokens=max_tokens, thinking_budget=budget, effort=effort)
    )
    valid_for_the_api(params)
    if thinking == "off":
        assert "thinking" not in params


def test_api_params_shape() -> None:
    params = to_api_params(request("claude-opus-4-6", effort="low"))
    assert params["thinking"] == {"type": "adaptive"}
    assert params["output_config"] == {"effort": "low"}
    params = to_api_params(request("claude-sonnet-4-5"))
    assert params["thinking"] == {"type": "enabled", "budget_tokens": DEFAULT_THINKING_BUDGET}
    assert params["max_tokens"] == DEFAULT_OUTPUT_CAP and "output_config" not in params


def test_no_budget_thinking_in_a_tool_loop_begun_without_it() -> None:
    history = [
        Message("user", [TextBlock("go")]),
        Message("assistant", [ToolUseBlock("t1", "read", {"path": "a"})]),
        Message("user", [ToolResultBlock("t1", "text")]),
    ]
    params = to_api_params(ProviderRequest(model="claude-sonnet-4-5", system="s", messages=history))
    assert "thinking" not in params
    # a new user turn after it: thinking again
    history += [Message("assistant", [TextBlock("done")]), Message("user", [TextBlock("next")])]
    params = to_api_params(ProviderRequest(model="claude-sonnet-4-5", system="s", messages=history))
    assert params["thinking"]["type"] == "enabled"


def test_system_and_tools_do_not_depend_on_thinking() -> None:
    """The cached prefix (tools, system) is byte-identical whatever the thinking choice."""
    a = to_api_params(request("claude-sonnet-4-5"))
    b = to_api_params(request("claude-sonnet-4-5", thinking="off", max_tokens=100))
    assert (a.get("tools"), a["system"]) == (b.get("tools"), b["system"])


def test_tool_schema_sent_without_repeats() -> None:
    from coder_ls.agent.tools import build_default_tools

    specs = build_default_tools().specs()
    params = to_api_params(ProviderRequest(model="claude-sonnet-4-5", system="s", messages=[], tools=specs))
    by_name = {t["name"]: t for t in params["tools"]}
    assert set(by_name) == {s.name for s in specs}
    for spec in specs:
        sent = by_name[spec.name]
        assert sent["description"] == spec.description
        assert "description" not in sent["input_schema"]  # the tool's description says it
        assert sent["input_schema"].get("required", ["x"]) != []
        # everything else of the schema is kept as is
        kept = {k: v for k, v in spec.input_schema.items() if k not in ("description", "required")}
        assert {k: v for k, v in sent["input_schema"].items() if k != "required"} == kept
        assert sent["input_schema"]["properties"] == spec.input_schema["properties"]
    # the same request twice: byte-identical tools (the cached prefix)
    again = to_api_params(ProviderRequest(model="claude-sonnet-4-5", system="s", messages=[], tools=specs))
    assert again["tools"] == params["tools"]


def test_model_request_settings_fall_back_one_by_one() -> None:
    from coder_ls.configcheck import describe
    from coder_ls.engine.config import Layer, resolve

    bad = {"thinking": "always", "effort": "huge", "maxOutputTokens": 0, "model": "claude-opus-4-6"}
    config, problems = resolve([Layer("f", bad)])
    assert (config.thinking, config.effort, config.max_output_tokens) == ("auto", None, None)
    assert config.model == "claude-opus-4-6"
    message = describe(problems)
    for key in ("`thinking`", "`effort`", "`maxOutputTokens`"):
        assert key in message
    good = {"thinking": "off", "effort": "max", "maxOutputTokens": 4000, "thinkingBudget": 2048}
    config, problems = resolve([Layer("f", good)])
    assert problems == []
    assert (config.thinking, config.effort, config.max_output_tokens, config.thinking_budget) == (
        "off",
        "max",
        4000,
        2048,
    )


@pytest.mark.parametrize(
    ("model", "effort", "sent", "budget"),
    [
        ("claude-opus-4-8", "max", "max", 0),  # takes every level
        ("claude-sonnet-4-6", "max", "high", 0),  # stops at high: the highest below
        ("claude-sonnet-4-6", "low", "low", 0),
        ("claude-haiku-4-5", "low", None, 2048),  # no levels, budget thinking: the budget
        ("claude-haiku-4-5", "high", None, 16_384),
        ("claude-haiku-4-5", "max", None, 32_000),
    ],
)
def test_effort_per_model(model, effort, sent, budget):
    params = to_api_params(request(model, effort=effort))
    valid_for_the_api(params)
    assert (params.get("output_config") or {}).get("effort") == sent
    if budget:
        assert params["thinking"] == {"type": "enabled", "budget_tokens": budget}


def test_a_configured_budget_wins_over_effort():
    params = to_api_params(request("claude-haiku-4-5", effort="max", thinking_budget=4096))
    assert params["thinking"]["budget_tokens"] == 4096
