"""textDocument/codeAction offers Coder: Fix / Explain / Refactor… / Write tests; running
the Fix action's command is a turn that sees the selection, the file and the
diagnostics, and its edit comes back through workspace/applyEdit."""

from __future__ import annotations

import pytest
from agent_e2e import calls, tool_call
from anthropic_server import reply
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="package")

SOURCE = "def total(items):\n    s = 0\n    for i in items:\n        s += i\n    return S\n"


def diagnostic() -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=4, character=11), end=types.Position(line=4, character=12)),
        message="undefined name 'S'",
        severity=types.DiagnosticSeverity.Error,
        source="pyflakes",
    )


def selection() -> types.Range:
    return types.Range(start=types.Position(line=0, character=0), end=types.Position(line=5, character=0))


async def code_actions(s, uri: str, rng: types.Range, diagnostics: list[types.Diagnostic], only=None):
    return await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )


async def test_code_actions_are_offered_with_their_commands(agent):
    a = await agent()
    (a.root / "total.py").write_text(SOURCE)
    uri = a.s.open("total.py", SOURCE, version=1)
    actions = await code_actions(a.s, uri, selection(), [diagnostic()])
    by_title = {x.title: x for x in actions}
    assert set(by_title) == {"Coder: Fix", "Coder: Explain", "Coder: Refactor…", "Coder: Write tests"}
    for action in actions:
        assert isinstance(action, types.CodeAction)
        assert action.command is not None and action.command.command == "coder.codeAction"
        (arg,) = action.command.arguments
        assert arg["uri"] == uri
        assert arg["range"] == {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}
    fix = by_title["Coder: Fix"]
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.diagnostics and fix.diagnostics[0].message == "undefined name 'S'"
    assert fix.command.arguments[0]["action"] == "fix"
    assert by_title["Coder: Refactor…"].kind == types.CodeActionKind.Refactor
    assert {x.command.arguments[0]["action"] for x in actions} == {"fix", "explain", "refactor", "tests"}


async def test_only_quickfix_is_honoured(agent):
    a = await agent()
    (a.root / "total_only.py").write_text(SOURCE)
    uri = a.s.open("total_only.py", SOURCE, version=1)
    actions = await code_actions(a.s, uri, selection(), [diagnostic()], only=[types.CodeActionKind.QuickFix])
    assert [x.title for x in actions] == ["Coder: Fix"]


async def test_an_empty_range_without_diagnostics_offers_no_fix(agent):
    a = await agent()
    (a.root / "total_empty.py").write_text(SOURCE)
    uri = a.s.open("total_empty.py", SOURCE, version=1)
    point = types.Position(line=1, character=2)
    actions = await code_actions(a.s, uri, types.Range(start=point, end=point), [])
    titles = [x.title for x in actions]
    assert "Coder: Fix" not in titles
    assert "Coder: Explain" in titles


async def test_running_the_fix_action_edits_through_apply_edit(agent):
    a = await agent(permissions="auto-edit")
    (a.root / "total_fix.py").write_text(SOURCE)
    uri = a.s.open("total_fix.py", SOURCE, version=4)
    actions = await code_actions(a.s, uri, selection(), [diagnostic()])
    fix = next(x for x in actions if x.title == "Coder: Fix")
    a.fake.push(
        calls(
            tool_call("edit", {"path": "total_fix.py", "oldString": "return S", "newString": "return s"}, "toolu_f1")
        ),
        reply("Fixed the typo: `S` -> `s`."),
    )
    result = await a.s.execute(fix.command.command, fix.command.arguments[0])
    assert result["mode"] == "nl", result
    assert result["status"] == "completed", result
    assert result["reply"] == "Fixed the typo: `S` -> `s`."
    first = a.fake.message_requests[0]
    prompt = first.body["messages"][0]["content"][0]["text"]
    assert "total_fix.py" in prompt
    assert "undefined name 'S'" in prompt
    assert "for i in items:" in prompt and "return S" in prompt
    (params,) = a.s.edits
    (doc_edit,) = params.edit.document_changes
    assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == 4
    edits = list(doc_edit.edits)
    assert all(e.range.start.line == 4 for e in edits)
    assert a.s.events_of("turnFinished")[-1]["status"] == "completed"


async def test_explain_action_is_a_turn_without_edits(agent):
    a = await agent(permissions="auto-edit")
    (a.root / "total_explain.py").write_text(SOURCE)
    uri = a.s.open("total_explain.py", SOURCE, version=1)
    actions = await code_actions(a.s, uri, selection(), [])
    explain = next(x for x in actions if x.title == "Coder: Explain")
    a.fake.push(reply("It sums the items."))
    result = await a.s.execute("coder.codeAction", explain.command.arguments[0])
    assert result["reply"] == "It sums the items."
    prompt = a.fake.message_requests[0].body["messages"][0]["content"][0]["text"]
    assert prompt.startswith("Explain")
    assert "total_explain.py" in prompt and "def total(items):" in prompt
    assert a.s.edits == []
