"""Reviewing the agent's edits (contract section 15), end to end.

- A client with `changeAnnotationSupport`: under balanced, an edit is asked as the edit
  itself (one applyEdit whose edits need confirmation, no question); what the buffer or
  the disk holds afterwards tells the model which changes were applied and which rejected.
- Without it: the approval question shows the change as a unified diff.
- An approval left unanswered for `approvals.timeoutSeconds` is denied, with a warning.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_e2e import APP, api_env, calls, result_text, tool_call, tool_results
from anthropic_server import reply
from harness import full_caps, lsp_session
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="package")

TWO_HUNKS = {
    "path": "app.py",
    "edits": [
        {"oldString": "return a - b", "newString": "return a + b"},
        {"oldString": "return a * b", "newString": "return a ** b"},
    ],
}
BOTH = APP.replace("a - b", "a + b").replace("a * b", "a ** b")
FIRST_ONLY = APP.replace("a - b", "a + b")
SECOND_ONLY = APP.replace("a * b", "a ** b")


def review_caps() -> types.ClientCapabilities:
    caps = full_caps()
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.change_annotation_support = types.ChangeAnnotationsSupportOptions(
        groups_on_label=True
    )
    return caps


def _offset(text: str, pos: types.Position) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: pos.line]) + pos.character


def apply_some(text: str, edits: list[types.TextEdit], keep: set[int]) -> str:
    """What an editor holds after the user kept only the edits numbered in `keep`."""
    spans = sorted(
        (_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for i, e in enumerate(edits) if i in keep
    )
    out, pos = [], 0
    for start, end, new in spans:
        out.append(text[pos:start] + new)
        pos = end
    return "".join(out) + text[pos:]


def reviewed_edit(params: types.ApplyWorkspaceEditParams) -> tuple[str, list[types.TextEdit]]:
    """The one file edit of a review applyEdit, checked for its needsConfirmation shape."""
    edit = params.edit
    assert edit.changes is None
    assert edit.change_annotations, edit
    ((note_id, note),) = edit.change_annotations.items()
    assert note.needs_confirmation is True
    doc_edits = [d for d in edit.document_changes or [] if isinstance(d, types.TextDocumentEdit)]
    assert len(doc_edits) == 1
    edits = list(doc_edits[0].edits)
    assert edits and all(isinstance(e, types.AnnotatedTextEdit) and e.annotation_id == note_id for e in edits)
    assert params.label == note.label
    return note.label, edits  # type: ignore[return-value]


def change_buffer(s, uri: str, version: int, text: str) -> None:
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def test_an_edit_is_reviewed_in_the_editor_and_the_model_learns_what_was_kept(ws: Path, fake) -> None:
    fake.push(
        calls(tool_call("multiEdit", TWO_HUNKS, "toolu_r1")),
        reply("noted"),
        calls(tool_call("multiEdit", TWO_HUNKS, "toolu_r2")),
        reply("noted again"),
        calls(tool_call("edit", {"path": "README.md", "oldString": "# demo", "newString": "# Demo"}, "toolu_r3")),
        reply("ok"),
        calls(tool_call("write", {"path": "new.txt", "content": "fresh\n"}, "toolu_r4")),
        reply("created"),
    )
    async with lsp_session(ws, caps=review_caps(), env=api_env(fake)) as s:
        s.answer_question = lambda p: "Allow once"
        uri = s.open("app.py", APP, version=1)
        labels: list[str] = []

        # 1. open buffer: the user keeps the second change only
        def keep_second(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            label, edits = reviewed_edit(params)
            labels.append(label)
            assert len(edits) == 2
            change_buffer(s, uri, 2, apply_some(APP, edits, {1}))
            return types.ApplyWorkspaceEditResult(applied=True)

        s.answer_edit = keep_second
        result = await s.execute("coder.input", {"text": "fix both"})
        assert result["status"] == "completed", result
        assert s.questions == []  # the edit was the question
        assert labels == ["Coder: multiEdit app.py"]
        block = tool_results(fake.message_requests[1])["toolu_r1"]
        text = result_text(block)
        assert block.get("is_error") is True
        assert "applied 1 of its 2 changes" in text, text
        applied_part, rejected_part = text.split("Rejected")
        assert "line 6" in applied_part and "a ** b" in applied_part
        assert "line 2" in rejected_part and "a + b" in rejected_part
        assert (ws / "app.py").read_text() == APP  # an open buffer: the editor saves it, not us
        assert [e["decision"] for e in s.events_of("approvalResolved")] == ["allowOnce"]

        # 2. the user unchecks everything (the client applies an empty edit)
        s.events.clear()

        def keep_none(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            reviewed_edit(params)
            return types.ApplyWorkspaceEditResult(applied=True)

        change_buffer(s, uri, 3, APP)
        s.answer_edit = keep_none
        result = await s.execute("coder.input", {"text": "again"})
        assert result["status"] == "completed", result
        text = result_text(tool_results(fake.message_requests[3])["toolu_r2"])
        assert "the user rejected the edit of app.py" in text, text
        assert [e["decision"] for e in s.events_of("approvalResolved")] == ["deny"]
        assert s.events_of("editApplied")[-1]["applied"] is False

        # 3. a file not open: the disk is the truth; the editor refused it outright
        s.answer_edit = lambda p: types.ApplyWorkspaceEditResult(applied=False, failure_reason="declined")
        result = await s.execute("coder.input", {"text": "readme"})
        assert result["status"] == "completed", result
        text = result_text(tool_results(fake.message_requests[5])["toolu_r3"])
        assert "the user rejected the edit" in text and "declined" in text
        assert (ws / "README.md").read_text() == "# demo\n"

        # 4. a new file, accepted: created by the editor; the model gets the normal result
        def create(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            edit = params.edit
            assert edit.change_annotations and params.label == "Coder: write new.txt"
            creates = [d for d in edit.document_changes or [] if isinstance(d, types.CreateFile)]
            assert creates and creates[0].annotation_id in edit.change_annotations
            (ws / "new.txt").write_text("fresh\n")
            return types.ApplyWorkspaceEditResult(applied=True)

        s.answer_edit = create
        result = await s.execute("coder.input", {"text": "create"})
        assert result["status"] == "completed", result
        block = tool_results(fake.message_requests[7])["toolu_r4"]
        assert not block.get("is_error") and "Created new.txt" in result_text(block)
        assert s.questions == []


async def test_a_file_not_open_partly_applied_on_disk_is_read_back(ws: Path, fake) -> None:
    fake.push(calls(tool_call("multiEdit", TWO_HUNKS, "toolu_d1")), reply("ok"))
    async with lsp_session(ws, caps=review_caps(), env=api_env(fake)) as s:

        def keep_first(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            _, edits = reviewed_edit(params)
            (ws / "app.py").write_text(apply_some(APP, edits, {0}))  # the editor saved what was kept
            return types.ApplyWorkspaceEditResult(applied=True)

        s.answer_edit = keep_first
        result = await s.execute("coder.input", {"text": "fix"})
        assert result["status"] == "completed", result
        assert s.questions == []
    text = result_text(tool_results(fake.message_requests[1])["toolu_d1"])
    applied_part, rejected_part = text.split("Rejected")
    assert "line 2" in applied_part and "line 6" in rejected_part, text
    assert (ws / "app.py").read_text() == FIRST_ONLY  # the server did not write its own version over it


async def test_without_annotations_the_question_shows_a_unified_diff(agent) -> None:
    a = await agent()
    a.s.answer_question = lambda p: "Deny"
    a.fake.push(calls(tool_call("multiEdit", TWO_HUNKS, "toolu_u1")), reply("fine"))
    result = await a.turn("fix both")
    assert result["status"] == "completed", result
    (question,) = a.s.questions
    lines = question.message.splitlines()
    assert "multiEdit" in lines[0]
    assert "--- a/app.py" in lines and "+++ b/app.py" in lines
    assert "-    return a - b" in lines and "+    return a + b" in lines
    assert "-    return a * b" in lines and "+    return a ** b" in lines
    assert a.s.edits == []
    assert (a.root / "app.py").read_text() == APP


async def test_a_long_diff_is_cut_to_forty_lines(agent) -> None:
    a = await agent()
    a.s.answer_question = lambda p: "Deny"
    content = "".join(f"line {n}\n" for n in range(100))
    a.fake.push(calls(tool_call("write", {"path": "long.txt", "content": content}, "toolu_u2")), reply("ok"))
    await a.turn("write long")
    (question,) = a.s.questions
    diff = question.message.splitlines()[1:]
    assert len(diff) == 41 and diff[-1].startswith("… (") and "+line 36" in diff
    assert "+line 37" not in diff


async def test_an_unanswered_approval_is_denied_after_the_timeout(agent, caplog) -> None:
    a = await agent(approvals={"timeoutSeconds": 1}, sandbox={"autoAllow": False})  # so `touch` is asked
    answer_now = asyncio.Event()

    async def never(params: types.ShowMessageRequestParams) -> str:
        await answer_now.wait()
        return "Allow once"  # far too late

    a.s.answer_question = never
    a.s.client.messages.clear()
    a.fake.push(calls(tool_call("bash", {"command": "touch late.txt"}, "toolu_t1")), reply("moving on"))
    result = await asyncio.wait_for(a.turn("touch"), 30)
    assert result["status"] == "completed", result
    assert result["reply"] == "moving on"
    block = tool_results(a.fake.message_requests[1])["toolu_t1"]
    assert block.get("is_error") is True and "did not answer within 1s" in result_text(block)
    warnings = [m.message for m in a.s.client.messages if m.type == types.MessageType.Warning]
    assert any("not answered within 1s" in m and "denied" in m for m in warnings), warnings
    assert [e["decision"] for e in a.s.events_of("approvalResolved")] == ["deny"]
    # the late answer changes nothing, and the server goes on answering
    answer_now.set()
    await asyncio.sleep(0.2)
    assert not (a.root / "late.txt").exists()
    a.s.answer_question = lambda p: "Allow once"
    a.fake.push(calls(tool_call("bash", {"command": "echo after"}, "toolu_t2")), reply("done"))
    result = await a.turn("again")
    assert result["status"] == "completed" and result["reply"] == "done", result
    assert "Unable to handle message" not in caplog.text  # the late answer was not an error


def review_left_open(withdrawn: asyncio.Event):
    """A user who leaves the review open: the answer comes only if the server withdraws
    the question (`$/cancelRequest` cancels this handler), which sets `withdrawn`."""

    async def answer(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        return types.ApplyWorkspaceEditResult(applied=True)

    return answer


async def test_an_unanswered_review_is_withdrawn_and_denied_after_the_timeout(ws: Path, fake) -> None:
    """Section 15: a review left open for `approvals.timeoutSeconds` is denied like any
    approval; the editor is told to close it, so a late Apply cannot land the edit."""
    fake.push(calls(tool_call("multiEdit", TWO_HUNKS, "toolu_w1")), reply("moving on"))
    opts = {"approvals": {"timeoutSeconds": 1}}
    async with lsp_session(ws, caps=review_caps(), env=api_env(fake), init_options=opts) as s:
        s.open("app.py", APP, version=1)
        withdrawn = asyncio.Event()
        s.answer_edit = review_left_open(withdrawn)
        result = await asyncio.wait_for(s.execute("coder.input", {"text": "fix both"}), 30)
        assert result["status"] == "completed" and result["reply"] == "moving on", result
        block = tool_results(fake.message_requests[1])["toolu_w1"]
        assert block.get("is_error") is True and "did not answer the review within 1s" in result_text(block), block
        await asyncio.wait_for(withdrawn.wait(), 5)  # the client got $/cancelRequest
        warnings = [m.message for m in s.client.messages if m.type == types.MessageType.Warning]
        assert any("review" in m and "not answered within 1s" in m for m in warnings), warnings
        assert [e["decision"] for e in s.events_of("approvalResolved")] == ["deny"]
        assert (ws / "app.py").read_text() == APP


async def test_an_interrupt_withdraws_an_open_review(ws: Path, fake) -> None:
    fake.push(calls(tool_call("multiEdit", TWO_HUNKS, "toolu_w2")), reply("never sent"))
    async with lsp_session(ws, caps=review_caps(), env=api_env(fake)) as s:
        s.open("app.py", APP, version=1)
        withdrawn = asyncio.Event()
        s.answer_edit = review_left_open(withdrawn)
        _, answer = s.start("coder.input", {"text": "fix both"})
        await s.wait_for(lambda: s.edits, timeout=15)
        await s.execute("coder.interrupt", {})
        result = await asyncio.wait_for(answer, 15)
        assert result["status"] == "cancelled", result
        await asyncio.wait_for(withdrawn.wait(), 5)  # the editor closes its review
        assert (ws / "app.py").read_text() == APP


async def test_a_did_change_that_trails_the_answer_is_still_read(ws: Path, fake) -> None:
    fake.push(calls(tool_call("multiEdit", TWO_HUNKS, "toolu_l1")), reply("ok"))
    async with lsp_session(ws, caps=review_caps(), env=api_env(fake)) as s:
        uri = s.open("app.py", APP, version=4)

        def answer_then_change(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            _, edits = reviewed_edit(params)
            kept = apply_some(APP, edits, {0, 1})
            asyncio.get_running_loop().call_later(0.3, change_buffer, s, uri, 5, kept)
            return types.ApplyWorkspaceEditResult(applied=True)

        s.answer_edit = answer_then_change
        result = await s.execute("coder.input", {"text": "fix"})
        assert result["status"] == "completed", result
    block = tool_results(fake.message_requests[1])["toolu_l1"]
    assert not block.get("is_error") and "Edited app.py: 2 edits" in result_text(block), block


async def test_a_file_not_open_is_loaded_by_the_editor_and_its_buffer_is_the_truth(ws: Path, fake) -> None:
    """VS Code applies a reviewed edit of a file that is not open to a copy it loads, and
    tells the server with didOpen/didChange after its answer: the server reads that copy
    and writes what was kept to disk (the user never saves a file they did not open)."""
    fake.push(calls(tool_call("multiEdit", TWO_HUNKS, "toolu_n1")), reply("ok"))
    async with lsp_session(ws, caps=review_caps(), env=api_env(fake)) as s:
        uri = (ws / "app.py").as_uri()

        def load_then_change(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            _, edits = reviewed_edit(params)
            kept = apply_some(APP, edits, {1})
            loop = asyncio.get_running_loop()
            loop.call_later(0.2, lambda: s.open("app.py", APP, version=1))
            loop.call_later(0.3, change_buffer, s, uri, 2, kept)
            return types.ApplyWorkspaceEditResult(applied=True)

        s.answer_edit = load_then_change
        result = await s.execute("coder.input", {"text": "fix"})
        assert result["status"] == "completed", result
    text = result_text(tool_results(fake.message_requests[1])["toolu_n1"])
    applied_part, rejected_part = text.split("Rejected")
    assert "line 6" in applied_part and "line 2" in rejected_part, text
    assert (ws / "app.py").read_text() == SECOND_ONLY
