"""write/edit through workspace/applyEdit: the shapes the client gets, the unsaved
buffer, clients without documentChanges / resource operations / applyEdit, rejected
edits and paths that leave the workspace."""

from __future__ import annotations

import os

import pytest
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import lsp_session
from lsprotocol import types

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]

DISK = "a = 1\nb = 2\nc = 3\n"
BUFFER = "a = 1\nb = 20\nc = 3\nd = 4\n"  # unsaved: differs from the disk


def caps(*, document_changes: bool = True, resource_ops: bool = True, apply_edit: bool = True):
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=apply_edit,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=document_changes,
                resource_operations=[types.ResourceOperationKind.Create] if resource_ops else None,
            ),
        ),
    )


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with the edits (non-overlapping, any order)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: types.Position) -> int:
        return starts[min(p.line, len(lines))] + p.character if p.line < len(starts) else len(text)

    out = text
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        out = out[: offset(e.range.start)] + e.new_text + out[offset(e.range.end) :]
    return out


async def test_write_new_file_sends_create_file_and_text_document_edit(agent):
    a = await agent(permissions="auto-edit")
    a.fake.push(
        calls(tool_call("write", {"path": "pkg/new_mod.py", "content": "X = 1\nY = 2\n"}, "toolu_w1")),
        reply("created"),
    )
    result = await a.turn("create pkg/new_mod.py")
    assert result["status"] == "completed", result
    assert a.s.questions == []  # auto-edit: writes are allowed
    (params,) = a.s.edits
    changes = params.edit.document_changes
    uri = (a.root / "pkg" / "new_mod.py").as_uri()
    assert isinstance(changes[0], types.CreateFile) and changes[0].uri == uri
    assert isinstance(changes[1], types.TextDocumentEdit)
    assert changes[1].text_document.uri == uri
    assert apply_text_edits("", list(changes[1].edits)) == "X = 1\nY = 2\n"
    assert params.edit.changes is None
    # not open in the editor: the server also wrote it, so the shell and tests see it
    assert (a.root / "pkg" / "new_mod.py").read_text() == "X = 1\nY = 2\n"
    results = tool_results(a.fake.message_requests[1])
    assert not results["toolu_w1"].get("is_error")
    assert "Created pkg/new_mod.py" in result_text(results["toolu_w1"])
    assert [e["applied"] for e in a.s.events_of("editApplied")] == [True]


async def test_edit_of_an_open_document_uses_its_unsaved_buffer_and_version(agent):
    a = await agent(permissions="auto-edit")
    path = a.root / "buf.py"
    path.write_text(DISK)
    uri = a.s.open("buf.py", BUFFER, version=7)
    a.fake.push(
        calls(tool_call("read", {"path": "buf.py"}, "toolu_r1")),
        calls(tool_call("edit", {"path": "buf.py", "oldString": "d = 4", "newString": "d = 40"}, "toolu_e1")),
        reply("edited"),
    )
    result = await a.turn("make d 40 in buf.py")
    assert result["status"] == "completed", result
    results = tool_results(a.fake.message_requests[2])
    read = result_text(results["toolu_r1"])
    assert "b = 20" in read and "d = 4" in read  # read sees the buffer
    assert not results["toolu_e1"].get("is_error"), results["toolu_e1"]
    (params,) = a.s.edits
    (doc_edit,) = params.edit.document_changes
    assert isinstance(doc_edit, types.TextDocumentEdit)
    assert doc_edit.text_document.uri == uri
    assert doc_edit.text_document.version == 7
    edits = list(doc_edit.edits)
    # minimal edits against the buffer, not a whole-file replacement
    assert apply_text_edits(BUFFER, edits) == BUFFER.replace("d = 4", "d = 40")
    assert all(e.range.start.line == 3 and e.range.end.line == 3 for e in edits), edits
    assert sum(len(e.new_text) for e in edits) <= len("d = 40")
    # the editor owns an open document: the disk is left alone
    assert path.read_text() == DISK


async def test_rejected_edit_becomes_a_tool_error_the_model_sees(agent):
    a = await agent(permissions="auto-edit")
    path = a.root / "keep.py"
    path.write_text("value = 1\n")
    a.s.answer_edit = lambda p: types.ApplyWorkspaceEditResult(applied=False, failure_reason="not now, thanks")
    a.fake.push(
        calls(tool_call("edit", {"path": "keep.py", "oldString": "1", "newString": "2"}, "toolu_x1")),
        reply("ok, leaving it"),
    )
    result = await a.turn("change keep.py")
    assert result["status"] == "completed", result
    assert result["reply"] == "ok, leaving it"
    assert len(a.s.edits) == 1
    block = tool_results(a.fake.message_requests[1])["toolu_x1"]
    assert block.get("is_error") is True
    assert "the user rejected the edit" in result_text(block)
    assert "not now, thanks" in result_text(block)
    assert path.read_text() == "value = 1\n"
    (applied,) = a.s.events_of("editApplied")
    assert applied["applied"] is False
    end = a.s.events_of("toolCallEnd")[-1]
    assert end["callId"] == "toolu_x1" and end["isError"] is True


