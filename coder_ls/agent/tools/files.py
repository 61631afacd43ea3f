"""The file tools: read, write, edit, multiEdit."""

from __future__ import annotations

from typing import Annotated

import msgspec

from coder_ls.agent.textedits import split_lines
from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.agent.tools.fileio import (
    ReadBytes,
    WriteText,
    atomic_write,
    commit_text,
    load_base,
    numbered,
    read_disk,
)

MAX_READ_BYTES = 256 * 1024
MAX_READ_LINES = 2000
SUMMARY_LINES = 40


class _Input(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    pass


PathArg = Annotated[str, msgspec.Meta(description="File path, relative to the workspace root")]


class ReadInput(_Input):
    """Read a text file, with line numbers."""

    path: PathArg
    offset: Annotated[int, msgspec.Meta(ge=1, description="First line to show (1-based)")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, description="How many lines to show")] | None = None


class WriteInput(_Input):
    """Create a file or replace its whole content."""

    path: PathArg
    content: Annotated[str, msgspec.Meta(description="The complete new content of the file")]


class EditSpec(_Input):
    old_string: Annotated[str, msgspec.Meta(description="Exact text to replace (unique unless replaceAll)")]
    new_string: Annotated[str, msgspec.Meta(description="The text to put in its place")]
    replace_all: Annotated[bool, msgspec.Meta(description="Replace every occurrence")] = False


class EditInput(_Input):
    """Replace exact text in a file."""

    path: PathArg
    old_string: Annotated[str, msgspec.Meta(description="Exact text to replace (unique unless replaceAll)")]
    new_string: Annotated[str, msgspec.Meta(description="The text to put in its place")]
    replace_all: Annotated[bool, msgspec.Meta(description="Replace every occurrence")] = False


class MultiEditInput(_Input):
    """Several exact replacements in one file, applied in order, all or nothing."""

    path: PathArg
    edits: Annotated[list[EditSpec], msgspec.Meta(min_length=1)]


# --- read ---------------------------------------------------------------------------------


def make_read_tool(read_bytes: ReadBytes = read_disk) -> Tool[ReadInput]:
    async def run(ctx: ToolContext, inp: ReadInput) -> ToolOutput:
        path = ctx.resolve(inp.path)
        rel = ctx.rel(path)
        note = ""
        doc = ctx.host.open_document(path)
        if doc is not None:
            text = doc.text
            size = len(text.encode("utf-8"))
            note = "(unsaved editor buffer)\n"
        else:
            if path.is_dir():
                raise ToolError(f"{rel} is a directory; use ls to list it")
            if not path.exists():
                raise ToolError(f"file not found: {rel}")
            data = read_bytes(path)
            size = len(data)
            if b"\x00" in data:
                return ToolOutput(f"{rel}: binary file ({size} bytes); not shown.")
            text = data.decode("utf-8", errors="replace")
        lines = split_lines(text)
        total = len(lines)
        if total == 0:
            return ToolOutput(f"{note}{rel}: (empty file)")
        ranged = inp.offset is not None or inp.limit is not None
        if not ranged and (size > MAX_READ_BYTES or total > MAX_READ_LINES):
            head = numbered(lines[:SUMMARY_LINES], 1, max_line=500)
            return ToolOutput(
                f"{note}{rel}: large file ({size} bytes, {total} lines); showing the first "
                f"{min(SUMMARY_LINES, total)} lines. Use offset and limit to read a range, "
                f"or grep to search it.\n{head}"
            )
        first = inp.offset or 1
        if first > total:
            raise ToolError(f"offset {first} is past the end of {rel} ({total} lines)")
        count = min(inp.limit or MAX_READ_LINES, MAX_READ_LINES)
        shown = lines[first - 1 : first - 1 + count]
        body = numbered(shown, first)
        last = first + len(shown) - 1
        footer = ""
        if first > 1 or last < total:
            footer = f"\n(lines {first}-{last} of {total}; use offset and limit to read more)"
        return ToolOutput(f"{note}{body}{footer}")

    return Tool(
        "read",
        "Read a file of the workspace. Each line comes as `number<TAB>text` (the numbers are "
        "not part of the file). Shows the editor's unsaved text when the file is open. Large "
        "files are summarised: pass offset/limit to read a range.",
        ReadInput,
        run,
    )


# --- write --------------------------------------------------------------------------------


