"""web_fetch against a real HTTP server on 127.0.0.1 (tests/fakes/web_pages.py): converted,
capped, bounded in bytes and seconds, redirects kept on their host, no credential sent,
loopback refused unless a rule names it; and the policy's answers by domain."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from web_pages import PageServer

from coder_ls.agent.grants import Grant, SessionGrants
from coder_ls.agent.policy import approval_scope, decide
from coder_ls.protocol.config import Config, Rule
from coder_ls.web.address import WebError, domain_matches, is_public, parse_target
from coder_ls.web.fetch import FetchLimits, fetch_page, page_text

ROOT = Path("/nonexistent-ws")


async def fetch(url: str, *, allow_private: bool = True, **limits: float) -> tuple[str, bool]:
    page = await fetch_page(parse_target(url), allow_private=allow_private, limits=FetchLimits(**limits))  # type: ignore[arg-type]
    return page_text(page)


async def test_a_page_is_markdown_without_its_script_and_style():
    async with PageServer() as pages:
        text, error = await fetch(pages.url("/page"))
    assert not error
    assert "# Local heading" in text
    assert "**bold**" in text and "[a link](https://docs.python.org/3/)" in text
    assert "```" in text and "def add(a, b):" in text
    assert "do-not-show" not in text and "color: red" not in text


async def test_a_long_page_is_cut_with_a_note_and_a_huge_body_is_not_read_past_the_limit():
    async with PageServer() as pages:
        text, _ = await fetch(pages.url("/big"))
        assert "[cut at 100000 characters:" in text and len(text) < 101_000
        huge, _ = await fetch(pages.url("/huge"), max_bytes=1 << 20)
    assert "[the page was longer than 1048576 bytes: the rest was not read]" in huge


async def test_a_slow_page_is_given_up_after_the_time_limit():
    async with PageServer(slow_seconds=2) as pages:
        started = time.monotonic()
        with pytest.raises(WebError, match=r"did not answer within 0\.5s"):
            await fetch(pages.url("/slow"), seconds=0.5)
        assert time.monotonic() - started < 1.5


async def test_redirects_are_followed_on_the_same_host_only():
    async with PageServer() as pages:
        same, _ = await fetch(pages.url("/redirect-same"))
        other, _ = await fetch(pages.url("/redirect-other"))
        with pytest.raises(WebError, match="more than 5 redirects"):
            await fetch(pages.url("/loop"))
    assert "# Local heading" in same and f"URL: {pages.url('/page')}" in same
    assert "not followed" in other and pages.url("/page", "localhost") in other
    assert "# Local heading" not in other


async def test_no_cookie_no_credential_leaves():
    async with PageServer() as pages:
        await fetch(pages.url("/cookie"))
        with pytest.raises(WebError, match="user name or password"):
            parse_target(f"http://user:pw@127.0.0.1:{pages.port}/page")
    (_, first), (_, second) = pages.seen[0], pages.seen[1]
    assert "Cookie" not in second and "Authorization" not in second and "Authorization" not in first


async def test_binary_and_text_and_errors():
    async with PageServer() as pages:
        binary, _ = await fetch(pages.url("/binary"))
        plain, _ = await fetch(pages.url("/text"))
        missing, error = await fetch(pages.url("/missing"))
    assert "1024 bytes of application/octet-stream: not text, not shown" in binary
    assert "plain words" in plain
    assert error and "Status: 404" in missing and "# Not here" in missing


async def test_a_name_that_resolves_to_loopback_is_refused_unless_named():
    async with PageServer() as pages:
        with pytest.raises(WebError, match="an address of this machine or a private network"):
            await fetch(pages.url("/page", "localhost"), allow_private=False)
        text, _ = await fetch(pages.url("/page", "localhost"), allow_private=True)
    assert "# Local heading" in text


def test_addresses_and_domains():
    assert not any(is_public(a) for a in ("127.0.0.1", "10.1.2.3", "192.168.0.1", "169.254.169.254", "::1", "fc00::1"))
    assert not is_public("::ffff:127.0.0.1") and not is_public("100.64.0.1") and not is_public("0.0.0.0")
    assert is_public("93.184.216.34") and is_public("2606:4700::1111")
    assert domain_matches("docs.python.org", "docs.python.org") and not domain_matches("python.org", "docs.python.org")
    assert domain_matches("*.python.org", "docs.python.org") and not domain_matches("*.python.org", "python.org")
    assert parse_target("https://Docs.Python.org./3/#x").host == "docs.python.org"
    assert parse_target("http://0x7f000001/").host == "127.0.0.1"  # as the resolver would read it
    with pytest.raises(WebError):
        parse_target("file:///etc/passwd")
    with pytest.raises(ValueError, match="not a domain rule"):
        Rule(tool="web_fetch", action="allow", domain="https://x.com/")


def decision(url: str, preset: str = "balanced", rules: tuple[Rule, ...] = (), grants: SessionGrants | None = None):
    config = Config(permissions=preset, rules=list(rules))  # type: ignore[arg-type]
    return decide("web_fetch", {"url": url}, config, grants, root=ROOT)


def test_the_preset_as_a_read_outside_the_workspace():
    url = "https://docs.python.org/3/"
    assert [decision(url, p).action for p in ("strict", "balanced", "auto-edit", "yolo")] == [
        "ask",
        "ask",
        "ask",
        "allow",
    ]


def test_domain_rules():
    allow = Rule(tool="web_fetch", action="allow", domain="docs.python.org")
    deny = Rule(tool="web_fetch", action="deny", domain="*.example.com")
    assert decision("https://docs.python.org/3/", rules=(allow,)).action == "allow"
    assert decision("https://peps.python.org/", rules=(allow,)).action == "ask"
    denied = decision("https://a.example.com/", "yolo", rules=(deny,))
    assert denied.action == "deny" and "*.example.com" in denied.reason
    assert decision("https://x.org/", "yolo", rules=(Rule(tool="web_fetch", action="deny"),)).action == "deny"
    asked = Rule(tool="web_fetch", action="ask", domain="docs.python.org")
    assert decision("https://docs.python.org/", "yolo", rules=(asked,)).action == "ask"


def test_http_and_private_addresses_need_a_rule_naming_them():
    assert decision("http://docs.python.org/", "yolo").action == "deny"
    named = Rule(tool="web_fetch", action="allow", domain="docs.python.org")
    assert decision("http://docs.python.org/", rules=(named,)).action == "allow"
    for url in ("https://127.0.0.1/", "https://[::1]/", "https://169.254.169.254/latest", "https://localhost/"):
        refused = decision(url, "yolo")
        assert refused.action == "deny" and "private network" in refused.reason, url
    loop = Rule(tool="web_fetch", action="allow", domain="127.0.0.1")
    assert decision("http://127.0.0.1:8080/x", rules=(loop,)).action == "allow"
    assert decision("http://127.0.0.2/x", "yolo", rules=(loop,)).action == "deny"


def test_a_session_grant_is_the_host_only():
    scope = approval_scope("web_fetch", {"url": "https://docs.python.org/3/x"}, ROOT)
    assert scope == [Grant("web_fetch", domain="docs.python.org")]
    grants = SessionGrants(scope)
    assert decision("https://docs.python.org/other", grants=grants).action == "allow"
    assert decision("https://peps.python.org/", grants=grants).action == "ask"
    assert decision("https://docs.python.org/", "strict", grants=grants).action == "ask"  # strict: no grant counts


def test_nothing_of_the_fetch_is_loaded_before_the_tool_runs():
    """The server's start and a turn's tool set load neither the converter nor the fetch."""
    code = (
        "import sys; from coder_ls.agent.tools import build_default_tools; "
        "from coder_ls.protocol.config import Config; from coder_ls.web.search import web_search_spec; "
        "build_default_tools().specs(); web_search_spec(Config()); "
        "print(*(m in sys.modules for m in ('html_to_markdown', 'coder_ls.web.fetch', 'coder_ls.web.address')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]
