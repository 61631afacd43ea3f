"""Issue 36 item 1 over a real LSP client: a folder swapped for a link out of the workspace
while an edit waits for the editor. The agent's sandboxed shell leaves a background job
that replaces `sub/d` with a link to a folder outside; the agent then writes
`sub/d/pwn.txt`; the editor answers `workspace/applyEdit` only once the swap has happened.
Whether the editor left the disk to the server or wrote the file itself through the path
(when the edit arrived, as a real editor does), nothing lands outside, and the model is
told the edit failed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "e2e_agent"))

from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import FakeAnthropicServer, reply
from harness import init_git, lsp_session
from lsprotocol import types
from races import real_folder, swap_job, until_swapped

from coder_ls.guard import sandbox

pytestmark = [
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
    pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap does not work on this machine"),
]


def race_script(fake: FakeAnthropicServer, outside: Path) -> None:
    fake.push(
        calls(tool_call("bash", {"command": swap_job(outside)}, "toolu_bg")),
        calls(tool_call("write", {"path": "sub/d/pwn.txt", "content": "pwned\n"}, "toolu_w")),
        reply("done"),
    )


@pytest.mark.parametrize("editor_writes", [False, True], ids=["server-writes", "editor-writes"])
async def test_a_folder_swapped_while_the_editor_holds_the_edit_keeps_the_write_inside(
    tmp_path: Path, fake: FakeAnthropicServer, outside: Path, editor_writes: bool
) -> None:
    root = init_git(tmp_path / "ws", {"app.py": APP, "sub/d/keep.txt": "keep\n"})
    link = root / "sub" / "d"
    seen: list[bool] = []  # sub/d was still a real folder when the edit reached the editor

    async def editor(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        seen.append(real_folder(link))
        if editor_writes:  # as an editor does with a new file: created through the path, at once
            (link / "pwn.txt").write_text("pwned\n")
        await until_swapped(link)
        return types.ApplyWorkspaceEditResult(applied=True)

    race_script(fake, outside)
    async with lsp_session(root, env=api_env(fake)) as s:
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"coder": {"permissions": "yolo"}})
        )
        s.answer_edit = editor
        result = await s.execute("coder.input", {"text": "go"})
        assert result["status"] == "completed", result
    assert seen == [True], "the edit must reach the editor before the swap, or the race was not run"
    assert link.is_symlink()
    assert not (outside / "pwn.txt").exists(), "the edit landed outside the workspace"
    write = tool_results(fake.message_requests[-1])["toolu_w"]
    assert write.get("is_error"), write
    assert "outside the workspace" in result_text(write), result_text(write)
