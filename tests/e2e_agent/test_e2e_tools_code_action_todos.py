"""A code action is one focused request: it never seeds a todo list, whatever its prompt
looks like (the generated prompt is long and says "Refactor"), so no client is left with
a plan that never finishes."""

from __future__ import annotations

import pytest
from agent_e2e import all_text, requests
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")

SOURCE = "def total(items):\n    s = 0\n    for i in items:\n        s += i\n    return s\n"


@pytest.mark.parametrize("action", ["fix", "explain", "refactor", "tests"])
async def test_code_actions_do_not_seed_a_todo_list(agent, action):
    a = await agent(permissions="yolo")
    name = f"todo_{action}.py"
    (a.root / name).write_text(SOURCE)
    uri = a.s.open(name, SOURCE, version=1)
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}
    a.fake.push(reply("Looks fine."))
    arg = {"uri": uri, "range": rng, "action": action, "instruction": "implement it in a cleaner way, please"}
    result = await a.s.execute("coder.codeAction", arg)
    assert result["status"] == "completed", result
    assert a.s.events_of("todoUpdated") == []
    (sent,) = requests(a.fake)
    assert "todoWrite with a short plan" not in all_text(sent)


async def test_a_typed_complex_request_still_gets_its_todo_list(agent):
    a = await agent(permissions="yolo")
    a.fake.push(reply("Planned."))
    result = await a.turn("refactor the parser, migrate the config and implement the cache")
    assert result["status"] == "completed", result
    assert a.s.events_of("todoUpdated"), "the complex-task rule no longer fires for typed input"
