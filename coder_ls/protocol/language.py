"""The editor as the agent's eyes on the wire (contract section 23): two server → client
requests, answered by a client that declares them
(`initializationOptions.capabilities.diagnostics` / `.languageQuery`, or the experimental
`coderDiagnostics` / `coderLanguageQuery`).

- `coder/diagnostics {uris?}` → `[{uri, diagnostics: Diagnostic[]}]`: every language
  server's diagnostics the editor holds (only those of `uris` when given).
- `coder/languageQuery {kind, uri?, position?, query?}` → the plain LSP types: `Location[]`
  (definition, references), `SymbolInformation[]` (symbols), `Hover | null` (hover).

The answers are the client's, so they are parsed loosely (unknown keys kept out, never an
error) but typed: a value of the wrong shape is an answer the server refuses with a clear
error (`lsp/eyes.py`). Lines and characters are 0-based here, as in LSP. No struct here
holds a cycle: `gc=False` keeps 5,000 diagnostics out of the collector's way.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from coder_ls.protocol.base import Loose, Wire

QueryKind = Literal["definition", "references", "symbols", "hover"]


class LspPosition(Loose, gc=False):
    line: int
    character: int = 0


class LspRange(Loose, gc=False):
    start: LspPosition
    end: LspPosition | None = None


class LspDiagnostic(Loose, gc=False):
    range: LspRange
    message: str
    severity: int | None = None  # 1 error, 2 warning, 3 information, 4 hint
    source: str | None = None
    code: int | str | None = None


class FileDiagnostics(Loose, gc=False):
    """One document's diagnostics in the answer to `coder/diagnostics`."""

    uri: str
    diagnostics: list[LspDiagnostic] = msgspec.field(default_factory=list)


class LspLocation(Loose, gc=False):
    """`Location`, or the target part of a `LocationLink` (the client may send either)."""

    uri: str | None = None
    range: LspRange | None = None
    target_uri: str | None = None
    target_range: LspRange | None = None
    target_selection_range: LspRange | None = None


class SymbolInformation(Loose, gc=False):
    name: str
    location: LspLocation
    kind: int = 0
    container_name: str | None = None


class DiagnosticsParams(Wire, omit_defaults=True):
    """`coder/diagnostics` (server → client): every document's diagnostics, or `uris`' only."""

    uris: list[str] | None = None


class LanguageQueryParams(Wire, omit_defaults=True):
    """`coder/languageQuery` (server → client): definition, references and hover at
    `uri`/`position`; symbols: the workspace's matching `query`, or `uri`'s own when
    no query is given."""

    kind: QueryKind
    uri: str | None = None
    position: LspPosition | None = None
    query: str | None = None
