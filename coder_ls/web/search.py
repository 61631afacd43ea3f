"""`web_search {query}`: the provider's server tool, offered as the rules say.

Anthropic runs the search itself (`web_search_20250305`): the model's call comes back as a
`server_tool_use` block and its answer as a `web_search_tool_result` block in the same
assistant message; both are kept whole (opaque blocks, `llm/anthropic_convert.py`) and
sent back as they came on the next request, which is what the API requires (the result's
`encrypted_content` is what lets the model cite it later). A long search may end a
response with `pause_turn`: the turn sends the conversation back as it is to let it go on.

The rules (contract section 22): a deny rule for `web_search` without a domain means it is
not offered at all (nothing of it in the prompt); deny rules with a domain become the
tool's `blocked_domains`, allow rules with a domain its `allowed_domains` (the API takes
one list or the other: a blocked list wins). The preset does not ask about a search: the
provider runs it, there is no call of ours to hold.

Where the provider has no such tool (Bedrock, Vertex, a gateway, the scripted provider)
`web_search` is not offered.
"""

from __future__ import annotations

from collections.abc import Iterable

from coder_ls.llm.base import ToolSpec
from coder_ls.protocol.config import Config, Rule

__all__ = ["MAX_USES", "WEB_FETCH", "WEB_SEARCH", "WEB_SEARCH_TYPE", "offered", "web_rules", "web_search_spec"]

WEB_FETCH = "web_fetch"
WEB_SEARCH = "web_search"
WEB_SEARCH_TYPE = "web_search_20250305"
MAX_USES = 5  # searches per request: a bound on what one response may cost
SERVER_TOOL_PROVIDERS = frozenset({"anthropic"})


def web_rules(rules: Iterable[Rule], tool: str = WEB_FETCH) -> list[Rule]:
    """The rules that can speak about a web tool's call: its own, and `*` rules that name
    no command and no path. (Here, not in `address`: the turn reads them at every request
    and must not load the address checks for it.)"""
    return [r for r in rules if r.tool == tool or (r.tool == "*" and r.command is None and r.path is None)]


def _turned_off(rules: Iterable[Rule], tool: str) -> bool:
    """A deny rule for `tool` that names no domain (and, for `*`, no command or path)."""
    return any(r.action == "deny" and r.domain is None for r in web_rules(rules, tool))


def offered(config: Config, tool: str) -> bool:
    """Whether a web tool is in the prompt: not when the user turned it off with a deny
    rule (it then costs nothing), and `web_search` only where the provider runs it."""
    if tool == WEB_SEARCH and config.provider not in SERVER_TOOL_PROVIDERS:
        return False
    return not _turned_off(config.rules, tool)


def web_search_spec(config: Config) -> ToolSpec | None:
    """The server tool in its API form, or None when it is not offered."""
    if not offered(config, WEB_SEARCH):
        return None
    rules = [r for r in config.rules if r.tool == WEB_SEARCH and r.domain is not None]
    blocked = sorted({_api_domain(r.domain) for r in rules if r.action == "deny" and r.domain})
    allowed = sorted({_api_domain(r.domain) for r in rules if r.action == "allow" and r.domain})
    server: dict[str, object] = {"type": WEB_SEARCH_TYPE, "max_uses": MAX_USES}
    if blocked:
        server["blocked_domains"] = blocked
    elif allowed:
        server["allowed_domains"] = allowed
    return ToolSpec(WEB_SEARCH, "", {"type": "object"}, server=server)


def _api_domain(domain: str) -> str:
    """A rule's domain as the API's lists take it: `*.x.com` is `x.com` there (a listed
    domain covers its sub-domains)."""
    return domain[2:] if domain.startswith("*.") else domain


def web_tools_key(config: Config) -> tuple[object, ...]:
    """What of the configuration changes the web tools' specs (a turn's tool set key)."""
    spec = web_search_spec(config)
    return (offered(config, WEB_FETCH), None if spec is None else repr(spec.server))
