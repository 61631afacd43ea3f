"""`textDocument/codeLens` on the lines the agent wrote in a session (contract section 23):
who wrote them (the submission's prompt, the subagent), and a command, `coder.revertHunk`,
that puts that hunk back (`engine/lenses.py`). The editor's versioned didChange moves them;
after a submission that changed them, `workspace/codeLens/refresh` when the client can.

The engine's part is imported when a request needs it: `initialize` stays as fast."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)
REVERT_ID = "coder.revertHunk"


def _sessions(ls: Any) -> list[Any]:
    engine = getattr(ls, "engine", None)
    return engine.sessions.loaded_sessions() if engine is not None else []


def code_lenses(ls: Any, params: types.CodeLensParams) -> list[types.CodeLens]:
    sessions = _sessions(ls)
    if not sessions:
        return []
    from coder_ls.engine.lenses import lenses

    uri = params.text_document.uri
    doc = ls.workspace.get_text_document(uri)
    text = doc.source if uri in ls.workspace.text_documents else None
    out = []
    for lens in lenses(sessions, doc.path, text):
        at = types.Position(line=lens.line, character=0)
        arg = {"uri": uri, "hunkId": lens.hunk_id, "sessionId": lens.session_id}
        command = types.Command(title=lens.title, command=REVERT_ID, arguments=[arg])
        out.append(types.CodeLens(range=types.Range(start=at, end=at), command=command))
    return out


def editor_changed(ls: Any, params: types.DidChangeTextDocumentParams) -> None:
    sessions = _sessions(ls)
    if not sessions:
        return
    from coder_ls.engine.lenses import editor_changed as changed

    doc = ls.workspace.get_text_document(params.text_document.uri)
    changed(sessions, doc.path, doc.source)


class Refresher:
    """Asks the client to fetch the lenses again when some session's changed."""

    def __init__(self) -> None:
        self._seen: Any = ()

    def after_submission(self, ls: Any) -> None:
        sessions = _sessions(ls)
        if not sessions or not supports_refresh(getattr(ls, "_init_params", None)):
            return
        from coder_ls.engine.lenses import version

        now = version(sessions)
        if now == self._seen:
            return
        self._seen = now
        try:
            ls.workspace_code_lens_refresh(None)
        except Exception:  # the answer does not matter; a broken connection is found elsewhere
            log.exception("workspace/codeLens/refresh")


def supports_refresh(params: types.InitializeParams | None) -> bool:
    ws = params.capabilities.workspace if params is not None else None
    return bool(ws and ws.code_lens and ws.code_lens.refresh_support)


def register(server: LanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def on_code_lens(ls: LanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        try:
            return code_lenses(ls, params)
        except Exception:  # a lens request never fails the editor because of this
            log.exception("code lenses")
            return []
