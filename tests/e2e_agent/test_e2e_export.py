"""`/export` over LSP (contract section 19): the session as Markdown or the raw log, secrets
redacted, and where it may be written, tried as an attacker would."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from agent_e2e import api_env
from anthropic_server import FakeAnthropicServer, reply
from harness import full_caps, init_git, lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def _worked(a) -> dict:
    """A turn that reads and edits app.py and says a secret value it saw."""
    (a.root / "notes.txt").write_text("alpha\nbeta\n")
    a.fake.push(
        {"toolCalls": [{"id": "toolu_r1", "name": "read", "input": {"path": "notes.txt"}}]},
        {"toolCalls": [{"id": "toolu_e1", "name": "edit",
                        "input": {"path": "notes.txt", "oldString": "beta", "newString": "GAMMA"}}]},
        reply("Changed beta to GAMMA. The key was test-key."),
    )  # fmt: skip
    result = await a.turn("change beta in notes.txt; the key is test-key")
    assert result["status"] == "completed", result
    return result


async def test_export_writes_markdown_under_coder_exports_and_opens_it(agent):
    a = await agent(permissions="yolo")
    sid = (await _worked(a))["sessionId"]
    result = await a.s.execute("coder.input", {"text": "/export"})
    assert (result["mode"], result["status"]) == ("command", "completed"), result
    data = result["data"]
    path = Path(data["path"])
    assert path == (a.root / ".coder" / "exports" / f"{sid}.md").resolve() and data["format"] == "md"
    text = path.read_text()  # noqa: ASYNC240
    assert "change beta in notes.txt" in text  # the user's message
    assert "**Tool call `read`**" in text and '"path": "notes.txt"' in text  # calls with inputs
    assert "alpha" in text  # the read's result
    assert "```diff" in text and "-beta" in text and "+GAMMA" in text  # the edit as a diff
    assert "Changed beta to GAMMA" in text
    changes = text.split("## Files changed by each submission", 1)[1]  # from the undo records
    assert "### Submission 1: change beta in notes.txt" in changes and "+GAMMA" in changes
    assert "test-key" not in text and "[redacted: ANTHROPIC_API_KEY]" in text  # as in the logs
    assert data["opened"] is True and [d.uri for d in a.s.client.shown_documents] == [path.as_uri()]
    again = await a.s.execute("coder.export", {})  # the default file is ours: replaced each time
    assert again["status"] == "completed" and again["data"]["path"] == data["path"]


async def test_export_jsonl_is_the_raw_log_redacted(agent):
    a = await agent(permissions="yolo")
    await _worked(a)
    result = await a.s.execute("coder.input", {"text": "/export session.jsonl"})
    assert result["status"] == "completed", result
    assert result["data"]["format"] == "jsonl" and result["data"]["opened"] is False  # a path given: not opened
    raw = Path(result["data"]["path"]).read_text()  # noqa: ASYNC240
    lines = [json.loads(line) for line in raw.splitlines()]
    assert lines[0]["type"] == "header" and {e["type"] for e in lines[1:]} >= {"message", "title"}
    assert "test-key" not in json.dumps(lines)
    kinds = [b["type"] for e in lines if e["type"] == "message" for b in e["message"]["content"]]
    assert "tool_use" in kinds and "tool_result" in kinds


async def test_export_refuses_paths_out_of_bounds_and_writes_nothing(agent, tmp_path):
    a = await agent()
    a.fake.push(reply("hi"))
    await a.turn("hello")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (a.root / "linkdir").symlink_to(outside, target_is_directory=True)
    (a.root / "victim.md").symlink_to(outside / "victim.md")
    (a.root / "existing.md").write_text("mine\n")
    cases = {
        "../escaped.md": "export_refused",  # outside the workspace and (here) the home
        f"{outside}/abs.md": "export_refused",
        "linkdir/through.md": "export_refused",  # a folder that is a symlink out
        "victim.md": "export_refused",  # a symlink at the name itself
        ".git/hooks/pre-commit": "export_refused",
        ".vscode/settings.json": "export_refused",
        ".coder/config.json": "export_refused",
        ".envrc": "export_refused",
        "sub/.git/config": "export_refused",
        "existing.md": "export_exists",
        ".": "export_refused",
    }
    for path, code in cases.items():
        result = await a.s.execute("coder.input", {"text": f"/export {path}"})
        assert result["status"] == "failed" and result["error"]["code"] == code, (path, result)
        assert result["reply"], path
    assert list(outside.iterdir()) == []
    assert not (a.root.parent / "escaped.md").exists() and not (a.root / ".git" / "hooks" / "pre-commit").exists()
    vscode = a.root / ".vscode"  # absent, or the agent shell's empty placeholder folder: nothing written
    assert not vscode.exists() or not any(vscode.iterdir())
    assert (a.root / "existing.md").read_text() == "mine\n"
    forced = await a.s.execute("coder.input", {"text": "/export existing.md --force"})
    assert forced["status"] == "completed" and "hello" in (a.root / "existing.md").read_text()
    inside = await a.s.execute("coder.input", {"text": "/export .coder/exports/named.md"})
    assert inside["status"] == "completed", inside
    bad = await a.s.execute("coder.input", {"text": "/export a.md b.md"})
    assert bad["error"]["code"] == "invalid_argument"
    bad = await a.s.execute("coder.input", {"text": "/export --format pdf"})
    assert bad["error"]["code"] == "invalid_argument"


async def test_export_under_the_home_only_when_typed_and_never_into_dotfiles(tmp_path):
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / ".bashrc").write_text("# mine\n")
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    with FakeAnthropicServer() as fake:
        fake.push(reply("hi"))
        env = {**api_env(fake), "HOME": str(home)}
        async with lsp_session(root, caps=full_caps(), env=env) as s:
            await s.execute("coder.input", {"text": "hello"})
            ok = await s.execute("coder.input", {"text": "/export ~/docs/session.md"})
            assert ok["status"] == "completed", ok
            assert Path(ok["data"]["path"]) == (home / "docs" / "session.md").resolve()
            for path in ("~/.bashrc", "~/.ssh/authorized_keys", "~/.config/coder/config.json", str(home)):
                refused = await s.execute("coder.input", {"text": f"/export {path} --force"})
                assert refused["error"]["code"] == "export_refused", (path, refused)
    assert (home / ".bashrc").read_text() == "# mine\n" and not (home / ".ssh").exists()
    assert os.listdir(home / "docs") == ["session.md"]


async def test_a_shipped_exports_symlink_is_not_followed(agent):
    """A cloned repository can carry `.coder/exports` as a symlink (git stores links)."""
    a = await agent()
    a.fake.push(reply("hi"))
    await a.turn("hello")
    exports = a.root / ".coder" / "exports"
    if exports.exists() and not exports.is_symlink():
        for f in exports.iterdir():
            f.unlink()
        exports.rmdir()
    hooks = a.root / ".git" / "hooks"
    exports.symlink_to(hooks, target_is_directory=True)
    try:
        before = sorted(p.name for p in hooks.iterdir())
        result = await a.s.execute("coder.input", {"text": "/export"})
        assert result["status"] == "failed" and result["error"]["code"] == "export_refused", result
        assert sorted(p.name for p in hooks.iterdir()) == before
    finally:
        exports.unlink()
