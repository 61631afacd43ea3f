"""The policy's answer for `web_fetch` (contract section 22): its own tool, with domain rules.

`agent/policy.decide` hands a web call here; the order:

1. the URL is read once (`web.address.parse_target`); one that is not http(s), carries a
   user name, or names no host is refused;
2. a matching deny rule (`{"tool": "web_fetch", "action": "deny", "domain": "x.com"}`, or
   one without a domain: every host) refuses; so does a turn's deny grant;
3. a literal address of this machine or a private network (and `localhost`) is refused
   unless an allow (or ask) rule names the host by its domain (SSRF; a name resolving there
   is refused when the fetch resolves it, `web.address.guarded_resolver`); plain `http://`
   likewise (the user's rules say where clear text is acceptable);
4. a matching ask rule asks (unless the session granted the host);
5. a matching allow rule, a session grant of the host, or the command's allowed-tools allow;
6. else the preset, as for a read outside the workspace: asked in `balanced`, `auto-edit`
   and `strict`, allowed in `yolo`.

"Allow for session" and "Always allow" grant the host (`domain`), never every host.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from coder_ls.agent.grants import Decision, Grant, SessionGrants
from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.config import Config

__all__ = ["WEB_TOOLS", "describe_web", "web_decision", "web_scope"]

WEB_TOOLS = frozenset({"web_fetch"})


def _url_of(input: Any) -> str | None:
    value = input.get("url") if isinstance(input, Mapping) else getattr(input, "url", None)
    return value if isinstance(value, str) else None


def _local_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


def web_decision(
    tool: str,
    input: Any,
    config: Config,
    grants: SessionGrants | None,
    turn_grants: Collection[ToolGrant] = (),
) -> Decision:
    """See the module's docstring; `grants` is None in `strict` (no session grant counts)."""
    from coder_ls.agent.policy import preset_action
    from coder_ls.web.address import WebError, domain_matches, is_public, named_by_rule, parse_target
    from coder_ls.web.search import web_rules

    url = _url_of(input)
    if not url:
        return Decision("deny", "no url given")
    try:
        target = parse_target(url)
    except WebError as exc:
        return Decision("deny", str(exc))
    host = target.host
    rules = web_rules(config.rules, tool)

    def hit(action: str) -> str | None:
        for r in rules:
            if r.action == action and (r.domain is None or domain_matches(r.domain, host)):
                return r.domain or "every domain"
        return None

    if (denied := hit("deny")) is not None:
        return Decision("deny", f"a rule denies {tool} for {denied}")

    def granted_turn(action: str) -> bool:
        return any(
            g.action == action and g.tool == tool and (g.domain is None or domain_matches(g.domain, host))
            for g in turn_grants
        )

    if granted_turn("deny"):
        return Decision("deny", f"this turn may not use {tool} for {host}")
    named = named_by_rule(host, config.rules, tool)
    if not named and ((target.is_address and not is_public(host)) or _local_name(host)):
        return Decision(
            "deny",
            f"{host} is this machine or a private network: fetched only when a rule names it by its domain",
        )
    if target.scheme == "http" and not named:
        return Decision(
            "deny",
            f"plain http:// is fetched only from a host a rule names by its domain ({host} is not): use https://",
        )
    granted = grants is not None and grants.covers_domain(tool, host)
    if (asked := hit("ask")) is not None and not granted:
        return Decision("ask", f"rule for {tool} {asked}")
    if (allowed := hit("allow")) is not None:
        return Decision("allow", f"rule for {tool} {allowed}")
    if granted:
        return Decision("allow", "allowed for this session")
    if granted_turn("allow"):
        return Decision("allow", "allowed by the command's allowed-tools")
    return Decision(preset_action(config.permissions, tool), f"preset {config.permissions}")


def web_scope(tool: str, input: Any) -> list[Grant]:
    """What "Allow for session" / "Always allow" cover: the URL's host, nothing wider."""
    from coder_ls.web.address import WebError, parse_target

    url = _url_of(input)
    try:
        host = parse_target(url or "").host
    except WebError:
        return []
    return [Grant(tool, domain=host)]


def describe_web(tool: str, input: Any) -> str:
    url = _url_of(input) or ""
    shown = url if len(url) <= 200 else url[:200] + "…"
    return f"fetch {shown}"
