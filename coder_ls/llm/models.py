"""The known models: ids, families, limits and how each thinks (the providers, and how the
configuration chooses one, are `llm.factory`'s).

Light on purpose: importing this module imports no provider and no HTTP library (the
model table is read on the path of `initialize` and of the command catalog).
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from coder_ls.protocol.config import Config

__all__ = [
    "CLAUDE_PROVIDERS",
    "DEFAULT_MODEL",
    "DEFAULT_OUTPUT_CAP",
    "DEFAULT_THINKING_BUDGET",
    "FAMILIES",
    "KNOWN_MODELS",
    "PROVIDERS",
    "ModelInfo",
    "ThinkingStyle",
    "find_model",
    "missing_key_message",
    "model_info",
    "model_supports_thinking",
    "provider_name",
]

# How a model thinks: "none" (no extended thinking), "budget" (`{"type": "enabled",
# "budget_tokens": N}`), "adaptive" (`{"type": "adaptive"}`; a budget is still accepted,
# deprecated), "adaptive-only" (a budget is a 400 error).
ThinkingStyle = Literal["none", "budget", "adaptive", "adaptive-only"]


class ModelInfo(msgspec.Struct, frozen=True):
    """What a request to this model may ask for: its output limit, its context window,
    how it thinks and which `output_config.effort` levels it accepts."""

    name: str
    provider: str
    context_window: int
    description: str
    max_output_tokens: int = 8192
    thinking: ThinkingStyle = "none"
    efforts: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other ids of the same model (dated snapshots are matched anyway)
    family: str = ""  # the model line ("sonnet", "opus", "haiku", "fable"); "" for none

    @property
    def supports_thinking(self) -> bool:
        return self.thinking != "none"


# The default is a family, not a model id: "sonnet" is the newest Sonnet the account can
# use, resolved by `coder_ls.llm.catalog.ModelCatalog` from the Models API (cached on
# disk), else from this table. A model id the user sets is used as set.
DEFAULT_MODEL = "sonnet"
# The model lines an alias names (`/model opus`, an agent's `model: haiku`).
FAMILIES: tuple[str, ...] = ("sonnet", "opus", "haiku", "fable")
# `max_tokens` when `maxOutputTokens` is not set: the model's limit, capped. Output is
# billed as generated, but the rate limiter counts `max_tokens` up front (OTPM), so the
# whole 128K of the newest models would eat a low tier's budget at every request.
DEFAULT_OUTPUT_CAP = 32_000
# `budget_tokens` for models that think on a budget when `thinkingBudget` is not set.
DEFAULT_THINKING_BUDGET = 8_192

_EFFORTS = ("low", "medium", "high")
_EFFORTS_MAX = ("low", "medium", "high", "max")
_EFFORTS_XHIGH = ("low", "medium", "high", "xhigh", "max")


def _claude(
    name: str,
    description: str,
    family: str,
    *,
    context: int = 1_000_000,
    output: int = 128_000,
    thinking: ThinkingStyle = "adaptive-only",
    efforts: tuple[str, ...] = _EFFORTS_XHIGH,
    aliases: tuple[str, ...] = (),
) -> ModelInfo:
    return ModelInfo(name, "anthropic", context, description, output, thinking, efforts, aliases, family)


# The models the Messages API serves, newest first within each line (the order
# `ModelCatalog` falls back on to resolve an alias when the Models API cannot be
# reached): the ids the SDK names (`anthropic.types.ModelParam`). A model leaves this
# table when it is retired; a deprecated one stays, and is marked with its end-of-life
# date from the SDK's own data and the Models API (see `coder_ls.llm.catalog`).
KNOWN_MODELS: tuple[ModelInfo, ...] = (
    _claude("claude-sonnet-5-5", "Claude Sonnet 5.5: the best combination of speed and intelligence", "sonnet"),
    _claude("claude-opus-5-5", "Claude Opus 5.5: long-running agentic coding and knowledge work", "opus"),
    _claude("claude-haiku-5-5", "Claude Haiku 5.5: the fastest, for high-volume simple tasks", "haiku"),
    _claude("claude-fable-5-2", "Claude Fable 5.2: demanding reasoning and long-horizon work", "fable"),
    _claude("claude-fable-5-1", "Claude Fable 5.1: demanding reasoning and long-horizon work", "fable"),
    _claude("claude-sonnet-5", "Claude Sonnet 5: the previous Sonnet", "sonnet"),
    _claude("claude-opus-5", "Claude Opus 5: the previous Opus", "opus"),
    _claude("claude-fable-5", "Claude Fable 5: the first Fable", "fable"),
    _claude("claude-opus-4-8", "Claude Opus 4.8: adaptive thinking, 1M context", "opus"),
    _claude("claude-opus-4-7", "Claude Opus 4.7: adaptive thinking, 1M context", "opus"),
    _claude(
        "claude-opus-4-6",
        "Claude Opus 4.6: adaptive thinking, 1M context",
        "opus",
        thinking="adaptive",
        efforts=_EFFORTS_MAX,
    ),
    _claude(
        "claude-sonnet-4-6",
        "Claude Sonnet 4.6: adaptive thinking, 1M context",
        "sonnet",
        thinking="adaptive",
        efforts=_EFFORTS,
    ),
    _claude(
        "claude-haiku-4-5",
        "Claude Haiku 4.5: fast and cheap, extended thinking on a budget",
        "haiku",
        context=200_000,
        output=64_000,
        thinking="budget",
        efforts=(),
    ),
    _claude(
        "claude-opus-4-5",
        "Claude Opus 4.5 (deprecated)",
        "opus",
        context=200_000,
        output=64_000,
        thinking="budget",
        efforts=_EFFORTS,
    ),
    _claude(
        "claude-sonnet-4-5",
        "Claude Sonnet 4.5 (deprecated)",
        "sonnet",
        context=200_000,
        output=64_000,
        thinking="budget",
        efforts=(),
    ),
    ModelInfo(
        "scripted",
        "scripted",
        200_000,
        "Offline: replays the turns of a JSON script (demos and tests)",
        8192,
    ),
)

PROVIDERS: tuple[str, ...] = ("anthropic", "bedrock", "vertex", "gateway", "scripted")
# The providers that serve Anthropic's models (the table's aliases resolve the same on each)
CLAUDE_PROVIDERS: tuple[str, ...] = ("anthropic", "bedrock", "vertex", "gateway")

# Ids of no known model, judged by their family (first match wins). A newer generation
# thinks adaptively; an unknown 4.x or 3.7 thinks on a budget with a conservative limit.
_FAMILIES: tuple[tuple[str, ModelInfo], ...] = (
    # the 5 generation and later: adaptive thinking only (a budget is a 400), 1M context
    (
        r"claude-(opus|sonnet|haiku|fable|mythos)-([5-9]|\d\d)",
        ModelInfo("", "anthropic", 1_000_000, "", 64_000, "adaptive-only"),
    ),
    (r"claude-(opus|sonnet|haiku)-4", ModelInfo("", "anthropic", 200_000, "", 32_000, "budget")),
)
_SNAPSHOT = re.compile(r"-(\d{8}|latest)$")


def find_model(name: str) -> ModelInfo | None:
    """The known model with this id or alias; a dated snapshot (`-20250929`) or
    `-latest` finds its model too."""
    stem = _SNAPSHOT.sub("", name)
    for info in KNOWN_MODELS:
        if name == info.name or name in info.aliases or stem == info.name or stem in info.aliases:
            return info
    return None


def model_info(name: str) -> ModelInfo | None:
    """`find_model`, else what the id's family implies (named after the id), else None."""
    info = find_model(name)
    if info is not None:
        return info
    for pattern, template in _FAMILIES:
        match = re.match(pattern, name)
        if match:
            return msgspec.structs.replace(template, name=name, family=match.group(1))
    return None


def model_supports_thinking(name: str) -> bool:
    """Known models say so; an unknown Claude id is judged by its family."""
    info = model_info(name)
    return info is not None and info.supports_thinking


def missing_key_message() -> str:
    return (
        "No Anthropic API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, a bearer token) "
        "in the environment that starts coder-ls "
        '(or configure another provider, e.g. "provider": "scripted" with "scriptedFile": '
        '"<path to a script of turns>" in .coder/config.json).'
    )


def provider_name(config: Config) -> str:
    """The provider a configuration selects (the model "scripted" selects "scripted")."""
    if config.model == "scripted":
        return "scripted"
    return config.provider or "anthropic"
