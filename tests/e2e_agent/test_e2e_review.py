"""`/review` end to end: the model's findings (`reportFindings`) reach the editor as
diagnostics (source `coder`), a "Coder: Fix" quick fix on one starts a fix that sees it,
and the next review replaces them (one that finds nothing clears them)."""

from __future__ import annotations

import pytest
from agent_e2e import APP, all_text, calls, tool_call
from anthropic_server import reply
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="package")

FINDINGS = {
    "findings": [
        {"path": "app.py", "line": 2, "severity": "error", "message": "add() subtracts: it returns a - b"},
        {"path": "app.py", "line": 5, "endLine": 6, "message": "mul has no test"},
    ]
}


async def test_review_findings_become_diagnostics_with_a_quick_fix(agent):
    a = await agent()
    (a.root / "app.py").write_text(APP + "\n# touched\n")  # an uncommitted change to review
    uri = (a.root / "app.py").as_uri()
    try:
        a.fake.push(calls(tool_call("reportFindings", FINDINGS, "r1")), reply("Two findings."))
        result = await a.turn("/review")
        assert result["status"] == "completed" and result["reply"] == "Two findings.", result
        first = a.fake.message_requests[0]
        assert "reportFindings" in [t["name"] for t in first.body["tools"]]
        assert "# touched" in all_text(first)  # the diff is in the prompt
        await a.s.wait_for(lambda: len(a.s.client.diagnostics.get(uri, [])) == 2)
        error, warning = sorted(a.s.client.diagnostics[uri], key=lambda d: d.range.start.line)
        assert (error.source, error.severity, error.range.start.line) == ("coder", types.DiagnosticSeverity.Error, 1)
        assert warning.range.start.line == 4 and warning.range.end.line == 6 and "no test" in warning.message

        a.s.open("app.py", (a.root / "app.py").read_text(), version=1)
        actions = await a.s.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=error.range,
                context=types.CodeActionContext(diagnostics=[error]),
            )
        )
        fix = next(x for x in actions if x.title == "Coder: Fix")
        assert fix.kind == "quickfix" and list(fix.diagnostics) == [error]
        a.fake.push(reply("Fixed."))
        done = await a.s.execute(fix.command.command, *fix.command.arguments)
        assert done["status"] == "completed", done
        assert "add() subtracts" in all_text(a.fake.message_requests[-1])

        a.fake.push(reply("Nothing to report."))
        await a.turn("/review app.py")  # the next review finds nothing: the diagnostics go
        await a.s.wait_for(lambda: uri in a.s.client.diagnostics and not a.s.client.diagnostics[uri], timeout=5)
    finally:
        (a.root / "app.py").write_text(APP)


async def test_a_plain_turn_has_no_report_tool(agent):
    a = await agent()
    a.fake.push(reply("hi"))
    await a.turn("hello")
    assert "reportFindings" not in [t["name"] for t in a.fake.message_requests[0].body["tools"]]
