"""The command model's fields through a real turn against the strict fake (contract
section 18): a hidden command runs, named arguments expand, a command's progress message
titles its turn, and a skill's when_to_use reaches the model with its description."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import last_user_text, progress_messages
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")


@pytest.fixture
def user_dir(shared_session) -> Iterator[Path]:
    root = shared_session.root
    base = root.parent / f".xdg-{root.name}" / "coder"
    made: list[Path] = []

    def write(rel: str, text: str) -> Path:
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        made.append(path)
        return path

    yield write  # type: ignore[misc]
    for path in made:
        path.unlink(missing_ok=True)


async def test_a_hidden_command_with_named_arguments_runs_under_its_progress_message(agent, user_dir):
    user_dir(
        "commands/migrate.md",
        "---\nhidden: true\narguments: [table, column]\nprogress-message: Planning the migration\n---\n"
        "Plan a migration of $table adding $column.\n",
    )
    a = await agent()
    listed = await a.s.execute("coder.listCommands", {})
    assert "migrate" not in {e["name"] for e in listed["data"]["commands"]}
    hidden = {
        e["name"]: e for e in (await a.s.execute("coder.listCommands", {"includeHidden": True}))["data"]["commands"]
    }
    assert hidden["migrate"]["arguments"] == ["table", "column"]
    assert hidden["migrate"]["argumentHint"] == "<table> <column>"  # derived: no argument-hint
    a.fake.push(reply("planned"))
    result = await a.turn("/migrate users email")
    assert (result["status"], result["reply"]) == ("completed", "planned"), result
    assert "Plan a migration of users adding email." in last_user_text(a.fake.message_requests[0])
    assert "Planning the migration" in progress_messages(a.s)


async def test_when_to_use_reaches_the_model_with_the_description(agent, user_dir):
    user_dir(
        "skills/sql-review/SKILL.md",
        "---\ndescription: Review SQL\nwhen_to_use: a query touches more than one table\n---\nCheck the joins.\n",
    )
    a = await agent()
    a.fake.push(reply("ok"))
    await a.turn("hello")
    system = str(a.fake.message_requests[0].body.get("system"))
    assert "Review SQL" in system and "a query touches more than one table" in system
