"""Project instructions (contract section 9): the instruction files in the system prompt
the Messages API receives, byte-identical while unchanged, re-read when changed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic_server import reply

pytestmark = pytest.mark.asyncio(loop_scope="package")


def system_text(request) -> str:
    return "".join(b["text"] for b in request.body["system"])


def system_bytes(request) -> bytes:
    return json.dumps(request.body["system"], sort_keys=True).encode()


@pytest.fixture
def files(shared_session) -> Iterator[dict[str, Path]]:
    root = shared_session.root
    user = root.parent / f".xdg-{root.name}" / "coder" / "AGENTS.md"  # the harness's XDG_CONFIG_HOME
    paths = {
        "user": user,
        "agents": root / "AGENTS.md",
        "claude": root / "CLAUDE.md",
        "coder": root / "CODER.md",
    }
    yield paths
    for p in paths.values():
        p.unlink(missing_ok=True)


async def test_instruction_files_are_in_the_system_prompt_in_order(agent, files):
    files["user"].parent.mkdir(parents=True, exist_ok=True)
    files["user"].write_text("Answer in British English. USER-MARK\n")
    files["agents"].write_text("Run make test before finishing. AGENTS-MARK\n")
    files["claude"].write_bytes(b"Use tabs.\r\nCLAUDE-MARK\r\n")
    files["coder"].write_text("CODER-MARK\n")
    a = await agent()
    a.fake.push(reply("one"), reply("two"))
    await a.turn("first")
    await a.turn("second")
    first, second = a.fake.message_requests
    text = system_text(first)
    marks = [text.index(m) for m in ("USER-MARK", "AGENTS-MARK", "CLAUDE-MARK", "CODER-MARK")]
    assert marks == sorted(marks)
    assert f"## {files['user']}\n" in text
    for name in ("AGENTS.md", "CLAUDE.md", "CODER.md"):
        assert f"## {name}\n" in text
    assert "Use tabs.\nCLAUDE-MARK" in text  # CRLF normalised
    assert system_bytes(first) == system_bytes(second)  # unchanged: the cache prefix holds


async def test_a_changed_file_is_read_again_and_a_removed_one_leaves(agent, files):
    files["agents"].write_text("OLD-RULE\n")
    a = await agent()
    a.fake.push(reply("one"), reply("two"), reply("three"))
    await a.turn("first")
    files["agents"].write_text("NEW-RULE, a little longer\n")
    await a.turn("second")
    files["agents"].unlink()
    await a.turn("third")
    first, second, third = (system_text(r) for r in a.fake.message_requests)
    assert "OLD-RULE" in first and "NEW-RULE" not in first
    assert "NEW-RULE" in second and "OLD-RULE" not in second
    assert "RULE" not in third and "AGENTS.md" not in third


async def test_instructions_are_cut_at_max_bytes_with_a_note(agent, files):
    files["agents"].write_text("A" * 3000 + "TAIL-MARK\n")
    a = await agent(instructions={"maxBytes": 1000})
    a.fake.push(reply("ok"))
    await a.turn("hi")
    text = system_text(a.fake.message_requests[0])
    assert "TAIL-MARK" not in text
    assert "A" * 900 in text and "A" * 1001 not in text
    assert "instructions.maxBytes (1000)" in text


async def test_a_fifo_named_agents_md_does_not_hang_the_turn(agent, files):
    import os

    os.mkfifo(files["agents"])
    a = await agent()
    a.fake.push(reply("ok"))
    result = await a.turn("hi")
    assert result["reply"] == "ok"
    assert "not a regular file" in system_text(a.fake.message_requests[0])
