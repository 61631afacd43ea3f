"""One page over HTTP(S) for `web_fetch`: bounded, without credentials, redirects kept on
their host.

- Every read has a size and a time limit (`FetchLimits`): the body is read `max_bytes` at
  most (after content-encoding is undone, so a gzip bomb counts what it becomes) within
  `seconds` for the whole exchange; connecting has its own limit.
- Nothing of the user's leaves: no cookie jar, no `Authorization`, no proxy or `.netrc` from
  the environment (`trust_env=False`), a URL with a user name refused (`address.parse_target`).
- A redirect is followed only on the same scheme, host and port (at most
  `max_redirects`); one elsewhere is not followed: the result names it, and fetching it is
  a new `web_fetch` call, so a new decision of the policy (contract section 22).
- Addresses: `address.guarded_resolver` refuses a name that resolves to this machine or a
  private network unless a rule names the host; a literal address is judged by the caller.

No aiohttp at import (the tool imports this module when it first runs).
"""

from __future__ import annotations

import asyncio
import urllib.parse

import msgspec

from coder_ls.web.address import Target, WebError, guarded_resolver, parse_target

__all__ = ["FetchLimits", "Page", "fetch_page"]

USER_AGENT = "coder-ls web_fetch (+https://github.com/coder-ls)"
ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.1"
REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchLimits(msgspec.Struct, frozen=True):
    max_bytes: int = 5 * 1024 * 1024  # of the body, decoded
    seconds: float = 30.0  # the whole exchange, redirects included
    connect_seconds: float = 10.0
    max_redirects: int = 5


class Page(msgspec.Struct, frozen=True):
    """What came back. `redirect`: a redirect to another origin, not followed (its URL);
    `truncated`: the body went past `max_bytes` and was cut."""

    url: str  # where the body came from (after same-origin redirects)
    status: int
    content_type: str = ""
    charset: str | None = None
    body: bytes = b""
    truncated: bool = False
    redirect: str | None = None


def _same_origin(a: Target, b: Target) -> bool:
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


async def _read_bounded(response: object, limit: int) -> tuple[bytes, bool]:
    """The body, `limit` bytes at most (more is cut): the caller's timeout bounds the time."""
    content = response.content  # type: ignore[attr-defined]
    out = bytearray()
    while len(out) <= limit:
        piece = await content.read(min(65536, limit + 1 - len(out)))
        if not piece:
            break
        out += piece
    return bytes(out[:limit]), len(out) > limit


async def fetch_page(target: Target, *, allow_private: bool, limits: FetchLimits | None = None) -> Page:
    """GET `target` (see the module's docstring). Raises `WebError` for what the model should
    be told (a refused address, a timeout, a connection that failed)."""
    import aiohttp

    limits = limits or FetchLimits()
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=limits.connect_seconds, sock_read=limits.seconds)
    connector = aiohttp.TCPConnector(resolver=guarded_resolver(target, allow_private), limit=2, force_close=True)
    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT}
    try:
        async with (
            aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
                timeout=timeout,
                headers=headers,
            ) as session,
            asyncio.timeout(limits.seconds),
        ):
            current = target
            for _ in range(limits.max_redirects + 1):
                async with session.get(current.url, allow_redirects=False) as response:
                    location = response.headers.get("Location")
                    if response.status in REDIRECTS and location:
                        nxt = parse_target(urllib.parse.urljoin(current.url, location))
                        if not _same_origin(current, nxt):
                            return Page(url=current.url, status=response.status, redirect=nxt.url)
                        current = nxt
                        continue
                    body, cut = await _read_bounded(response, limits.max_bytes)
                    return Page(
                        url=current.url,
                        status=response.status,
                        content_type=response.content_type or "",
                        charset=response.charset,
                        body=body,
                        truncated=cut,
                    )
            raise WebError(f"more than {limits.max_redirects} redirects from {target.url}: not followed further")
    except TimeoutError as exc:
        raise WebError(f"{target.url} did not answer within {limits.seconds:g}s") from exc
    except aiohttp.ClientError as exc:
        raise WebError(f"fetching {target.url} failed: {exc}") from exc
