"""`WebFetch(domain:…)` in `allowed-tools` and `coder-ls exec --allow/--deny` (contract
sections 10 and 22): the grant covers that host for the turn (`*.host` its subdomains, as a
rule's `domain` reads), nothing wider, and never opens what the web policy refuses whatever
the grants (private addresses, plain http, deny rules)."""

from __future__ import annotations

import pytest

from coder_ls.agent.webpolicy import web_decision
from coder_ls.commands.allowed import parse_allowed_tools
from coder_ls.headless.args import BadUsage, parse
from coder_ls.protocol.actions import ToolGrant
from coder_ls.protocol.config import Config, Rule


def decide(url: str, grants: tuple[ToolGrant, ...], **config: object) -> str:
    cfg = Config(permissions="balanced", **config)  # type: ignore[arg-type]
    return web_decision("web_fetch", {"url": url}, cfg, None, grants).action


def test_the_claude_code_spellings_parse():
    grants, problems = parse_allowed_tools(("WebFetch(domain:Docs.Python.org)", "WebFetch", "WebSearch"))
    assert problems == []
    assert grants == (ToolGrant(tool="web_fetch", domain="docs.python.org"), ToolGrant(tool="web_fetch"))


@pytest.mark.parametrize("entry", ["WebFetch(docs.python.org)", "WebFetch(domain:)", "WebFetch(domain:a b)"])
def test_a_grant_that_names_no_host_is_a_problem_not_every_host(entry):
    grants, problems = parse_allowed_tools((entry,))
    assert grants == () and len(problems) == 1 and "name a host" in problems[0]


def test_a_domain_grant_covers_that_host_and_a_star_its_subdomains():
    (g,), _ = parse_allowed_tools(("WebFetch(domain:python.org)",))
    assert decide("https://python.org/x", (g,)) == "allow"
    assert decide("https://docs.python.org/3/", (g,)) == "ask"  # the host named, not its subdomains
    (star,), _ = parse_allowed_tools(("WebFetch(domain:*.python.org)",))
    assert decide("https://docs.python.org/3/", (star,)) == "allow"
    assert decide("https://evilpython.org/", (star,)) == "ask"  # not a subdomain
    assert decide("https://python.org.evil.com/", (g,)) == "ask"
    assert decide("https://example.com/", (g,)) == "ask"  # the preset, as without the grant


def test_a_grant_never_opens_what_the_policy_refuses():
    (g,), _ = parse_allowed_tools(("WebFetch",))
    assert decide("https://example.com/", (g,)) == "allow"
    assert decide("http://example.com/", (g,)) == "deny"  # plain http needs a rule naming the host
    assert decide("https://127.0.0.1/", (g,)) == "deny"  # this machine
    assert decide("https://10.0.0.8/", (g,)) == "deny"  # a private network
    denied = Config(permissions="balanced", rules=[Rule(tool="web_fetch", action="deny", domain="example.com")])
    assert web_decision("web_fetch", {"url": "https://example.com/"}, denied, None, (g,)).action == "deny"


def test_exec_allow_and_deny_take_a_domain():
    args = parse(["--deny", "WebFetch(domain:bad.example)", "--deny", "WebFetch(domain:*.bad.example)",
                  "--allow", "WebFetch", "go"])  # fmt: skip
    assert args.grants[0] == ToolGrant(tool="web_fetch", domain="bad.example", action="deny")
    assert decide("https://bad.example/", args.grants) == "deny"
    assert decide("https://sub.bad.example/", args.grants) == "deny"
    assert decide("https://good.example/", args.grants) == "allow"
    with pytest.raises(BadUsage, match="name a host"):
        parse(["--allow", "WebFetch(bad.example)", "go"])
