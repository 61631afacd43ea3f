"""Auto-verify: after a turn changes code, the configured check runs and the model sees
its output; docs-only changes and `workflow.autoVerifyAfterEdit: false` skip it."""

from __future__ import annotations

import pytest
from agent_e2e import all_text, calls, last_user_text, tool_call
from anthropic_server import reply

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),  # a request's own token: never created
]

VERIFY = {"verifyCommands": ["echo VERIFIED"]}


@pytest.mark.parametrize(
    "settings",
    [
        {"permissions": "yolo", "workflow": VERIFY},
        {
            "permissions": "auto-edit",
            "workflow": VERIFY,
            "rules": [{"tool": "bash", "action": "allow", "command": "echo"}],
        },
    ],
    ids=["yolo", "auto-edit-with-bash-rule"],
)
async def test_edit_is_followed_by_the_verify_command(agent, settings):
    a = await agent(**settings)
    name = f"calc_{settings['permissions'].replace('-', '_')}.py"
    a.fake.push(
        calls(tool_call("write", {"path": name, "content": "def inc(x):\n    return x + 1\n"}, "toolu_v1")),
        reply("wrote it"),
        reply("verified, all good"),
    )
    token = f"verify-{settings['permissions']}"
    result = await a.s.execute("coder.input", {"text": "write calc.py"}, token=token)
    assert result["status"] == "completed", result
    assert result["reply"] == "verified, all good"
    assert len(a.fake.message_requests) == 3
    assert "VERIFIED" not in all_text(a.fake.message_requests[1])
    verify_text = last_user_text(a.fake.message_requests[2])
    assert "echo VERIFIED" in verify_text
    assert "VERIFIED\n" in verify_text and "passed" in verify_text
    assert a.s.questions == []
    begins = [e for e in a.s.events_of("toolCallBegin") if e["tool"] == "bash"]
    assert begins and begins[-1]["input"]["command"] == "echo VERIFIED"
    messages = [r.message for r in a.s.progress_of(token) if getattr(r, "message", None)]
    assert "Running: echo VERIFIED" in messages


async def test_docs_only_change_is_not_verified(agent):
    a = await agent(permissions="yolo", workflow=VERIFY)
    a.fake.push(
        calls(tool_call("write", {"path": "NOTES.md", "content": "# notes\n"}, "toolu_v2")),
        calls(tool_call("edit", {"path": "README.md", "oldString": "# demo", "newString": "# Demo"}, "toolu_v3")),
        reply("docs updated"),
    )
    result = await a.turn("update the docs")
    assert result["status"] == "completed", result
    assert result["reply"] == "docs updated"
    assert len(a.fake.message_requests) == 3
    assert all("VERIFIED" not in all_text(r) for r in a.fake.message_requests)
    assert a.s.events_of("shellOutput") == []


async def test_auto_verify_can_be_turned_off(agent):
    a = await agent(permissions="yolo", workflow={**VERIFY, "autoVerifyAfterEdit": False})
    a.fake.push(
        calls(tool_call("write", {"path": "calc2.py", "content": "Y = 2\n"}, "toolu_v4")),
        reply("done, not verified"),
    )
    result = await a.turn("write calc2.py")
    assert result["reply"] == "done, not verified"
    assert len(a.fake.message_requests) == 2
    assert all("VERIFIED" not in all_text(r) for r in a.fake.message_requests)


async def test_users_verify_command_runs_without_asking_under_auto_edit(agent):
    """Issue 8: `auto-edit` asks before shell commands, but `workflow.verifyCommands` is the
    user's own command: it runs (in the sandbox) without a question instead of being skipped."""
    a = await agent(permissions="auto-edit", workflow=VERIFY)
    a.fake.push(
        calls(tool_call("write", {"path": "calc3.py", "content": "Z = 3\n"}, "toolu_v5")),
        reply("done"),
        reply("verified"),
    )
    result = await a.turn("write calc3.py")
    assert result["reply"] == "verified", result
    assert len(a.fake.message_requests) == 3
    verify_text = last_user_text(a.fake.message_requests[2])
    assert "VERIFIED\n" in verify_text and "passed" in verify_text
    assert a.s.questions == []  # never asks the user just to verify
