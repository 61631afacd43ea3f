"""What a code action asks the agent: the selection, the file and the diagnostics."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import msgspec

from coder_ls.engine.host import Host
from coder_ls.protocol.args import SelectionContext
from coder_ls.protocol.ops import CodeAction

ASKS = {
    "fix": "Fix the problem(s) in the selected code. Make the smallest correct change with the edit tools.",
    "explain": "Explain what the selected code does, briefly and precisely. Do not change any file.",
    "refactor": "Refactor the selected code to be clearer without changing its behaviour.",
    "tests": "Write tests for the selected code, following the project's existing test layout and style.",
}


class CodeActionPrompt(msgspec.Struct, frozen=True):
    text: str
    context: SelectionContext


def path_of(uri: str) -> Path:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else Path(uri)


MAX_SOURCE_BYTES = 4 * 1024 * 1024


def _read_source(path: Path) -> str:
    """A file that is not open in the editor: only a regular one (a FIFO at the URI would
    block the server), capped in size; anything else reads as empty."""
    from coder_ls.saferead import UnreadableFile, read_regular_file

    try:
        data = read_regular_file(path, MAX_SOURCE_BYTES)
    except UnreadableFile:
        return ""
    return data.decode("utf-8", errors="replace") if data else ""


def code_action_prompt(op: CodeAction, root: Path, host: Host) -> CodeActionPrompt:
    path = path_of(op.uri)
    doc = host.open_document(path)
    text = doc.text if doc is not None else _read_source(path)
    lines = text.splitlines()
    start, end = op.range.start.line, op.range.end.line
    if op.range.end.character == 0 and end > start:
        end -= 1
    selected = "\n".join(lines[start : end + 1])
    try:
        rel = str(path.relative_to(root))
    except ValueError:
        rel = str(path)
    parts = [ASKS.get(op.action, ASKS["fix"])]
    if op.instruction:
        parts.append(f"Instruction: {op.instruction}")
    parts.append(f"File: {rel} (lines {start + 1}-{end + 1})")
    if op.diagnostics:
        parts.append("Diagnostics:")
        for d in op.diagnostics:
            src = f" [{d.source}]" if d.source else ""
            parts.append(f"- line {d.range.start.line + 1}: {d.message}{src}")
    parts.append(f"Selected code:\n```\n{selected}\n```")
    return CodeActionPrompt(text="\n".join(parts), context=SelectionContext(uri=op.uri, range=op.range))
