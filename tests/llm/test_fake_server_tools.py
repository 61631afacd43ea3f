"""The strict fake refuses a malformed replay of the web search server tool's blocks, as
the real Messages API does (tests/fakes/anthropic_server_tools.py)."""

from __future__ import annotations

import copy
from typing import Any

from anthropic_server_tools import check_server_blocks, remember, search_blocks

SEARCH = {
    "id": "srvtoolu_01",
    "query": "pygls 2",
    "results": [{"url": "https://pygls.readthedocs.io/", "title": "pygls"}],
}


def conversation(*assistant: dict[str, Any], more: bool = True) -> list[dict[str, Any]]:
    messages = [{"role": "user", "content": "search"}, {"role": "assistant", "content": list(assistant)}]
    return messages + ([{"role": "user", "content": "thanks"}] if more else [])


def sent() -> dict[str, dict[str, Any]]:
    kept: dict[str, dict[str, Any]] = {}
    remember(kept, list(search_blocks(SEARCH)))
    return kept


def test_the_blocks_as_sent_are_accepted():
    use, result = search_blocks(SEARCH)
    text = {"type": "text", "text": "pygls is ..."}
    assert check_server_blocks(conversation(use, result, text), sent()) is None
    assert check_server_blocks(conversation(use, more=False), sent()) is None  # paused: sent back to go on


def test_a_malformed_replay_is_refused():
    use, result = search_blocks(SEARCH)
    changed = copy.deepcopy(result)
    changed["content"][0]["encrypted_content"] = "tampered"
    assert "was changed" in (check_server_blocks(conversation(use, changed), sent()) or "")
    assert "preceding `server_tool_use`" in (check_server_blocks(conversation(result, use), sent()) or "")
    assert "without `web_search_tool_result`" in (check_server_blocks(conversation(use), sent()) or "")
    in_user = [{"role": "user", "content": [use]}]
    assert "only allowed in assistant messages" in (check_server_blocks(in_user, {}) or "")
    bad_id = {**use, "id": "toolu_1"}
    assert "srvtoolu_" in (check_server_blocks(conversation(bad_id, {**result, "tool_use_id": "toolu_1"}), {}) or "")
    no_results = {**result, "content": [{"type": "web_search_result", "url": "https://x"}]}
    assert "Field required" in (check_server_blocks(conversation(use, no_results), {}) or "")
