"""Contract section 22, the web tools, end to end: a real LSP client drives the real server
(tests/harness.py); the model is the strict fake Messages endpoint; the pages come from a
real HTTP server on 127.0.0.1 (tests/fakes/web_pages.py), which the tests allow by a rule
since loopback is refused by default.

web_fetch: converted to Markdown, capped, refused on loopback without a rule, a redirect to
another host not followed (fetching it is a new call, asked again), domain allow/deny
rules, a bare deny rule takes it out of the prompt. web_search: the provider's server tool,
its blocks sent back exactly as they came (the fake refuses anything else), a paused
response sent back to go on, a deny rule takes it out of the prompt, domain rules become
its blocked/allowed lists."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from agent_e2e import calls, result_text, tool_call, tool_results
from anthropic_server import reply
from anthropic_server_tools import search_blocks
from web_pages import PageServer

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

LOOPBACK = {"tool": "web_fetch", "action": "allow", "domain": "127.0.0.1"}
SEARCH = {
    "id": "srvtoolu_01WebE2E",
    "query": "pygls 2 release notes",
    "results": [
        {"url": "https://pygls.readthedocs.io/en/latest/", "title": "pygls", "page_age": "May 1, 2026"},
        {"url": "https://github.com/openlawlibrary/pygls/releases", "title": "Releases"},
    ],
}


@pytest_asyncio.fixture(loop_scope="package")
async def pages() -> AsyncIterator[PageServer]:
    async with PageServer() as server:
        yield server


async def one_call(a: Any, name: str, inp: dict[str, Any], call_id: str) -> str:
    a.fake.push(calls(tool_call(name, inp, call_id)), reply("done"))
    result = await a.turn("go")
    assert result["status"] == "completed", result
    return result_text(tool_results(a.fake.message_requests[-1])[call_id])


def tools_sent(a: Any) -> dict[str, dict[str, Any]]:
    body = a.fake.message_requests[-1].body
    return {t["name"]: {k: v for k, v in t.items() if k != "cache_control"} for t in body.get("tools", [])}


def plain(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


async def test_a_page_is_fetched_as_markdown_and_a_long_one_is_capped(agent, pages):
    a = await agent(rules=[LOOPBACK])
    text = await one_call(a, "web_fetch", {"url": pages.url("/page")}, "toolu_web1")
    assert "# Local heading" in text and "def add(a, b):" in text and "```" in text, text
    assert "do-not-show" not in text
    big = await one_call(a, "web_fetch", {"url": pages.url("/big")}, "toolu_web2")
    assert "[cut at 100000 characters:" in big and len(big) < 101_000
    assert a.s.questions == []  # the rule allows the host: nothing asked in balanced
    assert {"web_fetch", "web_search"} <= set(tools_sent(a))


async def test_loopback_is_refused_without_a_rule_naming_it(agent, pages):
    a = await agent(permissions="yolo")
    text = await one_call(a, "web_fetch", {"url": pages.url("/page")}, "toolu_web3")
    assert text.startswith("Not allowed:") and "private network" in text, text
    localhost = await one_call(a, "web_fetch", {"url": pages.url("/page", "localhost")}, "toolu_web4")
    assert localhost.startswith("Not allowed:"), localhost
    assert pages.seen == []  # nothing reached the server


async def test_a_redirect_to_another_host_is_not_followed_and_fetching_it_asks_again(agent, pages):
    a = await agent(rules=[LOOPBACK, {"tool": "web_fetch", "action": "ask", "domain": "localhost"}])
    a.s.answer_question = lambda p: "Allow once"
    elsewhere = pages.url("/page", "localhost")
    a.fake.push(
        calls(tool_call("web_fetch", {"url": pages.url("/redirect-other")}, "toolu_web5")),
        calls(tool_call("web_fetch", {"url": elsewhere}, "toolu_web6")),
        reply("done"),
    )
    result = await a.turn("go")
    assert result["status"] == "completed", result
    results = tool_results(a.fake.message_requests[-1])
    first, second = result_text(results["toolu_web5"]), result_text(results["toolu_web6"])
    assert "not followed" in first and elsewhere in first and "# Local heading" not in first, first
    assert "# Local heading" in second, second
    assert len(a.s.questions) == 1 and f"fetch {elsewhere}" in a.s.questions[0].message
    assert [p for p, _ in pages.seen] == ["/redirect-other", "/page"]


async def test_domain_rules_and_tools_turned_off(agent, pages):
    a = await agent(
        rules=[LOOPBACK, {"tool": "web_fetch", "action": "deny", "domain": "127.0.0.1"}], permissions="yolo"
    )
    text = await one_call(a, "web_fetch", {"url": pages.url("/page")}, "toolu_web7")
    assert text == "Not allowed: a rule denies web_fetch for 127.0.0.1", text
    a = await agent(rules=[{"tool": "web_fetch", "action": "deny"}, {"tool": "web_search", "action": "deny"}])
    a.fake.push(reply("hi"))
    assert (await a.turn("hello"))["status"] == "completed"
    assert not {"web_fetch", "web_search"} & set(tools_sent(a))  # turned off: nothing of them in the prompt
    a = await agent(rules=[{"tool": "web_search", "action": "deny", "domain": "*.pinterest.com"}])
    a.fake.push(reply("hi"))
    assert (await a.turn("hello"))["status"] == "completed"
    assert tools_sent(a)["web_search"] == {
        "type": "web_search_20250305",
        "max_uses": 5,
        "blocked_domains": ["pinterest.com"],
        "name": "web_search",
    }


async def test_web_search_blocks_are_sent_back_exactly_as_they_came(agent):
    a = await agent()
    a.fake.push(reply("pygls 2 is out.", webSearch=SEARCH))
    assert (await a.turn("what is new in pygls?"))["status"] == "completed"
    a.fake.push(reply("You're welcome."))
    assert (await a.turn("thanks"))["status"] == "completed"
    messages = a.fake.message_requests[-1].body["messages"]
    assistant = [m for m in messages if m["role"] == "assistant"][-1]["content"]
    use, result = search_blocks(SEARCH)
    assert [plain(b) for b in assistant[:2]] == [use, result]
    assert assistant[2] == {"type": "text", "text": "pygls 2 is out."}


async def test_a_paused_search_is_sent_back_to_go_on(agent):
    a = await agent()
    a.fake.push(reply("", webSearch=SEARCH, stopReason="pause_turn"), reply("Found the release notes."))
    result = await a.turn("search the pygls release notes")
    assert result["status"] == "completed" and result["reply"] == "Found the release notes.", result
    resumed = a.fake.message_requests[-1].body["messages"]
    use, found = search_blocks(SEARCH)
    assert resumed[-1]["role"] == "assistant" and [plain(b) for b in resumed[-1]["content"]] == [use, found]
