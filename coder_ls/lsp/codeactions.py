"""`textDocument/codeAction`: Coder: Fix / Explain / Refactor… / Write tests."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

ACTIONS = (
    ("fix", "Coder: Fix", types.CodeActionKind.QuickFix),
    ("explain", "Coder: Explain", None),
    ("refactor", "Coder: Refactor…", types.CodeActionKind.Refactor),
    ("tests", "Coder: Write tests", None),
)


def _range(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def _diagnostic(d: types.Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"range": _range(d.range), "message": d.message}
    if d.severity is not None:
        out["severity"] = int(d.severity)
    if d.source is not None:
        out["source"] = d.source
    if d.code is not None:
        out["code"] = d.code
    return out


def _kind_matches(kind: Any, wanted: Any) -> bool:
    """`refactor.extract` is in `refactor`. Compare the values: on Python 3.11,
    `str(CodeActionKind.QuickFix)` is "CodeActionKind.QuickFix", not "quickfix"."""
    k, w = str(getattr(kind, "value", kind)), str(getattr(wanted, "value", wanted))
    return w == "" or k == w or k.startswith(w + ".")


def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
    diagnostics = list(params.context.diagnostics or [])
    wanted = params.context.only
    out = []
    for action, title, kind in ACTIONS:
        if action == "fix" and not diagnostics and params.range.start == params.range.end:
            continue  # nothing selected and nothing to fix
        if wanted and (kind is None or not any(_kind_matches(kind, w) for w in wanted)):
            continue
        arg: dict[str, Any] = {"uri": params.text_document.uri, "range": _range(params.range), "action": action}
        if action == "fix" and diagnostics:
            arg["diagnostics"] = [_diagnostic(d) for d in diagnostics]
        out.append(
            types.CodeAction(
                title=title,
                kind=kind,
                diagnostics=diagnostics if action == "fix" and diagnostics else None,
                command=types.Command(title=title, command="coder.codeAction", arguments=[arg]),
            )
        )
    return out


def register(server: LanguageServer) -> None:
    kinds = [types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=kinds))
    def on_code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(params)
