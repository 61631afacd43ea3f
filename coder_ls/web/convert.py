"""A fetched page as the text the model reads: HTML to Markdown, other text as it is,
binary content named, everything capped.

The converter is `html-to-markdown` (PyPI `html-to-markdown`, MIT, a Rust core behind a
Python binding): chosen over `markdownify` (BeautifulSoup underneath) and `html2text` (pure
Python) for its speed on large pages (benchmarks/README.md, "web_fetch: HTML to Markdown")
and its output: ATX headings, fenced code blocks keeping their language, links and
tables kept. It is imported when the first page is converted, never at server start.
"""

from __future__ import annotations

import codecs
import re

from coder_ls.web.fetch import Page

__all__ = ["DEFAULT_MAX_CHARS", "html_to_markdown", "page_text"]

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
