"""The server's own write to a protected path, once the user approved it, under a living
sandbox: the agent's shell holds an absent `.envrc` with an empty placeholder folder and an
existing `.mcp.json` with a read-only mount. The write tool must land a real file (not fail
on the placeholder folder), and the shell that runs next must hold the new file again: the
sandboxed bash cannot append to what the user just approved."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import Session, full_caps, init_git, lsp_session
from lsprotocol import types

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]


@contextlib.asynccontextmanager
async def server(root: Path, fake: FakeAnthropicServer) -> AsyncIterator[Session]:
    async with lsp_session(root, env=api_env(fake), caps=full_caps(apply_edit=False)) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
        )
        yield s


async def test_an_approved_write_to_a_held_name_lands_and_is_held_again(tmp_path: Path, fake: Any) -> None:
    root = init_git(tmp_path / "ws", {"app.py": APP, ".mcp.json": '{"mcpServers": {}}\n'})
    first = "test -d .envrc && echo placeholder-folder; echo x >> .mcp.json; echo rc=$?"
    steps = [
        tool_call("bash", {"command": first}, "b1"),
        tool_call("write", {"path": ".envrc", "content": "export GOOD=1\n"}, "w1"),
        tool_call("write", {"path": ".mcp.json", "content": '{"mcpServers": {"ok": {}}}\n'}, "w2"),
        tool_call("bash", {"command": "cat .envrc; echo evil >> .envrc; echo evil >> .mcp.json; echo rc=$?"}, "b2"),
    ]
    fake.push(*[calls(step) for step in steps], reply("done"))
    async with server(root, fake) as s:
        s.answer_question = lambda p: "Allow once"  # the protected writes are asked, in every preset
        result = await s.execute("coder.input", {"text": "go"})
        assert result["status"] == "completed", result
        asked = [q.message for q in s.questions]
    outs = {k: result_text(v) for k, v in tool_results(fake.message_requests[-1]).items()}
    assert "placeholder-folder" in outs["b1"] and "rc=0" not in outs["b1"], outs["b1"]
    assert len(asked) == 2 and all("protected" in q for q in asked), asked
    assert (root / ".envrc").is_file() and (root / ".envrc").read_text() == "export GOOD=1\n", outs["w1"]
    assert (root / ".mcp.json").read_text() == '{"mcpServers": {"ok": {}}}\n', outs["w2"]
    assert "export GOOD=1" in outs["b2"] and "rc=0" not in outs["b2"], outs["b2"]
