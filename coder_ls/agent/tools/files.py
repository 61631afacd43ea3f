"""The file tools: read, write, edit, multiEdit."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import msgspec

from coder_ls.agent.textedits import split_lines
from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.agent.tools.fileio import (
    BaseText,
    ReadBytes,
    WriteText,
    atomic_write,
    base_to_write,
    commit_text,
    numbered,
    read_disk,
)
from coder_ls.agent.tools.readimage import read_image
from coder_ls.agent.tools.unsaved import NOTE as UNSAVED_NOTE
from coder_ls.agent.tools.unsaved import unsaved_buffer
from coder_ls.saferead import TooLarge, UnreadableFile, open_regular, read_line_range, read_regular_file

MAX_READ_BYTES = 256 * 1024
MAX_READ_LINES = 2000
SUMMARY_LINES = 40
MAX_SCAN_BYTES = 256 * 1024 * 1024  # how far a ranged read of a large file goes to find its lines


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


def _summary(note: str, rel: str, size: int, total: int | None, lines: list[str]) -> ToolOutput:
    counted = f", {total} lines" if total is not None else ""
    head = numbered(lines[:SUMMARY_LINES], 1, max_line=500)
    return ToolOutput(
        f"{note}{rel}: large file ({size} bytes{counted}); showing the first "
        f"{min(SUMMARY_LINES, len(lines))} lines. Use offset and limit to read a range, "
        f"or grep to search it.\n{head}"
    )


def _shown(note: str, rel: str, lines: list[str], first: int, total: int | None) -> ToolOutput:
    body = numbered(lines, first)
    last = first + len(lines) - 1
    footer = ""
    if first > 1 or total is None or last < total:
        of = f" of {total}" if total is not None else ""
        footer = f"\n(lines {first}-{last}{of}; use offset and limit to read more)"
    return ToolOutput(f"{note}{body}{footer}")


def _read_large(rel: str, path: Path, inp: ReadInput) -> ToolOutput:
    """A file over MAX_READ_BYTES, streamed (`saferead.read_line_range`): only the lines
    shown are kept, and reading stops once they are read (a 2 GB file read for five lines
    reads one chunk)."""
    ranged = inp.offset is not None or inp.limit is not None
    first = inp.offset or 1
    count = min(inp.limit or MAX_READ_LINES, MAX_READ_LINES) if ranged else SUMMARY_LINES
    got = read_line_range(path, first, count, max_scan_bytes=MAX_SCAN_BYTES)
    if got is None:
        raise ToolError(f"file not found: {rel}")
    if got.binary:
        return ToolOutput(f"{rel}: binary file ({got.size} bytes); not shown.")
    lines = [line.decode("utf-8", errors="replace") for line in got.lines]
    if not ranged:
        return _summary("", rel, got.size, got.total, lines)
    if not lines:
        if got.total is not None:
            raise ToolError(f"offset {first} is past the end of {rel} ({got.total} lines)")
        raise ToolError(
            f"offset {first} is beyond the first {MAX_SCAN_BYTES} bytes of {rel}, which is as far "
            "as read goes; use grep or bash (tail, sed -n) to reach it"
        )
    return _shown("", rel, lines, first, got.total)


def _read_disk(rel: str, path: Path, inp: ReadInput) -> ToolOutput:
    """The read tool on a file on disk; blocking (run in a worker thread). Only a regular
    file is read (`coder_ls.saferead`): a FIFO or a device is refused, never waited on."""
    try:
        opened = open_regular(path)
        if opened is None:
            raise ToolError(f"file not found: {rel}")
        os.close(opened[0])
        if opened[1].st_size > MAX_READ_BYTES:
            return _read_large(rel, path, inp)
        data = read_regular_file(path, MAX_READ_BYTES)
    except TooLarge:  # it grew since the fstat
        return _read_large(rel, path, inp)
    except UnreadableFile as exc:
        if path.is_dir():
            raise ToolError(f"{rel} is a directory; use ls to list it") from None
        raise ToolError(f"{rel}: {exc}") from None
    if data is None:
        raise ToolError(f"file not found: {rel}")
    if b"\x00" in data:
        return ToolOutput(f"{rel}: binary file ({len(data)} bytes); not shown.")
    return _read_text("", rel, data.decode("utf-8", errors="replace"), len(data), inp)


def _read_text(note: str, rel: str, text: str, size: int, inp: ReadInput) -> ToolOutput:
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return ToolOutput(f"{note}{rel}: (empty file)")
    ranged = inp.offset is not None or inp.limit is not None
    if not ranged and (size > MAX_READ_BYTES or total > MAX_READ_LINES):
        return _summary(note, rel, size, total, lines)
    first = inp.offset or 1
    if first > total:
        raise ToolError(f"offset {first} is past the end of {rel} ({total} lines)")
    count = min(inp.limit or MAX_READ_LINES, MAX_READ_LINES)
    return _shown(note, rel, lines[first - 1 : first - 1 + count], first, total)


def make_read_tool() -> Tool[ReadInput]:
    async def run(ctx: ToolContext, inp: ReadInput) -> ToolOutput:
        path = ctx.resolve_read(inp.path)
        rel = ctx.rel(path)
        doc = await asyncio.to_thread(unsaved_buffer, ctx.host, path)  # one equal to the disk is the file
        if doc is not None:
            size = len(doc.text.encode("utf-8", "surrogatepass"))
            shown = _read_text(f"{UNSAVED_NOTE}\n", rel, doc.text, size, inp)
            return msgspec.structs.replace(shown, unsaved=True)
        if (image := await asyncio.to_thread(read_image, ctx.root, rel, path)) is not None:
            return image
        # Off the event loop: a slow disk (or a huge file) never holds /help or an interrupt.
        return await asyncio.to_thread(_read_disk, rel, path, inp)

    return Tool(
        "read",
        "Read a file of the workspace. Each line comes as `number<TAB>text` (the numbers are "
        "not part of the file). Shows the editor's unsaved text when the file is open. Large "
        "files are summarised: pass offset/limit to read a range. An image (PNG, JPEG, GIF, "
        "WebP) is shown to you as the image.",
        ReadInput,
        run,
    )


# --- write --------------------------------------------------------------------------------


def make_write_tool(write_text: WriteText = atomic_write, read_bytes: ReadBytes = read_disk) -> Tool[WriteInput]:
    async def run(ctx: ToolContext, inp: WriteInput) -> ToolOutput:
        path = ctx.resolve(inp.path)
        rel = ctx.rel(path)
        base = await base_to_write(ctx, path, read_bytes)
        content = inp.content
        if base.exists and "\r\n" in base.text and "\r\n" not in content:
            content = content.replace("\n", "\r\n")  # keep the file's CRLF line endings
        if base.exists and base.text == content:
            return ToolOutput(f"{rel} already has this content; nothing changed.")
        await commit_text(ctx, path, base, content, label=f"Write {rel}", write_text=write_text)
        verb = "Updated" if base.exists else "Created"
        return _said(base, f"{verb} {rel} ({len(split_lines(content))} lines).")

    return Tool(
        "write",
        "Create a file, or replace the whole content of one. Prefer edit for changes to an existing file.",
        WriteInput,
        run,
    )


def _said(base: BaseText, text: str) -> ToolOutput:
    """A write's answer; when it went into an editor buffer with unsaved changes, saying so
    (the disk keeps its text until the user saves)."""
    if not base.unsaved:
        return ToolOutput(text)
    return ToolOutput(f"{text}\n{UNSAVED_NOTE[:-1]}; the edit is in the buffer, the disk is unchanged)", unsaved=True)


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


def make_edit_tool(write_text: WriteText = atomic_write, read_bytes: ReadBytes = read_disk) -> Tool[EditInput]:
    async def run(ctx: ToolContext, inp: EditInput) -> ToolOutput:
        path = ctx.resolve(inp.path)
        rel = ctx.rel(path)
        base = await base_to_write(ctx, path, read_bytes)
        if not base.exists and inp.old_string != "":
            raise ToolError(f"file not found: {rel} (use write to create it)")
        new_text, count = replace_exact(base.text, inp, rel)
        await commit_text(ctx, path, base, new_text, label=f"Edit {rel}", write_text=write_text)
        noun = "occurrence" if count == 1 else "occurrences"
        return _said(base, f"Edited {rel}: replaced {count} {noun}.{_snippet(new_text, inp.new_string)}")

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
        base = await base_to_write(ctx, path, read_bytes)
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
        return _said(base, f"Edited {rel}: {len(inp.edits)} edits, {total} replacements.")

    return Tool(
        "multiEdit",
        "Several exact replacements in one file, applied in order (each sees the result of "
        "the previous one). All or nothing: if one fails, the file is not changed.",
        MultiEditInput,
        run,
    )
