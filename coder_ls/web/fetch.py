"""One page over HTTP(S) for `web_fetch`, bounded, without credentials, redirects kept on
their host; then the page as the text the model reads.

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

`page_text`: HTML to Markdown, other text as it is, binary content named, everything
capped.

The converter is `html-to-markdown` (PyPI `html-to-markdown`, MIT, a Rust core behind a
Python binding): chosen over `markdownify` (BeautifulSoup underneath) and `html2text` (pure
Python) for its speed on large pages (benchmarks/README.md, "web_fetch: HTML to Markdown")
and its output: ATX headings, fenced code blocks keeping their language, links and
tables kept. It is imported when the first page is converted, never at server start.

No aiohttp at import (the tool imports this module when it first runs).
"""

from __future__ import annotations

import asyncio
import codecs
import re
import urllib.parse

import msgspec

from coder_ls.web.address import Target, WebError, guarded_resolver, parse_target

__all__ = ["DEFAULT_MAX_CHARS", "FetchLimits", "Page", "fetch_page", "html_to_markdown", "page_text"]

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


# --- the page as the model reads it ------------------------------------------------------

DEFAULT_MAX_CHARS = 100_000  # of the text the model reads from one page
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript", "application/x-yaml"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_BLANKS = re.compile(r"\n{3,}")


def html_to_markdown(html: str, base_url: str | None = None) -> str:
    """`html` as Markdown: scripts, styles, navigation and forms dropped (the library's
    standard preprocessing), headings ATX, code fenced with its language, links made
    absolute against `base_url` (the model can fetch them as they are)."""
    from html_to_markdown import ConversionOptions, convert

    options = ConversionOptions(
        heading_style="atx", code_block_style="backticks", extract_metadata=False, base_url=base_url
    )
    result = convert(html, options)
    text = result if isinstance(result, str) else str(getattr(result, "content", "") or "")
    return _BLANKS.sub("\n\n", text).strip() + "\n"


def _charset(page: Page) -> str:
    for name in (page.charset, _meta_charset(page.body)):
        if name:
            try:
                return codecs.lookup(name).name
            except LookupError:
                continue
    return "utf-8"


def _meta_charset(body: bytes) -> str | None:
    found = _META_CHARSET.search(body[:4096])
    return found.group(1).decode("ascii") if found else None


def _is_html(page: Page) -> bool:
    if page.content_type in _HTML_TYPES:
        return True
    if page.content_type in ("", "application/octet-stream", "text/plain"):  # a server that does not say
        head = page.body[:512].lstrip().lower()
        return head.startswith((b"<!doctype html", b"<html"))
    return False


def _is_text(content_type: str) -> bool:
    return content_type.startswith("text/") or content_type in _TEXT_TYPES or content_type.endswith(("+json", "+xml"))


def page_text(page: Page, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[str, bool]:
    """(the text the model reads, whether it is an error): a header naming the URL and the
    status, then the page as Markdown (HTML) or as it is (text), cut at `max_chars` with a
    note saying how much was left out."""
    if page.redirect is not None:
        text = (
            f"{page.url} redirects ({page.status}) to {page.redirect}, another host or scheme: not followed. "
            "Fetch that URL with web_fetch if it is what you want (it is a new decision)."
        )
        return text, False
    header = f"URL: {page.url}\nStatus: {page.status}\n"
    if page.content_type:
        header += f"Content-Type: {page.content_type}\n"
    error = page.status >= 400
    if _is_html(page):
        body = html_to_markdown(page.body.decode(_charset(page), errors="replace"), page.url)
    elif _is_text(page.content_type) or not page.content_type:
        body = page.body.decode(_charset(page), errors="replace")
    else:
        return header + f"\n({len(page.body)} bytes of {page.content_type}: not text, not shown)\n", error
    notes = []
    if page.truncated:
        notes.append(f"[the page was longer than {len(page.body)} bytes: the rest was not read]")
    if len(body) > max_chars:
        notes.append(f"[cut at {max_chars} characters: {len(body) - max_chars} more not shown]")
        body = body[:max_chars]
    return header + "\n" + body.rstrip("\n") + "\n" + "".join(f"\n{n}" for n in notes), error
