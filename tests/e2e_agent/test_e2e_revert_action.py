""""Coder: Revert agent change": on lines the last submission wrote, a code action whose
edit puts back what was there before (only that hunk; hunks the user changed since are
not offered)."""

from __future__ import annotations

import pytest
from agent_e2e import calls, tool_call
from anthropic_server import reply
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="package")

BEFORE = "def area(w, h):\n    return w + h\n\n\ndef half(x):\n    return x / 2\n"
EDITS = {
    "path": "shapes.py",
    "edits": [
        {"oldString": "return w + h", "newString": "return w * h"},
        {"oldString": "def half(x):\n", "newString": "def half(x):\n    # integer halves stay floats\n"},
    ],
}
AFTER = "def area(w, h):\n    return w * h\n\n\ndef half(x):\n    # integer halves stay floats\n    return x / 2\n"


async def actions_at(s, uri: str, line: int) -> list[types.CodeAction]:
    point = types.Position(line=line, character=4)
    got = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=point, end=point),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return list(got or [])


def apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    for e in sorted(edits, key=lambda e: e.range.start.line, reverse=True):
        start, end = e.range.start, e.range.end
        head = "".join(lines[: start.line]) + lines[start.line][: start.character] if start.line < len(lines) else text
        tail_line = lines[end.line] if end.line < len(lines) else ""
        tail = tail_line[end.character :] + "".join(lines[end.line + 1 :])
        text = head + e.new_text + tail
        lines = text.splitlines(keepends=True)
    return text


async def test_an_agent_edit_can_be_reverted_hunk_by_hunk_from_the_editor(agent):
    a = await agent(permissions="yolo")
    (a.root / "shapes.py").write_text(BEFORE)
    a.fake.push(calls(tool_call("multiEdit", EDITS, "toolu_rv1")), reply("Fixed area."))
    result = await a.turn("area is wrong")
    assert result["status"] == "completed", result
    assert (a.root / "shapes.py").read_text() == AFTER
    uri = a.s.open("shapes.py", AFTER, version=1)

    [action] = [x for x in await actions_at(a.s, uri, 1) if "Revert" in x.title]
    assert action.title == "Coder: Revert agent change" and action.kind == types.CodeActionKind.RefactorRewrite
    [doc_edit] = action.edit.document_changes
    assert doc_edit.text_document.version == 1
    reverted = apply(AFTER, doc_edit.edits)
    assert reverted == AFTER.replace("return w * h", "return w + h")  # only that hunk goes back

    [insert] = [x for x in await actions_at(a.s, uri, 5) if "Revert" in x.title]
    without_comment = AFTER.replace("    # integer halves stay floats\n", "")
    assert apply(AFTER, insert.edit.document_changes[0].edits) == without_comment
    assert not [x for x in await actions_at(a.s, uri, 0) if "Revert" in x.title]  # a line it did not write


async def test_a_line_the_user_changed_since_is_not_offered(agent):
    a = await agent(permissions="yolo")
    (a.root / "shapes2.py").write_text(BEFORE)
    a.fake.push(calls(tool_call("multiEdit", {**EDITS, "path": "shapes2.py"}, "toolu_rv2")), reply("Done."))
    result = await a.turn("fix shapes2")
    assert result["status"] == "completed", result
    mine = AFTER.replace("return w * h", "return w * h * 1")
    uri = a.s.open("shapes2.py", mine, version=3)
    assert not [x for x in await actions_at(a.s, uri, 1) if "Revert" in x.title]
    assert [x for x in await actions_at(a.s, uri, 5) if "Revert" in x.title]  # the other hunk still is