async def test_paths_leaving_the_workspace_are_refused(agent, tmp_path):
    a = await agent(permissions="auto-edit")
    outside_dir = tmp_path / "outside_dir"
    outside_dir.mkdir()
    (a.root / "link").symlink_to(outside_dir, target_is_directory=True)
    absolute = tmp_path / "abs_outside.txt"
    dotdot = a.root.parent / "outside.txt"
    a.fake.push(
        calls(
            tool_call("write", {"path": "../outside.txt", "content": "x"}, "toolu_o1"),
            tool_call("write", {"path": str(absolute), "content": "x"}, "toolu_o2"),
            tool_call("write", {"path": "link/escape.txt", "content": "x"}, "toolu_o3"),
            tool_call("read", {"path": "/etc/passwd"}, "toolu_o4"),
            tool_call("edit", {"path": "../outside.txt", "oldString": "", "newString": "x"}, "toolu_o5"),
        ),
        reply("could not"),
    )
    result = await a.turn("write outside")
    assert result["status"] == "completed", result
    results = tool_results(a.fake.message_requests[1])
    for cid in ("toolu_o1", "toolu_o2", "toolu_o3", "toolu_o4", "toolu_o5"):
        assert results[cid].get("is_error") is True, results[cid]
        assert "outside the workspace" in result_text(results[cid]), results[cid]
    assert "root:" not in result_text(results["toolu_o4"])
    assert not dotdot.exists()
    assert not absolute.exists()
    assert os.listdir(outside_dir) == []
    assert a.s.edits == [] and a.s.questions == []


async def test_client_without_resource_operations_gets_new_files_on_disk(ws, fake):
    (ws / "open.py").write_text(DISK)
    fake.push(
        calls(
            tool_call("write", {"path": "fresh.py", "content": "FRESH = True\n"}, "toolu_n1"),
            tool_call("edit", {"path": "open.py", "oldString": "b = 20", "newString": "b = 21"}, "toolu_n2"),
        ),
        reply("done"),
    )
    async with lsp_session(ws, caps=caps(resource_ops=False), env=api_env(fake)) as s:
        s.answer_question = lambda p: "Allow once"
        s.open("open.py", BUFFER, version=3)
        result = await s.execute("coder.input", {"text": "create fresh.py, fix open.py"})
        assert result["status"] == "completed", result
        assert (ws / "fresh.py").read_text() == "FRESH = True\n"
        # only the edit of the open document went to the client, versioned
        (params,) = s.edits
        (doc_edit,) = params.edit.document_changes
        assert isinstance(doc_edit, types.TextDocumentEdit)
        assert doc_edit.text_document.version == 3
        assert apply_text_edits(BUFFER, list(doc_edit.edits)) == BUFFER.replace("b = 20", "b = 21")
        assert len(s.questions) == 2  # balanced: each write asked
        assert [q.actions[0].title for q in s.questions] == ["Allow once", "Allow once"]
    results = tool_results(fake.message_requests[1])
    assert not results["toolu_n1"].get("is_error") and not results["toolu_n2"].get("is_error")


async def test_client_without_document_changes_gets_the_changes_form(ws, fake):
    fake.push(
        calls(tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "toolu_c1")),
        reply("fixed"),
    )
    async with lsp_session(ws, caps=caps(document_changes=False, resource_ops=False), env=api_env(fake)) as s:
        s.answer_question = lambda p: "Allow once"
        result = await s.execute("coder.input", {"text": "fix add"})
        assert result["status"] == "completed", result
        (params,) = s.edits
        assert params.edit.document_changes is None
        uri = (ws / "app.py").as_uri()
        assert list(params.edit.changes) == [uri]
        edits = list(params.edit.changes[uri])
        assert apply_text_edits(APP, edits) == APP.replace("a - b", "a + b")
        assert all(e.range.start.line == 1 for e in edits)
    # not open in the editor: also on disk
    assert "return a + b" in (ws / "app.py").read_text()


async def test_client_without_apply_edit_gets_files_written_on_disk(ws, fake):
    fake.push(
        calls(
            tool_call("edit", {"path": "app.py", "oldString": "a - b", "newString": "a + b"}, "toolu_d1"),
            tool_call("write", {"path": "docs/new.txt", "content": "hello\n"}, "toolu_d2"),
        ),
        reply("written"),
    )
    async with lsp_session(ws, caps=caps(apply_edit=False), env=api_env(fake)) as s:
        s.answer_question = lambda p: "Allow once"
        s.open("app.py", (ws / "app.py").read_text(), version=1)
        result = await s.execute("coder.input", {"text": "fix add and write docs"})
        assert result["status"] == "completed", result
        assert s.edits == []
        assert [e["applied"] for e in s.events_of("editApplied")] == [True, True]
    assert "return a + b" in (ws / "app.py").read_text()
    assert (ws / "docs" / "new.txt").read_text() == "hello\n"
    leftovers = [p for p in ws.rglob(".*.tmp")]
    assert leftovers == []
