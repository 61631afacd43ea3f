"""Build the provider the configuration names.

Apart from `models` so that the model table imports nothing of the providers: the table
sits below them (the catalog and the request plan read it), the factory above them.

Providers:

- `"anthropic"` (default): the Messages API. Needs `ANTHROPIC_API_KEY` (or
  `ANTHROPIC_AUTH_TOKEN`) in the server's environment; `ANTHROPIC_BASE_URL`, when
  set, points it at another endpoint (tests point it at a local fake server);
  `ANTHROPIC_CUSTOM_HEADERS` (`Name: value` lines) adds headers to every request.
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
    if name == "anthropic":
        api_key = (env.get("ANTHROPIC_API_KEY") or "").strip()
        auth_token = (env.get("ANTHROPIC_AUTH_TOKEN") or "").strip()
        if not api_key and not auth_token:  # said before importing the provider (no key: no use)
            raise ProviderError("config", missing_key_message())
        base_url = (env.get("ANTHROPIC_BASE_URL") or "").strip() or None
        if base_url and not config.allow_insecure_base_url:
            from coder_ls.llm.anthropic_http import insecure_base_url

            refused = insecure_base_url(base_url)
            if refused is not None:  # said before anything is sent
                raise ProviderError("config", refused)
        from coder_ls.llm.anthropic_http import parse_custom_headers
        from coder_ls.llm.anthropic_provider import AnthropicProvider
        from coder_ls.llm.catalog import ModelCatalog, cache_file_for

        custom, skipped = parse_custom_headers(env.get("ANTHROPIC_CUSTOM_HEADERS"))
        if skipped:  # the values are not logged: a gateway's header may be a secret
            lines = ", ".join(map(str, skipped))
            log.warning("ANTHROPIC_CUSTOM_HEADERS: line(s) %s left out (not `Name: value`, or a reserved name)", lines)

        catalog = ModelCatalog(cache_file_for(env, base_url, api_key or auth_token))
        return AnthropicProvider(
            api_key=api_key or None,
            auth_token=None if api_key else auth_token,
            base_url=base_url,
            catalog=catalog,
            allow_insecure=config.allow_insecure_base_url,
            custom_headers=custom,
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