def make_write_tool(
    write_text: WriteText = atomic_write, read_bytes: ReadBytes = read_disk
) -> Tool[WriteInput]:
    async def run(ctx: ToolContext, inp: WriteInput) -> ToolOutput:
        path = ctx.resolve(inp.path)
        rel = ctx.rel(path)
        base = load_base(ctx, path, read_bytes)
        content = inp.content
        if base.exists and "\r\n" in base.text and "\r\n" not in content:
            content = content.replace("\n", "\r\n")  # keep the file's CRLF line endings
        if base.exists and base.text == content:
            return ToolOutput(f"{rel} already has this content; nothing changed.")
        await commit_text(ctx, path, base, content, label=f"Write {rel}", write_text=write_text)
        verb = "Updated" if base.exists else "Created"
        return ToolOutput(f"{verb} {rel} ({len(split_lines(content))} lines).")

    return Tool(
        "write",
        "Create a file, or replace the whole content of one. Prefer edit for changes to an existing file.",
        WriteInput,
        run,
    )


# --- edit / multiEdit ---------------------------------------------------------------------


def replace_exact(text: str, spec: EditSpec | EditInput, rel: str) -> tuple[str, int]:
    """`text` with `spec` applied, and how many occurrences were replaced (or a ToolError)."""
    old, new = spec.old_string, spec.new_string
    if old == new:
        raise ToolError("oldString and newString are identical; there is nothing to change")
    if old == "":
        if text == "":
            return new, 1
        raise ToolError(
            f"oldString is empty but {rel} is not; give the exact text to replace, "
            "or use write to replace the whole file"
        )
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")  # CRLF file, LF input
        count = text.count(old)
    if count == 0:
        hint = ""
        if old.strip() and old.strip() in text:
            hint = " (it occurs when leading/trailing whitespace is ignored: check indentation)"
        raise ToolError(
            f"oldString was not found in {rel}{hint}. Read the file again and copy the exact "
            "text, including whitespace and indentation."
        )
    if count > 1 and not spec.replace_all:
        raise ToolError(
            f"oldString matches {count} times in {rel}; add more surrounding context to make "
            "it unique, or set replaceAll to replace every occurrence."
        )
    return text.replace(old, new), count


def _snippet(text: str, new_string: str, radius: int = 3) -> str:
    index = text.find(new_string) if new_string else -1
    if index < 0:
        return ""
    lines = split_lines(text)
    first = len(split_lines(text[:index] + "x")) - 1
    last = first + max(len(split_lines(new_string)), 1) - 1
    start, end = max(first - radius, 0), min(last + radius + 1, len(lines))
    if end - start > 30:
        return ""
    return "\n" + numbered(lines[start:end], start + 1)


def make_edit_tool(
    write_text: WriteText = atomic_write, read_bytes: ReadBytes = read_disk
) -> Tool[EditInput]:
    async def run(ctx: ToolContext, inp: EditInput) -> ToolOutput:
        path = ctx.resolve(inp.path)
        rel = ctx.rel(path)
        base = load_base(ctx, path, read_bytes)
        if not base.exists and inp.old_string != "":
            raise ToolError(f"file not found: {rel} (use write to create it)")
        new_text, count = replace_exact(base.text, inp, rel)
        await commit_text(ctx, path, base, new_text, label=f"Edit {rel}", write_text=write_text)
        noun = "occurrence" if count == 1 else "occurrences"
        return ToolOutput(f"Edited {rel}: replaced {count} {noun}.{_snippet(new_text, inp.new_string)}")

    return Tool(
        "edit",
        "Replace exact text in a file: oldString must match the file exactly (whitespace "
        "included) and only once, unless replaceAll is true. Read the file first.",
        EditInput,
        run,
    )


def make_multi_edit_tool(
    write_text: WriteText = atomic_write, read_bytes: ReadBytes = read_disk
) -> Tool[MultiEditInput]:
    async def run(ctx: ToolContext, inp: MultiEditInput) -> ToolOutput:
        path = ctx.resolve(inp.path)
        rel = ctx.rel(path)
        base = load_base(ctx, path, read_bytes)
        if not base.exists and inp.edits[0].old_string != "":
            raise ToolError(f"file not found: {rel} (use write to create it)")
        text = base.text
        total = 0
        for n, spec in enumerate(inp.edits, start=1):
            try:
                text, count = replace_exact(text, spec, rel)
            except ToolError as exc:
                raise ToolError(f"edit {n} of {len(inp.edits)} failed, nothing was changed: {exc}") from exc
            total += count
        if text == base.text:
            return ToolOutput(f"The edits leave {rel} unchanged; nothing was written.")
        await commit_text(ctx, path, base, text, label=f"Edit {rel}", write_text=write_text)
        return ToolOutput(f"Edited {rel}: {len(inp.edits)} edits, {total} replacements.")

    return Tool(
        "multiEdit",
        "Several exact replacements in one file, applied in order (each sees the result of "
        "the previous one). All or nothing: if one fails, the file is not changed.",
        MultiEditInput,
        run,
    )
