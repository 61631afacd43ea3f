"""`EditorEyes` over LSP (contract section 23): `coder/diagnostics` and
`coder/languageQuery` sent to a client that declared them, answers parsed into the
engine's types (`engine/eyes.py`).

Every request is bounded (`ANSWER_TIMEOUT_SECONDS`, then `$/cancelRequest`): a client that
errors, never answers or answers garbage is an `EditorError` saying so, never a hung turn.
URIs stop here: each becomes a path, and a document that is no file (`untitled:`, a
virtual document) is counted as left out.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from coder_ls.engine.eyes import (
    ANSWER_TIMEOUT_SECONDS,
    DiagnosticsAnswer,
    EditorDiagnostic,
    EditorError,
    EditorSymbol,
    LanguageAnswer,
    QueryKind,
    Span,
)
from coder_ls.lsp.plain import plain
from coder_ls.protocol.language import (
    DiagnosticsParams,
    FileDiagnostics,
    LanguageQueryParams,
    LspLocation,
    LspPosition,
    LspRange,
    SymbolInformation,
)

log = logging.getLogger(__name__)

DIAGNOSTICS = "coder/diagnostics"
LANGUAGE_QUERY = "coder/languageQuery"


def _path_of(uri: str | None) -> str | None:
    if not uri or not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return path if path and Path(path).is_absolute() else None


def _span(path: str, r: LspRange | None) -> Span:
    if r is None:
        return Span(path=path, line=0)
    end = r.end
    return Span(
        path=path,
        line=max(r.start.line, 0),
        character=max(r.start.character, 0),
        end_line=end.line if end else None,
        end_character=end.character if end else None,
    )


def _location(loc: LspLocation) -> Span | None:
    """A `Location`, or a `LocationLink`'s target (its selection range: the name)."""
    path = _path_of(loc.uri or loc.target_uri)
    if path is None:
        return None
    return _span(path, loc.range or loc.target_selection_range or loc.target_range)


def _convert(raw: Any, kind: Any) -> Any:
    """`raw` as `kind`: the stream hands a result over as plain JSON values, converted at
    once (5,000 diagnostics in a few ms); anything else pygls may hand over goes through
    `plain` first."""
    try:
        return msgspec.convert(raw, kind)
    except (msgspec.ValidationError, TypeError):
        return msgspec.convert(plain(raw), kind)


def parse_diagnostics(raw: Any) -> DiagnosticsAnswer:
    """The client's answer to `coder/diagnostics`, or an EditorError saying what is wrong."""
    try:
        files = _convert(raw if raw is not None else [], list[FileDiagnostics])
    except (msgspec.ValidationError, TypeError) as exc:
        raise EditorError(f"the editor's answer to {DIAGNOSTICS} is not [{{uri, diagnostics}}]: {exc}") from None
    out: list[EditorDiagnostic] = []
    paths: list[str] = []
    left_out = 0
    for f in files:
        path = _path_of(f.uri)
        if path is None:
            left_out += len(f.diagnostics)
            continue
        paths.append(path)
        for d in f.diagnostics:  # the hot loop of 5,000: no call it can do without
            start, end = d.range.start, d.range.end
            span = Span(
                path,
                start.line if start.line > 0 else 0,
                start.character if start.character > 0 else 0,
                end.line if end is not None else None,
                end.character if end is not None else None,
            )
            code = d.code if d.code is None or isinstance(d.code, str) else str(d.code)
            out.append(EditorDiagnostic(span, d.message, d.severity, d.source, code))
    return DiagnosticsAnswer(diagnostics=tuple(out), files=tuple(paths), left_out=left_out)


def _hover_text(contents: Any) -> str:
    if isinstance(contents, str):
        return contents
    if isinstance(contents, dict):
        value = contents.get("value")
        return value if isinstance(value, str) else ""
    if isinstance(contents, list):
        return "\n\n".join(t for t in (_hover_text(c) for c in contents) if t)
    return ""


def parse_query(kind: QueryKind, raw: Any) -> LanguageAnswer:
    """The client's answer to `coder/languageQuery` of `kind`, or an EditorError."""
    value = plain(raw)
    if value is None:
        return LanguageAnswer()
    try:
        if kind == "hover":
            if not isinstance(value, dict) or "contents" not in value:
                raise msgspec.ValidationError("expected a Hover {contents} or null")
            return LanguageAnswer(hover=_hover_text(value["contents"]))
        if kind == "symbols":
            symbols = msgspec.convert(value, list[SymbolInformation])
            found = [(s, _location(s.location)) for s in symbols]
            return LanguageAnswer(
                symbols=tuple(EditorSymbol(s.name, span, s.kind, s.container_name) for s, span in found if span),
                left_out=sum(1 for _, span in found if span is None),
            )
        locations = msgspec.convert(value if isinstance(value, list) else [value], list[LspLocation])
    except (msgspec.ValidationError, TypeError) as exc:
        shape = {"hover": "Hover | null", "symbols": "SymbolInformation[]"}.get(kind, "Location[]")
        raise EditorError(f"the editor's answer to {LANGUAGE_QUERY} ({kind}) is not {shape}: {exc}") from None
    spans = [_location(loc) for loc in locations]
    return LanguageAnswer(locations=tuple(s for s in spans if s), left_out=sum(1 for s in spans if s is None))


class LspEyes:
    """The editor's language servers, asked through the client (`EditorEyes`)."""

    def __init__(self, server: LanguageServer, *, diagnostics: bool, language: bool) -> None:
        self.server = server
        self._diagnostics = diagnostics
        self._language = language
        self.timeout = ANSWER_TIMEOUT_SECONDS

    @property
    def diagnostics_declared(self) -> bool:
        return self._diagnostics

    @property
    def language_declared(self) -> bool:
        return self._language

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        """The client's answer, or an EditorError: its error, or no answer within `timeout`
        (the request is then withdrawn with `$/cancelRequest`)."""
        msg_id = f"coder-eyes-{uuid.uuid4().hex}"
        pending = asyncio.wrap_future(self.server.protocol.send_request(method, params, msg_id=msg_id))
        pending.add_done_callback(lambda f: f.cancelled() or f.exception())  # a late error is nobody's
        try:
            return await asyncio.wait_for(asyncio.shield(pending), self.timeout)
        except asyncio.CancelledError:
            self.server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        except TimeoutError:
            self.server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise EditorError(f"the editor did not answer {method} within {self.timeout:g} s") from None
        except Exception as exc:
            log.info("%s failed: %s", method, exc)
            raise EditorError(f"the editor could not answer {method}: {exc}") from None

    async def diagnostics(self, paths: Sequence[Path] | None = None) -> DiagnosticsAnswer:
        if not self._diagnostics:
            raise EditorError("the editor does not answer coder/diagnostics")
        uris = None if paths is None else [u for u in (from_fs_path(str(p)) for p in paths) if u]
        params = msgspec.to_builtins(DiagnosticsParams(uris=uris))
        return parse_diagnostics(await self._request(DIAGNOSTICS, params))

    async def language_query(
        self, kind: QueryKind, path: Path | None = None, line: int = 0, character: int = 0, query: str | None = None
    ) -> LanguageAnswer:
        if not self._language:
            raise EditorError("the editor does not answer coder/languageQuery")
        uri = from_fs_path(str(path)) if path is not None else None
        position = LspPosition(line=line, character=character) if path is not None and kind != "symbols" else None
        params = msgspec.to_builtins(LanguageQueryParams(kind=kind, uri=uri, position=position, query=query))
        return parse_query(kind, await self._request(LANGUAGE_QUERY, params))
