"""Where a request to the model may go, and what it carries there (contract section 21):
the origin rule for redirects (`same_origin`), the refusal of a key in clear off this
machine (`insecure_base_url`), the user's `ANTHROPIC_CUSTOM_HEADERS`, and the proxy the
environment names. Light (no aiohttp): the factory asks it before any provider is built.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping

__all__ = ["insecure_base_url", "is_loopback", "parse_custom_headers", "proxy_for", "same_origin", "show_origin"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_loopback(host: str | None) -> bool:
    """`localhost` (and `*.localhost`), 127.0.0.0/8, ::1: this machine."""
    if not host:
        return False
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int | None]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme)


def show_origin(url: str) -> str:
    scheme, host, port = _origin(url)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + ("" if port == _DEFAULT_PORTS.get(scheme) else f":{port}")


def same_origin(a: str, b: str) -> bool:
    """Same scheme, host and port (a downgrade from https to http is another origin)."""
    return _origin(a) == _origin(b)


def insecure_base_url(url: str, variable: str = "ANTHROPIC_BASE_URL") -> str | None:
    """Why a credential must not be sent to `url` (from `variable`), else None: a plain
    `http://` URL to a host that is not this machine would carry the key in clear."""
    scheme, host, _ = _origin(url)
    if scheme == "https" or (scheme == "http" and is_loopback(host)):
        return None
    if scheme not in ("http", "https"):
        return f"{variable} must start with https:// (it is {url!r})."
    return (
        f"{variable} is {show_origin(url)}: over plain http the API key would cross the network "
        "in clear, so coder-ls does not send it. Use https://, or, if this network is yours, "
        'set "allowInsecureBaseUrl": true in your settings.'
    )


_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# what a custom header may not set: the framing of the request, and the credential (ours)
_RESERVED = frozenset({"host", "content-length", "transfer-encoding", "connection", "x-api-key", "authorization"})


def parse_custom_headers(text: str | None) -> tuple[dict[str, str], list[int]]:
    """`ANTHROPIC_CUSTOM_HEADERS`: one `Name: value` a line (as Claude Code and the SDK's
    users write it). (the headers, the numbers of the lines left out): a line without a
    colon or with a name HTTP does not allow, or one that would set the framing or the
    credential. Values are not logged: a gateway's header may be a secret."""
    headers: dict[str, str] = {}
    skipped: list[int] = []
    for number, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _HEADER_NAME.match(name) or name.lower() in _RESERVED or "\r" in value:
            skipped.append(number)
            continue
        headers[name] = value
    return headers, skipped


def proxy_for(url: str, env: Mapping[str, str] | None = None) -> str | None:
    """The proxy the environment names for `url` (`HTTPS_PROXY` / `HTTP_PROXY`, `ALL_PROXY`,
    unless `NO_PROXY` lists its host), read once per client: aiohttp's own `trust_env` would
    look it up (and ~/.netrc) in a worker thread at every request."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    environ = dict(os.environ if env is None else env)
    lowered = {k.lower(): v for k, v in environ.items() if k.lower().endswith("_proxy") and v}
    bypass = lowered.get("no_proxy", "")
    bypassed = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # public, untyped
    if bypass and parts.hostname and bypassed(parts.hostname, {"no": bypass}):
        return None
    return lowered.get(f"{parts.scheme}_proxy") or lowered.get("all_proxy") or None
