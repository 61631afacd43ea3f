"""Workspace hooks are code from the repository (issue 18, docs/security.md row `hooks`):
a cloned repository's `.claude/settings.json`, `.claude/settings.local.json` and
`hooks` in `.coder/config.json` run nothing before `/trust`, whatever event they name;
after `/trust` they run; a `.claude` that is a symlink leading out of the workspace never
runs, trusted or not."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_e2e import APP, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git
from hooks_e2e import fresh, group, hook_runs, hooks_server, shown, write_settings

pytestmark = pytest.mark.asyncio(loop_scope="package")
SKILL = """\
---
description: Ship it
hooks:
  PreToolUse:
    - hooks:
        - type: command
          command: "cat >/dev/null; echo skill >> {marker}"
---
Ship the release.
"""
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop")


@pytest.fixture
def hook_fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server
        assert server.take_rejections() == []


def touching(marker: Path, event: str) -> list:
    return group(f"cat >/dev/null; echo {event} >> {marker}")


def cloned(tmp_path: Path, marker: Path) -> Path:
    """A repository as it arrives with a clone: hooks in every workspace file."""
    root = init_git(tmp_path / "clone", {"app.py": APP})
    write_settings(root / ".claude" / "settings.json", {e: touching(marker, e) for e in EVENTS})
    write_settings(root / ".claude" / "settings.local.json", {"PreToolUse": touching(marker, "local")})
    write_settings(root / ".coder" / "config.json", {"PreToolUse": touching(marker, "coder-config")})
    skill = root / ".claude" / "skills" / "ship" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL.format(marker=marker))
    return root


async def run_one_call(s, fake: FakeAnthropicServer, call_id: str) -> dict:
    fake.push(calls(tool_call("bash", {"command": f"echo ran-{call_id}"}, call_id)), reply("done"))
    result = await s.execute("coder.input", {"text": "run it"})
    assert result["status"] == "completed", result
    return tool_results(fake.message_requests[-1])[call_id]


async def test_a_clones_hooks_run_nothing_before_trust_and_run_after(tmp_path, hook_fake):
    marker = tmp_path / "hooks-ran"
    root = cloned(tmp_path, marker)
    async with hooks_server(root, hook_fake) as s:
        said = "ship/SKILL.md: its hooks run only after you trust this workspace with /trust"
        await s.wait_for(lambda: said in shown(s))  # said when the skill loads
        await fresh(s, hook_fake, permissions="strict")  # strict: PermissionRequest would fire too
        s.answer_question = lambda p: "Allow once"
        block = await run_one_call(s, hook_fake, "u1")
        assert "ran-u1" in result_text(block)
        hook_fake.push(calls(tool_call("bash", {"command": "echo ran-k1"}, "k1")), reply("shipped"))
        await s.execute("coder.input", {"text": "/ship"})  # the workspace skill's own hooks
        assert "ran-k1" in result_text(tool_results(hook_fake.message_requests[-1])["k1"])
        assert not marker.exists() and hook_runs(s) == []
        assert "8 hook(s) in .claude/ or .coder/config.json: they run only after you trust it with /trust" in shown(s)
        result = await s.execute("coder.input", {"text": "/trust"})
        assert result["status"] == "completed", result
        await fresh(s, hook_fake, permissions="strict")
        s.answer_question = lambda p: "Allow once"
        await run_one_call(s, hook_fake, "t1")
        ran = marker.read_text().split()
        assert set(ran) == {*EVENTS, "local", "coder-config"}, ran
        hook_fake.push(calls(tool_call("bash", {"command": "echo ran-k2"}, "k2")), reply("shipped"))
        await s.execute("coder.input", {"text": "/ship"})
        assert "skill" in marker.read_text().split()


async def test_a_symlinked_claude_folder_leading_outside_never_runs(tmp_path, hook_fake):
    marker = tmp_path / "outside-ran"
    outside = tmp_path / "elsewhere" / ".claude"
    write_settings(outside / "settings.json", {"PreToolUse": touching(marker, "outside")})
    root = init_git(tmp_path / "clone", {"app.py": APP})
    (root / ".claude").symlink_to(outside, target_is_directory=True)
    async with hooks_server(root, hook_fake) as s:
        result = await s.execute("coder.input", {"text": "/trust"})
        assert result["status"] == "completed", result
        await fresh(s, hook_fake)
        block = await run_one_call(s, hook_fake, "s1")
        assert "ran-s1" in result_text(block)
        assert not marker.exists()
        assert "leads outside the workspace (a symlink): ignored" in shown(s)


async def test_session_end_runs_at_shutdown_and_cannot_hold_it(tmp_path, hook_fake):
    root = init_git(tmp_path / "ws", {"app.py": APP})
    home = tmp_path / f"home-{root.name}"
    log = tmp_path / "end.jsonl"
    slow = tmp_path / "slow-end"
    hooks = {"SessionEnd": [*group(f"cat >> {log}"), *group(f"cat >/dev/null; sleep 30; touch {slow}")]}
    write_settings(home / ".claude" / "settings.json", hooks)  # the user's own: no /trust needed
    loop = asyncio.get_running_loop()
    async with hooks_server(root, hook_fake) as s:
        await fresh(s, hook_fake)
        hook_fake.push(reply("hi"))
        await s.execute("coder.input", {"text": "hello"})
        start = loop.time()
    assert loop.time() - start < 20  # the slow hook (30 s) was cut short at 5 s; 20: a loaded machine
    assert json.loads(log.read_text())["reason"] == "other"
    await asyncio.sleep(0.2)
    assert not slow.exists()
