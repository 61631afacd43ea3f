"""Issue 36 item 1 over ACP: a folder swapped for a link out of the workspace while
`fs/write_text_file` waits for the editor. The agent's sandboxed shell leaves a background
job that replaces `sub/d` with a link to a folder outside; the agent then writes
`sub/d/pwn.txt`; the editor answers only once the swap has happened, having either kept the
text in its buffer (the server then writes the disk) or saved it through the path when it
arrived. Nothing lands outside, and the model is told the edit failed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import helpers
from acp.schema import WriteTextFileResponse
from acp_support import RecordingClient, acp_agent
from agent_e2e import api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git
from races import real_folder, swap_job, until_swapped

from coder_ls.guard import sandbox

pytestmark = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine")


class SlowEditor(RecordingClient):
    """Answers `fs/write_text_file` once `link` became a symlink; saves at once, or never."""

    link: Path = Path("/nonexistent")
    seen: list[bool]

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.seen.append(real_folder(self.link))
        self.writes.append((path, content))
        self.buffers[path] = content
        if self.save_on_write:  # saved through the path when it arrives, as an editor does
            await asyncio.to_thread(Path(path).write_text, content)
        await until_swapped(self.link)
        return WriteTextFileResponse()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Outside the workspace and outside /tmp (bubblewrap gives the sandbox its own /tmp)."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="coder-acp-race-", dir="/var/tmp"))
    yield path  # type: ignore[misc]
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("saves", [False, True], ids=["server-writes", "editor-saves"])
async def test_a_folder_swapped_while_the_editor_holds_the_write_keeps_it_inside(
    tmp_path: Path, fake: FakeAnthropicServer, outside: Path, saves: bool
) -> None:
    root = init_git(tmp_path / "ws", {"app.py": "x = 1\n", "sub/d/keep.txt": "keep\n"})
    settings = root.parent / f".xdg-{root.name}" / "coder" / "config.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": "yolo"}))
    client = SlowEditor(save_on_write=saves)
    client.link, client.seen = root / "sub" / "d", []
    fake.push(
        calls(tool_call("bash", {"command": swap_job(outside)}, "bg")),
        calls(tool_call("write", {"path": "sub/d/pwn.txt", "content": "pwned\n"}, "w")),
        reply("done"),
    )
    async with acp_agent(root, api_env(fake), fs=True, client=client) as a:
        sid = (await a.conn.new_session(cwd=str(root), mcp_servers=[])).session_id
        answer = await a.conn.prompt(session_id=sid, prompt=[helpers.text_block("go")])
        assert answer.stop_reason == "end_turn"
    assert client.seen == [True], "the write must reach the editor before the swap, or the race was not run"
    assert (root / "sub" / "d").is_symlink()
    assert not (outside / "pwn.txt").exists(), "the edit landed outside the workspace"
    write = tool_results(fake.message_requests[-1])["w"]
    assert write.get("is_error"), write
    assert "outside the workspace" in result_text(write), result_text(write)
