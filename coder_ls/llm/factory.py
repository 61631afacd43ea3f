"""Build the provider the configuration names.

Apart from `models` so that the model table imports nothing of the providers: the table
sits below them (the catalog and the request plan read it), the factory above them.

Providers:

- `"anthropic"` (default): the Messages API. Needs `ANTHROPIC_API_KEY` (or
  `ANTHROPIC_AUTH_TOKEN`) in the server's environment; `ANTHROPIC_BASE_URL`, when
  set, points it at another endpoint (tests point it at a local fake server);
  `ANTHROPIC_CUSTOM_HEADERS` (`Name: value` lines) adds headers to every request.
- `"gateway"`: the same API through a company gateway: `ANTHROPIC_BASE_URL` and a bearer
  token `ANTHROPIC_AUTH_TOKEN` are both required.
- `"bedrock"`, `"vertex"`: Amazon Bedrock, Google Vertex AI (`coder_ls.llm.platforms`:
  their credentials, regions, model ids and wire formats).
- `"scripted"`: replays the JSON file named by `scriptedFile` (relative to the
  workspace root; else the `CODER_SCRIPTED_FILE` environment variable), see
  `coder_ls.llm.scripted`. Choosing the model `"scripted"` selects it too.

Importing this module imports no provider: the one named is imported when it is built.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from coder_ls.llm.base import Provider, ProviderError
from coder_ls.llm.models import PROVIDERS, missing_key_message, provider_name
from coder_ls.protocol.config import Config

__all__ = ["make_provider"]

log = logging.getLogger(__name__)


def make_provider(config: Config, env: Mapping[str, str], root: Path) -> Provider:
    """Build the provider the configuration names.

    Raises `ProviderError(kind="config")` with a message for the user when it cannot
    be built (no API key, unknown provider, missing or malformed script file).
    Does not touch the network (the provider's HTTP client is built later, `prepare`).
    """
    name = provider_name(config)
    if name in ("anthropic", "gateway"):
        return _messages_api(name, config, env)
    if name in ("bedrock", "vertex"):
        return _cloud(name, config, env)
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


def _checked_url(url: str | None, variable: str, config: Config) -> str | None:
    """`url` unless it would send the credential in clear (said before anything is sent)."""
    if url and not config.allow_insecure_base_url:
        from coder_ls.llm.endpoint import insecure_base_url

        refused = insecure_base_url(url, variable)
        if refused is not None:
            raise ProviderError("config", refused)
    return url


def _custom_headers(env: Mapping[str, str]) -> dict[str, str]:
    from coder_ls.llm.endpoint import parse_custom_headers

    custom, skipped = parse_custom_headers(env.get("ANTHROPIC_CUSTOM_HEADERS"))
    if skipped:  # the values are not logged: a gateway's header may be a secret
        lines = ", ".join(map(str, skipped))
        log.warning("ANTHROPIC_CUSTOM_HEADERS: line(s) %s left out (not `Name: value`, or a reserved name)", lines)
    return custom


def _messages_api(name: str, config: Config, env: Mapping[str, str]) -> Provider:
    """Anthropic's own API, or a company gateway in front of it (`gateway`: its base URL
    and a bearer token are required, custom headers as for any)."""
    api_key = (env.get("ANTHROPIC_API_KEY") or "").strip()
    auth_token = (env.get("ANTHROPIC_AUTH_TOKEN") or "").strip()
    base_url = (env.get("ANTHROPIC_BASE_URL") or "").strip() or None
    if name == "gateway":
        if not base_url or not auth_token:
            missing = " and ".join(
                v for v, ok in (("ANTHROPIC_BASE_URL", base_url), ("ANTHROPIC_AUTH_TOKEN", auth_token)) if not ok
            )
            raise ProviderError("config", f'The "gateway" provider needs {missing} (the gateway\'s address and token).')
        api_key = ""
    elif not api_key and not auth_token:  # said before importing the provider (no key: no use)
        raise ProviderError("config", missing_key_message())
    _checked_url(base_url, "ANTHROPIC_BASE_URL", config)
    from coder_ls.llm.anthropic_provider import AnthropicProvider
    from coder_ls.llm.catalog import ModelCatalog, cache_file_for

    catalog = ModelCatalog(cache_file_for(env, base_url, api_key or auth_token))
    return AnthropicProvider(
        api_key=api_key or None,
        auth_token=None if api_key else auth_token,
        base_url=base_url,
        catalog=catalog,
        allow_insecure=config.allow_insecure_base_url,
        custom_headers=_custom_headers(env),
        name=name,
    )


def _cloud(name: str, config: Config, env: Mapping[str, str]) -> Provider:
    """Amazon Bedrock or Google Vertex AI (`llm/platforms.py`, imported only now): their
    credentials looked up as their own tools do, a missing one named with where it was
    looked for."""
    from coder_ls.llm import platforms
    from coder_ls.llm.anthropic_provider import AnthropicProvider
    from coder_ls.llm.catalog import ModelCatalog

    platform: platforms.BedrockPlatform | platforms.VertexPlatform
    if name == "bedrock":
        platform = platforms.bedrock_platform(env)
        _checked_url(platform.base_url, "ANTHROPIC_BEDROCK_BASE_URL", config)
    else:
        platform = platforms.vertex_platform(env)
        _checked_url(platform.base_url, "ANTHROPIC_VERTEX_BASE_URL", config)
    return AnthropicProvider(
        base_url=platform.base_url,
        catalog=ModelCatalog(),  # the built-in table: these platforms are not asked for a listing
        allow_insecure=config.allow_insecure_base_url,
        custom_headers=_custom_headers(env),
        platform=platform,
    )
