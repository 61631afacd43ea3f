"""Prompt commands from markdown files: listed, watched, and run as agent turns."""

from __future__ import annotations

import asyncio
import json

from harness import init_git, lsp_session, trust_workspace_config

REVIEW = "---\ndescription: Review the changes\nargument-hint: [focus]\n---\nReview the diff. Focus on $ARGUMENTS.\n"


def _scripted(root):
    (root / ".coder").mkdir(exist_ok=True)
    (root / ".coder" / "script.json").write_text(json.dumps({"turns": [{"text": "Looks fine."}] * 3}))
    (root / ".coder" / "config.json").write_text(
        json.dumps({"provider": "scripted", "scriptedFile": ".coder/script.json"})
    )
    trust_workspace_config(root)  # the provider is widening: the user's trust


async def test_workspace_and_user_commands_are_listed_and_run(tmp_path):
    """The user's own file may replace a built-in prompt command; a workspace's may not
    (tests/security/test_untrusted_commands.py), even a trusted one. Between the two, a
    trusted workspace's file wins (the contract's section 18 order; an untrusted clone's
    never hides the user's own)."""
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    _scripted(root)
    (root / ".coder" / "commands").mkdir()
    (root / ".coder" / "commands" / "review.md").write_text("the workspace's review is ignored\n")
    (root / ".coder" / "commands" / "standup.md").write_text("the trusted workspace's standup\n")
    (root / ".coder" / "commands" / "triage.md").write_text("Triage the open issues.\n")
    user_dir = tmp_path / ".xdg-ws" / "coder" / "commands"  # the harness's XDG_CONFIG_HOME
    user_dir.mkdir(parents=True)
    (user_dir / "standup.md").write_text("Summarise what changed since yesterday.\n")
    (user_dir / "review.md").write_text(REVIEW)

    async with lsp_session(root) as s:
        catalog = (await s.execute("coder.listCommands", {}))["data"]["commands"]
        by_name = {c["name"]: c for c in catalog}
        assert by_name["review"] == {
            "name": "review",
            "description": "Review the changes",
            "argumentHint": "[focus]",
            "kind": "prompt",
            "source": "user",
            "path": str(user_dir / "review.md"),
            "userInvocable": True,
            "shadows": ["the built-in /review", str(root / ".coder/commands/review.md")],
        }
        assert by_name["standup"]["source"] == "workspace" and by_name["standup"]["shadows"] == [
            str(user_dir / "standup.md")
        ]
        assert by_name["triage"]["source"] == "workspace"
        assert by_name["help"]["source"] == "builtin"

        result = await s.execute("coder.input", {"text": "/review error handling"})
        assert (result["mode"], result["status"]) == ("nl", "completed")
        assert result["reply"] == "Looks fine."
        prompts = [e["text"] for e in s.events_of("userMessage")]
        assert prompts[-1] == "Review the diff. Focus on error handling."


async def test_a_new_command_file_is_announced(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    (root / ".coder" / "commands").mkdir(parents=True)
    async with lsp_session(root) as s:
        await s.execute("coder.help", {})
        await asyncio.sleep(0.5)  # the watcher starts right after initialized
        (root / ".coder" / "commands" / "ship.md").write_text("Prepare a release.\n")
        await s.wait_event("commandsChanged", timeout=10)
        names = [c["name"] for c in (await s.execute("coder.listCommands", {}))["data"]["commands"]]
        assert "ship" in names
