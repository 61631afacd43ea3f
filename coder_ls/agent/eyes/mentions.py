"""`@diagnostics` / `@problems` and `@#Symbol` in the input (contract section 23): what the
editor's language servers know, attached with the turn's text by the one resolver of `@`
references (`agent/references.py`), in its syntax (outside fenced code, trailing
punctuation tried off).

Only where the client declared the request: elsewhere these stay text, as any `@` that
names nothing does. `@#Symbol` is the workspace's symbols query, then the definition's
range read through the same checks as any read (`guard.PathGuard.readable`: the
workspace, the rules, never a protected path); a one-line range (a language server that
gives the name only) grows over the lines indented under it. Each attachment is cut at
`input.maxAttachmentBytes`; a failing editor is a note, never a failed turn.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from coder_ls.agent.eyes.guard import PathGuard
from coder_ls.agent.eyes.show import diagnostics_text
from coder_ls.engine.eyes import EditorError, EditorEyes, EditorSymbol
from coder_ls.engine.host import Host
from coder_ls.protocol.config import Config
from coder_ls.protocol.messages import TextBlock
from coder_ls.saferead import read_line_range

if TYPE_CHECKING:
    from coder_ls.agent.references import Attachments

PROBLEMS = frozenset({"diagnostics", "problems"})
MAX_ATTACHED_DIAGNOSTICS = 100
MAX_SYMBOL_LINES = 400
TRAILING = ".,;:!?)]}'\"`"


def wanted(tokens: list[str]) -> tuple[bool, list[str]]:
    """(whether the diagnostics are asked for, the symbol names asked for), in order."""
    problems = False
    symbols: list[str] = []
    for token in tokens:
        name = token.rstrip(TRAILING)
        if name in PROBLEMS:
            problems = True
        elif name.startswith("#") and len(name) > 1 and name[1:] not in symbols:
            symbols.append(name[1:])
    return problems, symbols


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block(lines: list[str], first: int, last: int) -> tuple[int, int]:
    """(first, last) 0-based: the range, or from a one-line range the lines under it."""
    if last > first or first >= len(lines):
        return first, min(last, len(lines) - 1)
    base = _indent(lines[first])
    end = first
    for i in range(first + 1, min(len(lines), first + MAX_SYMBOL_LINES)):
        if lines[i].strip() and _indent(lines[i]) <= base:
            if lines[i].strip()[0] in ")]}":
                end = i  # a closing bracket at the opening's indentation ends the block
            break
        if lines[i].strip():
            end = i
    return first, end


def _source(path: Path, open_text: str | None, symbol: EditorSymbol) -> tuple[int, str] | None:
    if open_text is not None:
        lines = open_text.splitlines()
    else:
        got = read_line_range(path, 1, 10**9, max_scan_bytes=16 * 1024 * 1024)
        if got is None or got.binary:
            return None
        lines = [line.decode("utf-8", errors="replace") for line in got.lines]
    span = symbol.span
    first, last = _block(lines, span.line, span.end_line if span.end_line is not None else span.line)
    if first >= len(lines):
        return None
    return first + 1, "\n".join(lines[first : last + 1])


async def _symbol(eyes: EditorEyes, guard: PathGuard, host: Host, name: str, limit: int, out: Attachments) -> None:
    try:
        answer = await eyes.language_query("symbols", query=name.rsplit(".", 1)[-1])
    except EditorError as exc:
        out.notes.append(f"@#{name} was not attached: {exc}")
        return
    short = name.rsplit(".", 1)[-1]
    exact = [s for s in answer.symbols if s.name == short and (short == name or s.container == name.rsplit(".", 1)[0])]
    readable = [(s, p) for s in exact if (p := await asyncio.to_thread(guard.readable, s.span.path)) is not None]
    if not readable:
        why = "no symbol of that name" if not exact else "its file is outside the workspace or not readable"
        out.notes.append(f"@#{name} was not attached: {why}")
        return
    symbol, path = readable[0]
    doc = host.open_document(path)
    got = await asyncio.to_thread(_source, path, doc.text if doc is not None else None, symbol)
    rel = guard.shown(symbol.span.path)
    if got is None or rel is None:
        out.notes.append(f"@#{name} was not attached: its source could not be read")
        return
    start, text = got
    data = text.encode("utf-8")
    cut = len(data) > limit
    body = data[:limit].decode("utf-8", errors="ignore") if cut else text
    end = start + body.count("\n")
    others = f"\n[{len(readable) - 1} more symbols named {name}: use the symbols tool]" if len(readable) > 1 else ""
    note = f"\n[cut at {limit} bytes (input.maxAttachmentBytes)]" if cut else ""
    out.blocks.append(TextBlock(text=f"(Attached: {name}, {rel} lines {start}-{end})\n```\n{body}\n```{note}{others}"))
    out.names.append(f"#{name} ({rel}:{start})")


async def attach_editor(root: Path, config: Config, host: Host, tokens: list[str], out: Attachments) -> None:
    """Add what `@diagnostics`, `@problems` and `@#Symbol` among `tokens` ask for to `out`."""
    problems, symbols = wanted(tokens)
    eyes = host.eyes() if problems or symbols else None
    if eyes is None:
        return
    guard = PathGuard(root, config)
    limit = config.input.max_attachment_bytes
    if problems and eyes.diagnostics_declared:
        try:
            answer = await eyes.diagnostics()
        except EditorError as exc:
            out.notes.append(f"@diagnostics was not attached: {exc}")
        else:
            text = await asyncio.to_thread(diagnostics_text, answer, guard, under=None, limit=MAX_ATTACHED_DIAGNOSTICS)
            body = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
            out.blocks.append(TextBlock(text=f"(Attached: the editor's diagnostics)\n{body}"))
            out.names.append("diagnostics")
    if eyes.language_declared:
        for name in symbols:
            await _symbol(eyes, guard, host, name, limit, out)
