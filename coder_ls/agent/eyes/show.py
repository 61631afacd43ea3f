"""The editor's answers as the model reads them: compact lines, workspace-relative paths,
1-based lines and columns, capped, with what was left out counted (contract section 23).

`path:line:col: severity: message [source code]` for a diagnostic (the message's first line,
cut at `MAX_MESSAGE`); `path:line:col: text of that line` for a location, the text only
where the guard lets it be read (`guard.PathGuard.readable`).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from coder_ls.agent.eyes.guard import PathGuard
from coder_ls.engine.eyes import DiagnosticsAnswer, EditorDiagnostic, EditorSymbol, Span

MAX_MESSAGE = 240
MAX_FILES_LISTED = 20
SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}
SYMBOL_KINDS = {
    1: "file", 2: "module", 3: "namespace", 4: "package", 5: "class", 6: "method", 7: "property", 8: "field",
    9: "constructor", 10: "enum", 11: "interface", 12: "function", 13: "variable", 14: "constant", 15: "string",
    16: "number", 17: "boolean", 18: "array", 19: "object", 20: "key", 21: "null", 22: "enum member",
    23: "struct", 24: "event", 25: "operator", 26: "type parameter",
}  # fmt: skip


def first_line(message: str) -> str:
    line = message.strip().split("\n", 1)[0].rstrip()
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…"


def _severity(d: EditorDiagnostic) -> int:
    return d.severity if d.severity in SEVERITY else 1  # none given: the client shows an error


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def diagnostics_text(answer: DiagnosticsAnswer, guard: PathGuard, *, under: str | None, limit: int) -> str:
    """The diagnostics (those of files at or under `under`), errors first, at most `limit`
    lines, and what was left out and why."""
    kept: list[tuple[int, str, int, int, int]] = []  # (severity, path, line, column, index)
    refused = answer.left_out
    prefix = under.rstrip("/") + "/" if under and under != "." else None
    for i, d in enumerate(answer.diagnostics):
        rel = guard.shown(d.span.path)
        if rel is None:
            refused += 1
            continue
        if prefix is not None and rel != under and not rel.startswith(prefix):
            continue
        kept.append((_severity(d), rel, d.span.line, d.span.character, i))
    if not kept:
        where = f" in {under}" if under else ""
        out = f"No diagnostics{where} (the editor reported on {_plural(len(answer.files), 'file')})."
        return out + (f"\n[{refused} left out: outside the workspace or not readable]" if refused else "")
    counts = Counter(SEVERITY[k[0]] for k in kept)
    per_file = Counter(k[1] for k in kept)
    first = heapq.nsmallest(limit, kept)  # errors first, then by path and place
    summary = ", ".join(_plural(counts[s], s) for s in SEVERITY.values() if counts[s])
    lines = [f"{_plural(len(kept), 'diagnostic')} ({summary}) in {_plural(len(per_file), 'file')}:"]
    if len(per_file) > 1:
        listed = ", ".join(f"{f} {n}" for f, n in sorted(per_file.items())[:MAX_FILES_LISTED])
        more = f", and {len(per_file) - MAX_FILES_LISTED} more files" if len(per_file) > MAX_FILES_LISTED else ""
        lines.append(f"by file: {listed}{more}")
    for sev, rel, line, col, i in first:
        d = answer.diagnostics[i]
        tag = " ".join(t for t in (d.source, d.code) if t)
        lines.append(
            f"{rel}:{line + 1}:{col + 1}: {SEVERITY[sev]}: {first_line(d.message)}{f' [{tag}]' if tag else ''}"
        )
    if len(kept) > limit:
        lines.append(f"[{len(kept) - limit} more left out: pass path, or limit (at most 200), to see them]")
    if refused:
        lines.append(f"[{refused} left out: outside the workspace or not readable]")
    return "\n".join(lines)


def _line_text(path: Path, line: int, open_text: str | None) -> str | None:
    from coder_ls.saferead import read_line_range

    if open_text is not None:
        lines = open_text.splitlines()
        return lines[line] if 0 <= line < len(lines) else None
    got = read_line_range(path, line + 1, 1, max_scan_bytes=64 * 1024 * 1024)
    if got is None or got.binary or not got.lines:
        return None
    return got.lines[0].decode("utf-8", errors="replace")


def location_line(span: Span, guard: PathGuard, open_text: str | None = None) -> str | None:
    """`path:line:col: text` (the text where it may be read), or None: left out."""
    rel = guard.shown(span.path)
    if rel is None:
        return None
    head = f"{rel}:{span.line + 1}:{span.character + 1}"
    path = guard.readable(span.path)
    text = _line_text(path, span.line, open_text) if path is not None else None
    return f"{head}: {first_line(text)}" if text and text.strip() else head


def symbol_line(symbol: EditorSymbol, guard: PathGuard) -> str | None:
    rel = guard.shown(symbol.span.path)
    if rel is None:
        return None
    kind = SYMBOL_KINDS.get(symbol.kind, "symbol")
    inside = f" (in {symbol.container})" if symbol.container else ""
    return f"{rel}:{symbol.span.line + 1}: {kind} {symbol.name}{inside}"


def capped(lines: Sequence[str | None], limit: int, what: str, extra_left_out: int = 0) -> str:
    """Lines that survived the guard, at most `limit`, then what was left out."""
    shown = [line for line in lines if line is not None]
    refused = len(lines) - len(shown) + extra_left_out
    out = shown[:limit]
    if not shown:
        out = [f"No {what} found."]
    if len(shown) > limit:
        out.append(f"[{len(shown) - limit} more left out]")
    if refused:
        out.append(f"[{refused} left out: outside the workspace or not readable]")
    return "\n".join(out)
