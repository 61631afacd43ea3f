"""What `web_fetch` may reach: a URL read once into a `Target`, the rules' domains matched
as `sandbox.network`'s entries are, and the addresses a name resolves to checked.

SSRF: a page the model asks for must not be this machine or its network (a metadata
service at 169.254.169.254, a database on 127.0.0.1, a router on 192.168.1.1) unless the
user named it in a rule. A literal address is judged before anything is sent; a name is
judged where it is resolved (`guarded_resolver`), so that what is checked is what is
connected to (a name that resolves to a public address when asked and to 127.0.0.1 when
used gains nothing: the connection uses the checked answer).

No aiohttp at import: the resolver's class is made when a fetch first needs it.
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from collections.abc import Iterable
from typing import Any

import msgspec

from coder_ls.guard.netproxy import host_key, verdict
from coder_ls.protocol.config import NetworkDomains, Rule
from coder_ls.web.search import WEB_FETCH, web_rules

__all__ = [
    "WEB_FETCH",
    "Target",
    "WebError",
    "domain_matches",
    "guarded_resolver",
    "is_public",
    "named_by_rule",
    "parse_target",
    "web_rules",
]


class WebError(Exception):
    """A fetch that cannot or may not be made; its message is the tool's (error) result."""


class Target(msgspec.Struct, frozen=True):
    """A URL as the tools judge it: `host` is the rules' key (`guard.netproxy.host_key`:
    lower case, no trailing dot, an address in its normal form)."""

    url: str
    scheme: str  # "http" | "https"
    host: str
    port: int

    @property
    def is_address(self) -> bool:
        """The host is an IP address, not a name."""
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True


def parse_target(raw: str) -> Target:
    """`raw` as a `Target`, or a `WebError` saying what is wrong with it. A URL carrying a
    user name or password is refused: no credential leaves with a fetch."""
    text = raw.strip()
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise WebError(f"not a URL: {raw!r} ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise WebError(f"only http:// and https:// URLs are fetched, not {raw[:200]!r}")
    if parts.username is not None or parts.password is not None:
        raise WebError("a URL with a user name or password is not fetched (no credential is sent)")
    host = parts.hostname or ""
    key = host_key(host)
    if key is None:
        raise WebError(f"not a host name: {host or raw[:200]!r}")
    url = urllib.parse.urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, ""))  # no fragment
    return Target(url=url, scheme=scheme, host=key, port=port or (443 if scheme == "https" else 80))


def domain_matches(pattern: str, host: str) -> bool:
    """A rule's `domain` names `host` (a `host_key`): `x.com` exactly, `*.x.com` its
    sub-domains, an IP address only itself (`sandbox.network`'s reading)."""
    try:
        rules = NetworkDomains(allowed_domains=(pattern,))
    except ValueError:
        return False
    return verdict(rules, host) != "refused"


def named_by_rule(host: str, rules: Iterable[Rule], tool: str = WEB_FETCH) -> bool:
    """An allow or ask rule of `tool` names `host` by its domain (what lets a fetch reach a
    private address, or use plain http://; an ask rule still asks): a rule without a domain
    names no host."""
    return any(
        r.action in ("allow", "ask") and r.domain is not None and domain_matches(r.domain, host)
        for r in web_rules(rules, tool)
    )


def is_public(address: str) -> bool:
    """An address on the internet: not loopback, private, link-local, shared (CGNAT),
    reserved, multicast or unspecified (an IPv4-mapped IPv6 address is judged as IPv4)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def refuse_private(target: Target, address: str) -> WebError:
    return WebError(
        f"{target.host} is {address}, an address of this machine or a private network: not fetched unless a rule "
        f'names it ({{"tool": "web_fetch", "action": "allow", "domain": "{target.host}"}})'
    )


def guarded_resolver(target: Target, allow_private: bool) -> Any:
    """An aiohttp resolver that refuses (with a `WebError`) a name resolving to an address
    that is not public, unless `allow_private` (a rule names the host)."""
    from aiohttp.abc import AbstractResolver, ResolveResult
    from aiohttp.resolver import ThreadedResolver

    class _Guarded(AbstractResolver):
        def __init__(self) -> None:
            self._inner = ThreadedResolver()

        async def resolve(
            self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[ResolveResult]:
            found = await self._inner.resolve(host, port, family)
            if not allow_private:
                for entry in found:
                    if not is_public(entry["host"]):
                        raise refuse_private(target, entry["host"])
            return found

        async def close(self) -> None:
            await self._inner.close()

    return _Guarded()
