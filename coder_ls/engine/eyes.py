"""What the engine and the agent get from the editor's language servers (contract section
23): diagnostics, definitions, references, symbols, hover. The LSP edge implements
`EditorEyes` over `coder/diagnostics` and `coder/languageQuery` (`lsp/eyes.py`); a host
whose client declared neither returns None from `Host.eyes()`.

No URI comes in here: the edge turns each into a path and leaves out what is no file. The
paths are the client's, so nothing here trusts them: the agent's guards
(`agent/eyes/guard.py`) decide what the model may see of each. Lines and characters are
0-based, as the editor sends them; the agent shows them 1-based.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

import msgspec

QueryKind = Literal["definition", "references", "symbols", "hover"]
ANSWER_TIMEOUT_SECONDS = 5.0  # how long the editor may take to answer one request


class EditorError(Exception):
    """The editor did not answer usefully: an error, no answer in time, or garbage."""


class Span(msgspec.Struct, frozen=True, gc=False):
    path: str  # absolute, as the editor named it (never trusted: `agent/eyes/guard.py`)
    line: int
    character: int = 0
    end_line: int | None = None
    end_character: int | None = None


class EditorDiagnostic(msgspec.Struct, frozen=True, gc=False):
    span: Span
    message: str
    severity: int | None = None  # 1 error, 2 warning, 3 information, 4 hint (LSP's)
    source: str | None = None
    code: str | None = None


class EditorSymbol(msgspec.Struct, frozen=True, gc=False):
    name: str
    span: Span
    kind: int = 0
    container: str | None = None


class LanguageAnswer(msgspec.Struct, frozen=True):
    """What `coder/languageQuery` answered: locations (definition, references), symbols, or a
    hover's text (None: no hover). `left_out` counts what named no file (another scheme)."""

    locations: tuple[Span, ...] = ()
    symbols: tuple[EditorSymbol, ...] = ()
    hover: str | None = None
    left_out: int = 0


class DiagnosticsAnswer(msgspec.Struct, frozen=True):
    diagnostics: tuple[EditorDiagnostic, ...] = ()
    files: tuple[str, ...] = ()  # every file the editor reported on, with diagnostics or not
    left_out: int = 0  # diagnostics of documents that are no file (an untitled buffer, ...)


class EditorEyes(Protocol):
    @property
    def diagnostics_declared(self) -> bool: ...

    @property
    def language_declared(self) -> bool: ...

    async def diagnostics(self, paths: Sequence[Path] | None = None) -> DiagnosticsAnswer:
        """Every diagnostic the editor holds (only `paths`' when given). Raises EditorError."""
        ...

    async def language_query(
        self, kind: QueryKind, path: Path | None = None, line: int = 0, character: int = 0, query: str | None = None
    ) -> LanguageAnswer:
        """Definition, references or hover at `path`:`line`:`character` (0-based); symbols
        matching `query` (or `path`'s own). Raises EditorError."""
        ...
