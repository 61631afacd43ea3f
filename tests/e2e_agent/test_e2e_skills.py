"""Model-invoked skills end to end (contract section 10): the list in the system prompt,
the `skill` tool loading a real-world layout (`.claude/skills/<name>/SKILL.md` with a
script beside it), `disable-model-invocation`, no tool and no list without skills, and
the loaded skill kept across /compact."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import all_text, calls, result_text, tool_call, tool_results
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")

LINT = """\
---
name: lint-python
description: Lint Python files the way this project does
when_to_use: before committing Python changes
allowed-tools: Bash(ruff:*)
---
Run `${CLAUDE_SKILL_DIR}/scripts/lint.sh $ARGUMENTS` and fix what it reports.
Current files: !`ls`
"""
SECRET = """\
---
description: Hidden from the model
disable-model-invocation: true
---
Only for the user.
"""


def system_text(request) -> str:
    system = request.body.get("system", "")
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def tool_names(request) -> list[str]:
    return [t["name"] for t in request.body.get("tools", [])]


@pytest.fixture
def skills(shared_session) -> Iterator[Path]:
    base = shared_session.root / ".claude" / "skills"
    (base / "lint-python" / "scripts").mkdir(parents=True, exist_ok=True)
    (base / "lint-python" / "SKILL.md").write_text(LINT)
    (base / "lint-python" / "scripts" / "lint.sh").write_text("#!/bin/sh\nruff check \"$@\"\n")
    (base / "secret").mkdir(exist_ok=True)
    (base / "secret" / "SKILL.md").write_text(SECRET)
    yield base
    shutil.rmtree(shared_session.root / ".claude", ignore_errors=True)


async def test_the_model_sees_the_list_and_loads_a_skill(agent, skills):
    a = await agent()
    a.fake.push(calls(tool_call("skill", {"name": "lint-python", "args": "src"}, "s1")), reply("linted"))
    result = await a.turn("lint my changes")
    assert result["status"] == "completed", result
    first, second = a.fake.message_requests
    system = system_text(first)
    assert "- lint-python: Lint Python files the way this project does Use when: before committing" in system
    assert "secret" not in system and "skill" in tool_names(first)
    loaded = result_text(tool_results(second)["s1"])
    assert f"{skills}/lint-python/scripts/lint.sh src" in loaded  # ${CLAUDE_SKILL_DIR} and $ARGUMENTS
    assert "[run `ls` with bash" in loaded and "app.py" not in loaded  # !`cmd` is not run for the model
    assert a.s.questions == []  # loading instructions asks nothing


async def test_a_skill_hidden_from_the_model_cannot_be_loaded(agent, skills):
    a = await agent()
    a.fake.push(calls(tool_call("skill", {"name": "secret"}, "h1")), reply("ok"))
    await a.turn("use the secret skill")
    block = tool_results(a.fake.message_requests[-1])["h1"]
    assert block.get("is_error") and "no skill named 'secret'" in result_text(block)
    assert "lint-python" in result_text(block)


async def test_without_skills_there_is_no_list_and_no_tool(agent):
    a = await agent()
    a.fake.push(reply("hi"))
    await a.turn("hello")
    (request,) = a.fake.message_requests
    assert "# Skills" not in system_text(request) and "skill" not in tool_names(request)


async def test_a_loaded_skill_survives_compaction(agent, skills):
    a = await agent()
    a.fake.push(calls(tool_call("skill", {"name": "lint-python"}, "k1")), reply("loaded"))
    await a.turn("load the lint skill")
    a.fake.push(reply("Summary: the user wants linting."))
    result = await a.turn("/compact")
    assert result["status"] == "completed", result
    a.fake.push(reply("still linting"))
    await a.turn("go on")
    after = all_text(a.fake.message_requests[-1])
    assert "Skills loaded earlier in this session" in after and "scripts/lint.sh" in after


async def test_the_todo_list_survives_compaction(agent):
    a = await agent()
    todos = {"todos": [{"content": "write the parser", "status": "completed"}, {"content": "test it"}]}
    a.fake.push(calls(tool_call("todoWrite", todos, "td1")), reply("planned"))
    await a.turn("plan the parser work")
    a.fake.push(reply("Summary: parser planned."))
    await a.turn("/compact")
    a.fake.push(reply("next"))
    await a.turn("what is left?")
    after = all_text(a.fake.message_requests[-1])
    assert "# The todo list" in after and "[x] 1. write the parser" in after and "[ ] 2. test it" in after
