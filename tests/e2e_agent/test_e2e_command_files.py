"""Commands from files against the Messages API: a command's `model:` is used for its
turn only; the session's model stays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")


@pytest.fixture
def command_file(shared_session) -> Iterator[Path]:
    root = shared_session.root  # the user's own file (a workspace's model waits for /trust)
    path = root.parent / f".xdg-{root.name}" / "coder" / "commands" / "opus.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\ndescription: Ask Opus\nmodel: claude-opus-4-6\n---\nThink hard about $ARGUMENTS\n")
    yield path
    path.unlink(missing_ok=True)


async def test_a_commands_model_is_used_for_its_turn_only(agent, command_file):
    a = await agent()
    a.fake.push(reply("deep answer"), reply("plain answer"))
    result = await a.turn("/opus the design")
    assert (result["status"], result["reply"]) == ("completed", "deep answer"), result
    result = await a.turn("and now?")
    assert result["reply"] == "plain answer"
    first, second = a.fake.message_requests
    assert first.body["model"] == "claude-opus-4-6"
    assert second.body["model"] == "claude-sonnet-5-5"  # the default, "sonnet", as the API lists it
    assert a.s.events_of("modelChanged") == []
