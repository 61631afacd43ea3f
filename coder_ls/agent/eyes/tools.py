"""The agent's eyes on the editor (contract section 23): `diagnostics`, and `definition`,
`references`, `symbols` from the editor's language servers, through `Host.eyes()`.

Offered only where the client declared `coder/diagnostics` or `coder/languageQuery`
(`tools_for` in `agent/runner.py`): another client's prompt does not grow. What the model
writes is a workspace path and a 1-based line, or a symbol's name; the position sent to
the editor is found on that line (the name's first occurrence). Every path in an answer
goes through `guard.PathGuard`, and a failing editor is a tool error, never a hung turn
(`lsp/eyes.py` bounds each request).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated

import msgspec

from coder_ls.agent.eyes.guard import PathGuard
from coder_ls.agent.eyes.show import capped, diagnostics_text, location_line, symbol_line
from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.engine.eyes import EditorError, EditorEyes, LanguageAnswer, QueryKind, Span
from coder_ls.saferead import read_line_range

MAX_LOCATIONS = 50


class DiagnosticsInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    path: Annotated[str, msgspec.Meta(description="File or folder")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=200)] = 50


class WhereInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    symbol: str
    path: str | None = None
    line: Annotated[int, msgspec.Meta(ge=1, description="1-based")] | None = None


class SymbolsInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    query: str


def _eyes(ctx: ToolContext, language: bool) -> EditorEyes:
    eyes = ctx.host.eyes()
    if eyes is None or not (eyes.language_declared if language else eyes.diagnostics_declared):
        raise ToolError("the editor does not answer this (it did not declare the capability)")
    return eyes


async def _ask(ctx: ToolContext, language: bool, kind: QueryKind, **kw: object) -> LanguageAnswer:
    try:
        return await _eyes(ctx, language).language_query(kind, **kw)  # type: ignore[arg-type]
    except EditorError as exc:
        raise ToolError(str(exc)) from None


def _column(ctx: ToolContext, inp: WhereInput, path: Path, open_text: str | None) -> tuple[int, int]:
    """(0-based line, character) of the symbol on the model's line, read as `read` reads
    (the editor's buffer when the file is open)."""
    assert inp.line is not None
    if open_text is not None:
        lines = open_text.splitlines()
        text = lines[inp.line - 1] if inp.line <= len(lines) else None
    else:
        got = read_line_range(path, inp.line, 1, max_scan_bytes=256 * 1024 * 1024)
        text = got.lines[0].decode("utf-8", errors="replace") if got and got.lines and not got.binary else None
    if text is None:
        raise ToolError(f"{ctx.rel(path)} has no line {inp.line}")
    m = re.search(rf"(?<![\w$]){re.escape(inp.symbol)}(?![\w$])", text) or re.search(re.escape(inp.symbol), text)
    if m is None:
        raise ToolError(f"{inp.symbol!r} is not on line {inp.line} of {ctx.rel(path)}")
    return inp.line - 1, len(text[: m.start()].encode("utf-16-le")) // 2  # LSP counts UTF-16 units


async def _named(ctx: ToolContext, name: str) -> list[Span]:
    """Where the workspace's symbols named exactly `name` (or `Container.name`) are defined."""
    answer = await _ask(ctx, True, "symbols", query=name.rsplit(".", 1)[-1])
    short = name.rsplit(".", 1)[-1]
    exact = [s for s in answer.symbols if s.name == short and (short == name or s.container == name.rsplit(".", 1)[0])]
    return [s.span for s in exact]


async def _positions(ctx: ToolContext, inp: WhereInput) -> list[tuple[str, int, int]]:
    if not inp.symbol.strip():
        raise ToolError("symbol is empty: name the function, class, ... to look for")
    if (inp.path is None) != (inp.line is None):
        raise ToolError("give both path and line, or neither (the symbol's name alone)")
    if inp.path is not None:
        path = ctx.resolve_read(inp.path)
        doc = ctx.host.open_document(path)
        line, col = await asyncio.to_thread(_column, ctx, inp, path, doc.text if doc is not None else None)
        return [(str(path), line, col)]
    spans = await _named(ctx, inp.symbol)
    if not spans:
        raise ToolError(f"no symbol named {inp.symbol!r} in the workspace (try symbols, or give path and line)")
    return [(s.path, s.line, s.character) for s in spans[:5]]


async def _locations_text(ctx: ToolContext, spans: list[Span], left_out: int, what: str) -> str:
    guard = PathGuard(ctx.root, ctx.config)
    unique = list(dict.fromkeys(spans))
    opened: dict[str, str | None] = {}
    for s in unique:
        doc = ctx.host.open_document(Path(s.path)) if guard.readable(s.path) else None
        opened[s.path] = doc.text if doc is not None else None
    lines = await asyncio.to_thread(lambda: [location_line(s, guard, opened[s.path]) for s in unique])
    return capped(lines, MAX_LOCATIONS, what, left_out)


def make_diagnostics_tool() -> Tool[DiagnosticsInput]:
    async def run(ctx: ToolContext, inp: DiagnosticsInput) -> ToolOutput:
        under = ctx.rel(ctx.resolve_read(inp.path)) if inp.path else None
        try:
            answer = await _eyes(ctx, False).diagnostics()
        except EditorError as exc:
            raise ToolError(str(exc)) from None
        guard = PathGuard(ctx.root, ctx.config)
        text = await asyncio.to_thread(diagnostics_text, answer, guard, under=under, limit=inp.limit)
        return ToolOutput(text)

    return Tool("diagnostics", "The editor's errors and warnings.", DiagnosticsInput, run)


def _where_tool(kind: QueryKind, description: str) -> Tool[WhereInput]:
    async def run(ctx: ToolContext, inp: WhereInput) -> ToolOutput:
        spans: list[Span] = []
        left_out = 0
        for path, line, col in await _positions(ctx, inp):
            if kind == "definition" and inp.path is None:
                spans.append(Span(path=path, line=line, character=col))  # the symbol's own place
                continue
            answer = await _ask(ctx, True, kind, path=Path(path), line=line, character=col)
            spans.extend(answer.locations)
            left_out += answer.left_out
        return ToolOutput(await _locations_text(ctx, spans, left_out, f"{kind} of {inp.symbol}"))

    return Tool(kind, description, WhereInput, run)


def make_symbols_tool() -> Tool[SymbolsInput]:
    async def run(ctx: ToolContext, inp: SymbolsInput) -> ToolOutput:
        if not inp.query.strip():
            raise ToolError("query is empty: give (part of) a symbol's name")
        answer = await _ask(ctx, True, "symbols", query=inp.query)
        guard = PathGuard(ctx.root, ctx.config)
        lines = await asyncio.to_thread(lambda: [symbol_line(s, guard) for s in answer.symbols])
        return ToolOutput(capped(lines, MAX_LOCATIONS, f"symbols matching {inp.query!r}", answer.left_out))

    return Tool("symbols", "Find symbols by name.", SymbolsInput, run)


def eye_tools(diagnostics: bool, language: bool) -> list[Tool[msgspec.Struct]]:
    """The tools for a client that declared `coder/diagnostics` and/or `coder/languageQuery`."""
    tools: list[Tool[msgspec.Struct]] = []
    if diagnostics:
        tools.append(make_diagnostics_tool())  # type: ignore[arg-type]
    if language:
        tools.append(_where_tool("definition", "Where a symbol is defined (by name, or path+line of a use)."))  # type: ignore[arg-type]
        tools.append(_where_tool("references", "Where a symbol is used (by name, or path+line of a use)."))  # type: ignore[arg-type]
        tools.append(make_symbols_tool())  # type: ignore[arg-type]
    return tools
