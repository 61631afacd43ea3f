"""The known models and the factory that builds a provider from the configuration.

Light on purpose: importing this module must not import the Anthropic SDK (that takes
more than a second); `AnthropicProvider` imports it the first time a turn needs it.

Providers:

- `"anthropic"` (default): the Messages API. Needs `ANTHROPIC_API_KEY` (or
  `ANTHROPIC_AUTH_TOKEN`) in the server's environment; `ANTHROPIC_BASE_URL`, when
  set, points it at another endpoint (tests point it at a local fake server).
- `"scripted"`: replays the JSON file named by `scriptedFile` (relative to the
  workspace root; else the `CODER_SCRIPTED_FILE` environment variable), see
  `coder_ls.llm.scripted`. Choosing the model `"scripted"` selects it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from coder_ls.llm.base import Provider, ProviderError
from coder_ls.protocol.config import Config

__all__ = [
    "DEFAULT_MODEL",
    "KNOWN_MODELS",
    "PROVIDERS",
    "ModelInfo",
    "find_model",
    "make_provider",
    "missing_key_message",
    "model_supports_thinking",
]


class ModelInfo(msgspec.Struct, frozen=True):
    name: str
    provider: str
    context_window: int
    supports_thinking: bool
    description: str
    max_output_tokens: int = 8192


DEFAULT_MODEL = "claude-sonnet-4-5"

KNOWN_MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        name="claude-sonnet-4-5",
        provider="anthropic",
        context_window=200_000,
        supports_thinking=True,
        description="Claude Sonnet 4.5: the default; strong at agentic coding, fast",
        max_output_tokens=64_000,
    ),
    ModelInfo(
        name="claude-opus-4-1",
        provider="anthropic",
        context_window=200_000,
        supports_thinking=True,
        description="Claude Opus 4.1: the most capable for hard problems, slower and costlier",
        max_output_tokens=32_000,
    ),
    ModelInfo(
        name="claude-haiku-4-5",
        provider="anthropic",
        context_window=200_000,
        supports_thinking=True,
        description="Claude Haiku 4.5: the fastest and cheapest, good for simple tasks",
        max_output_tokens=64_000,
    ),
    ModelInfo(
        name="claude-sonnet-4-0",
        provider="anthropic",
        context_window=200_000,
        supports_thinking=True,
        description="Claude Sonnet 4: the previous Sonnet generation",
        max_output_tokens=64_000,
    ),
    ModelInfo(
        name="scripted",
        provider="scripted",
        context_window=200_000,
        supports_thinking=False,
        description="Offline: replays the turns of a JSON script (demos and tests)",
        max_output_tokens=8192,
    ),
)

PROVIDERS: tuple[str, ...] = ("anthropic", "scripted")

_THINKING_PREFIXES = (
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4",
    "claude-3-7-sonnet",
)


def find_model(name: str) -> ModelInfo | None:
    for info in KNOWN_MODELS:
        if info.name == name:
            return info
    return None


def model_supports_thinking(name: str) -> bool:
    """Known models say so; an unknown Claude id is judged by its family."""
    info = find_model(name)
    if info is not None:
        return info.supports_thinking
    return name.startswith(_THINKING_PREFIXES)


def missing_key_message() -> str:
    return (
        "No Anthropic API key: set ANTHROPIC_API_KEY in the environment that starts coder-ls "
        '(or configure another provider, e.g. "provider": "scripted" with "scriptedFile": '
        '"<path to a script of turns>" in .coder/config.json).'
    )


def _provider_name(config: Config) -> str:
    if config.model == "scripted":
        return "scripted"
    return config.provider or "anthropic"


def make_provider(config: Config, env: Mapping[str, str], root: Path) -> Provider:
    """Build the provider the configuration names.

    Raises `ProviderError(kind="config")` with a message for the user when it cannot
    be built (no API key, unknown provider, missing or malformed script file).
    Does not import the Anthropic SDK and does not touch the network.
    """
    name = _provider_name(config)
    if name == "anthropic":
        from coder_ls.llm.anthropic_provider import AnthropicProvider

        api_key = (env.get("ANTHROPIC_API_KEY") or "").strip()
        auth_token = (env.get("ANTHROPIC_AUTH_TOKEN") or "").strip()
        if not api_key and not auth_token:
            raise ProviderError("config", missing_key_message())
        base_url = (env.get("ANTHROPIC_BASE_URL") or "").strip() or None
        return AnthropicProvider(
            api_key=api_key or None,
            auth_token=None if api_key else auth_token,
            base_url=base_url,
        )
    if name == "scripted":
        from coder_ls.llm.scripted import ScriptedProvider

        file = config.scripted_file or env.get("CODER_SCRIPTED_FILE")
        if not file:
            raise ProviderError(
                "config",
                'The "scripted" provider needs a script: set "scriptedFile" in .coder/config.json '
                "(a JSON file of turns, relative to the workspace root).",
            )
        path = Path(file).expanduser()
        if not path.is_absolute():
            path = root / path
        return ScriptedProvider.from_file(path)
    known = ", ".join(f'"{p}"' for p in PROVIDERS)
    raise ProviderError("config", f'Unknown provider "{name}": use one of {known}.')
