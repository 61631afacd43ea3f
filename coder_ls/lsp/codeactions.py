"""`textDocument/codeAction`: Coder: Fix / Explain / Refactor… / Write tests, and
Coder: Revert agent change on lines the last submission wrote."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from coder_ls.lsp.edits import workspace_edit
from coder_ls.protocol.edits import FileChange, TextEdit

if TYPE_CHECKING:
    from coder_ls.engine.agentlines import RevertHunk

log = logging.getLogger(__name__)
REVERT_KIND = types.CodeActionKind.RefactorRewrite

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


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def revert_edit(path: Path, text: str, version: int | None, hunks: list[RevertHunk]) -> FileChange:
    """One change putting back what was there before each hunk."""
    lines = text.splitlines(keepends=True)
    edits = []
    for h in hunks:
        if h.end_line < len(lines) or (lines and lines[-1].endswith(("\n", "\r"))):
            end_line, end_char = h.end_line, 0
        else:  # the hunk ends on the last line, which has no newline
            end_line, end_char = h.end_line - 1, _utf16_len(lines[-1])
        edits.append(TextEdit(h.start_line, 0, end_line, end_char, h.old_text))
    new = list(lines)
    for h in sorted(hunks, key=lambda h: h.start_line, reverse=True):
        new[h.start_line : h.end_line] = [h.old_text]
    return FileChange(str(path), "edit", "".join(new), tuple(edits), version)


async def revert_actions(ls: Any, params: types.CodeActionParams) -> list[types.CodeAction]:
    wanted = params.context.only
    if wanted and not any(_kind_matches(REVERT_KIND, w) for w in wanted):
        return []
    engine = getattr(ls, "engine", None)
    uri = params.text_document.uri
    if engine is None or uri not in ls.workspace.text_documents:
        return []
    doc = ls.workspace.get_text_document(uri)
    first, last = params.range.start.line, params.range.end.line
    if params.range.end.character == 0 and last > first:
        last -= 1
    try:
        hunks = await engine.revert_hunks(Path(doc.path), doc.source, first, last)
    except Exception:  # a code-action request never fails because of this
        log.exception("revert agent change: could not compute the hunks")
        return []
    if not hunks:
        return []
    change = revert_edit(Path(doc.path), doc.source, doc.version, hunks)
    title = "Coder: Revert agent change" if len(hunks) == 1 else f"Coder: Revert agent changes ({len(hunks)})"
    edit = workspace_edit((change,), engine.host.caps)  # the capabilities, resolved once
    return [types.CodeAction(title=title, kind=REVERT_KIND, edit=edit)]


def register(server: LanguageServer) -> None:
    kinds = [types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor, REVERT_KIND]

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=kinds))
    async def on_code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(params) + await revert_actions(ls, params)
