"""A plugin's own hooks (`hooks/hooks.json`) run while it is enabled, from its folder
(`${CLAUDE_PLUGIN_ROOT}`), and stop when `/plugin disable` turns it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic_server import FakeAnthropicServer, reply
from hooks_e2e import group, hooks_server

pytestmark = pytest.mark.asyncio(loop_scope="function")


def guard_plugin(config_home: Path) -> Path:
    root = config_home / "coder" / "plugins" / "guard"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "guard", "version": "1.0.0"}))
    (root / "bin").mkdir()
    script = root / "bin" / "no-secrets.sh"
    script.write_text(
        "#!/bin/sh\nif grep -q hunter2; then echo \"refused by $(basename \"$CLAUDE_PLUGIN_ROOT\")\" >&2; exit 2; fi\n"
    )
    script.chmod(0o755)
    hooks = {"hooks": {"UserPromptSubmit": group("${CLAUDE_PLUGIN_ROOT}/bin/no-secrets.sh")}}
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    return root


async def test_a_plugins_hooks_run_while_it_is_enabled(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    guard_plugin(root.parent / f".xdg-{root.name}")  # the harness's XDG_CONFIG_HOME
    with FakeAnthropicServer() as fake:
        async with hooks_server(root, fake) as s:
            blocked = await s.execute("coder.input", {"text": "my password is hunter2"})
            assert blocked["status"] == "failed" and blocked["error"]["code"] == "hook_blocked", blocked
            assert "refused by guard" in blocked["error"]["message"]
            assert fake.message_requests == []
            off = await s.execute("coder.input", {"text": "/plugin disable guard"})
            assert off["status"] == "completed", off
            fake.push(reply("noted"))
            passed = await s.execute("coder.input", {"text": "my password is hunter2"})
            assert passed["status"] == "completed", passed
            assert len(fake.message_requests) == 1
