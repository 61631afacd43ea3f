"""The converter on real documentation pages we did not write (tests/web/corpus/SOURCE.md:
NumPy's built HTML docs, two Sphinx themes): headings, code blocks and links survive,
scripts and styles do not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coder_ls.web.fetch import Page, html_to_markdown, page_text

CORPUS = Path(__file__).parent / "corpus"


def convert(name: str) -> str:
    return html_to_markdown((CORPUS / name).read_text(encoding="utf-8"))


def fenced_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```[^\n]*\n(.*?)^```", markdown, flags=re.MULTILINE | re.DOTALL)


def headings(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if re.match(r"^#{1,6} \S", line)]


@pytest.mark.parametrize(
    ("name", "heading", "code", "link"),
    [
        ("numpy-2.2-argmax.html", "numpy.argmax", ">>> np.argmax(a)", "numpy.argmin.html"),
        ("numpy-2.2-broadcasting.html", "Broadcasting", ">>> a = np.array([1.0, 2.0, 3.0])", "numpy.broadcast.html"),
        ("numpy-1.13-f2py-getting-started.html", "Three ways to wrap", "f2py -c fib1.f -m fib1", "signature-file.html"),
    ],
)
def test_headings_code_and_links_survive(name, heading, code, link):
    markdown = convert(name)
    assert any(heading in h for h in headings(markdown)), headings(markdown)[:10]
    blocks = fenced_blocks(markdown)
    assert any(code in b for b in blocks), [b[:80] for b in blocks[:5]]
    assert re.search(r"\[[^\]]+\]\([^)]*" + re.escape(link), markdown), link
    assert "<script" not in markdown and "DOCUMENTATION_OPTIONS" not in markdown
    assert "<span" not in markdown and "&gt;&gt;&gt;" not in markdown  # highlighted code is plain code


def test_the_section_headings_keep_their_order():
    found = [h for h in headings(convert("numpy-1.13-f2py-getting-started.html")) if "way" in h.lower()]
    order = ["The quick way", "The smart way", "The quick and smart way"]
    assert [next(i for i, h in enumerate(found) if h.lstrip("# ").startswith(o)) for o in order] == sorted(
        next(i for i, h in enumerate(found) if h.lstrip("# ").startswith(o)) for o in order
    )


def test_a_charset_from_the_meta_tag_when_the_header_has_none():
    html = '<html><head><meta charset="iso-8859-1"></head><body><h1>Caf\xe9</h1></body></html>'.encode("latin-1")
    text, error = page_text(Page(url="https://x.org/", status=200, content_type="text/html", body=html))
    assert "# Café" in text and not error
