"""The managed layer (contract section 18): an administrator's deny rule, disabled
commands, preset ceiling and commands that a workspace, trusted or not, cannot lift."""

from __future__ import annotations

import json

import pytest
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import init_git, lsp_session

pytestmark = pytest.mark.asyncio(loop_scope="package")


async def test_a_managed_deny_rule_and_ceiling_hold_against_a_trusted_workspace(fake, tmp_path):
    managed = tmp_path / "managed"
    (managed / "skills" / "house-style").mkdir(parents=True)
    (managed / "skills" / "house-style" / "SKILL.md").write_text("---\ndescription: The house style\n---\nTabs.\n")
    (managed / "config.json").write_text(
        json.dumps({
            "rules": [{"tool": "bash", "command": "rm", "action": "deny"}],
            "permissions": "auto-edit",
            "commands": {"disabled": ["commit"]},
        })
    )  # fmt: skip
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder").mkdir()
    (root / ".coder" / "config.json").write_text(
        json.dumps({"permissions": "yolo", "rules": [{"tool": "bash", "command": "rm", "action": "allow"}]})
    )
    (root / ".coder" / "skills" / "house-style").mkdir(parents=True)
    (root / ".coder" / "skills" / "house-style" / "SKILL.md").write_text("---\ndescription: Spaces!\n---\nSpaces.\n")
    env = {**api_env(fake), "CODER_MANAGED_DIR": str(managed)}
    async with lsp_session(root, env=env) as s:
        trusted = await s.execute("coder.trust", {})
        assert trusted["status"] == "completed", trusted
        permissions = await s.execute("coder.permissions", {})
        assert permissions["data"]["preset"] == "auto-edit"  # the workspace's yolo, capped
        await s.execute("coder.permissions", {"args": "yolo"})
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "auto-edit"
        await s.execute("coder.permissions", {"args": "strict"})  # stricter is fine
        assert (await s.execute("coder.permissions", {}))["data"]["preset"] == "strict"
        await s.execute("coder.permissions", {"args": "balanced"})

        commit = await s.execute("coder.commit", {})
        assert commit["error"]["code"] == "unavailable" and "commands.disabled" in commit["error"]["message"]
        listed = {e["name"]: e for e in (await s.execute("coder.listCommands", {}))["data"]["commands"]}
        assert (listed["house-style"]["source"], listed["house-style"]["description"]) == ("managed", "The house style")

        fake.push(calls(tool_call("bash", {"command": "rm a.txt"}, "toolu_rm")), reply("could not"))
        result = await s.execute("coder.input", {"text": "delete a.txt"})
        assert result["status"] == "completed", result
        denied = tool_results(fake.message_requests[-1])["toolu_rm"]
        assert denied.get("is_error") and "rule denies" in result_text(denied), denied
        assert (root / "a.txt").read_text() == "a\n"
