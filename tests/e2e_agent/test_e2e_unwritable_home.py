"""An unwritable HOME (issue 20): the server's caches fall back to a private runtime or
temp directory with one warning, and a turn that runs no shell never depends on them.

HOME (and the XDG directories under it) is a regular file here, so creating anything
under it fails with NotADirectoryError, as on a machine whose home is a file, missing or
read-only."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_e2e import api_env, calls, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


def broken_home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home-is-a-file"
    home.write_text("not a directory\n")
    return {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_RUNTIME_DIR": "",
    }


async def test_turns_work_with_an_unwritable_home(tmp_path: Path, ws: Path, fake: FakeAnthropicServer) -> None:
    env = {**api_env(fake), **broken_home(tmp_path)}
    async with lsp_session(ws, env=env, init_options={"permissions": "yolo"}) as s:
        fake.push(reply("Hello."))
        result = await s.execute("coder.input", {"text": "say hi"})
        assert result["status"] == "completed", result  # no shell: nothing under HOME needed
        fake.push(calls(tool_call("bash", {"command": "echo sandboxed-ok"}, "toolu_b1")), reply("Done."))
        result = await s.execute("coder.input", {"text": "run echo"})
        assert result["status"] == "completed", result
        (output,) = tool_results(fake.message_requests[-1]).values()
        assert "sandboxed-ok" in str(output), output
        fake.push(calls(tool_call("bash", {"command": "echo again"}, "toolu_b2")), reply("Done."))
        assert (await s.execute("coder.input", {"text": "again"}))["status"] == "completed"
        warnings = [m.message for m in s.client.messages if "cache" in m.message.lower() and "HOME" in m.message]
        assert len(warnings) == 1, [m.message for m in s.client.messages]
