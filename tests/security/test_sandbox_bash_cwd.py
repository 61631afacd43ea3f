"""Issue 8: the agent's bash tool checks a command against the shell's cwd, not the
workspace root: after `cd sub`, `rm -rf ..` is the workspace itself (it said "/tmp")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.filterwarnings("ignore:Unknown progress token")


async def test_refusal_is_judged_from_the_shells_cwd(tmp_path):
    root = init_git(tmp_path / "ws", {"app.py": APP})  # the sandboxed `mkdir -p sub` makes it at the top
    with FakeAnthropicServer() as fake:
        async with lsp_session(root, env=api_env(fake)) as s:
            s.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
            )
            fake.push(
                calls(tool_call("bash", {"command": "mkdir -p sub && cd sub"}, "toolu_c1")),
                calls(tool_call("bash", {"command": "rm -rf .."}, "toolu_c2")),
                reply("done"),
            )
            result = await s.execute("coder.input", {"text": "go"})
            assert result["status"] == "completed", result
            refused = result_text(tool_results(fake.message_requests[-1])["toolu_c2"])
    assert "refused" in refused.lower()
    assert f"{root} (the workspace itself)" in refused, refused
    assert (root / "app.py").exists()
