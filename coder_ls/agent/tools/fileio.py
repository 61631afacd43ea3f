"""Reading the text a tool works on, and the one write path of write/edit/multiEdit.

The base text is the editor's buffer when the document is open (with its version),
else the file on disk. A change goes to the editor as a `workspace/applyEdit`
(`EditRequest`) when the client can apply edits; otherwise the file is written
atomically on disk (a temp file in the same directory, then `os.replace`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import msgspec

from coder_ls.agent.textedits import minimal_edits
from coder_ls.agent.tools.base import ToolContext, ToolError
from coder_ls.attribution.agentlines import key_of
from coder_ls.fsutil import write_atomic
from coder_ls.protocol.edits import EditOutcome, EditRequest, FileChange
from coder_ls.protocol.events import EditApplied
from coder_ls.saferead import UnreadableFile, read_regular_file, read_text_or_none

ReadBytes = Callable[[Path], bytes]
WriteText = Callable[[Path, str, Path], None]  # path, text, the root that bounds the write


class BaseText(msgspec.Struct, frozen=True):
    """The text a change is computed against."""

    text: str
    version: int | None = None
    exists: bool = True
    from_buffer: bool = False
    unsaved: bool = False  # the buffer differs from the disk (`agent/tools/unsaved.py`)


MAX_EDIT_BYTES = 16 * 1024 * 1024


def read_disk(path: Path) -> bytes:
    """The bytes of the regular file at `path` (`coder_ls.saferead`: a FIFO or a device is
    refused, never waited on; at most MAX_EDIT_BYTES)."""
    try:
        data = read_regular_file(path, MAX_EDIT_BYTES)
    except UnreadableFile as exc:
        raise ToolError(f"{path.name}: {exc}") from None
    if data is None:
        raise FileNotFoundError(path)
    return data


def load_base(ctx: ToolContext, path: Path, read_bytes: ReadBytes = read_disk) -> BaseText:
    """The open buffer of `path`, else its text on disk, else an empty "new file"."""
    doc = ctx.host.open_document(path)
    if doc is not None:
        size = len(doc.text.encode("utf-8", "surrogatepass"))
        if size > MAX_EDIT_BYTES:  # capped like a file on disk
            raise ToolError(
                f"{ctx.rel(path)}: its editor buffer is too large to edit ({size} bytes; at most {MAX_EDIT_BYTES})"
            )
        unsaved = read_text_or_none(path, size + 1) != doc.text
        if unsaved and not ctx.host.caps.apply_edit:  # never written over on disk
            raise ToolError(
                f"{ctx.rel(path)} has unsaved changes in the editor, and this editor cannot take the "
                "edit into its buffer (no workspace/applyEdit): ask the user to save or close it first"
            )
        return BaseText(doc.text, doc.version, exists=True, from_buffer=True, unsaved=unsaved)
    if path.is_dir():
        raise ToolError(f"{ctx.rel(path)} is a directory")
    if not path.exists():
        return BaseText("", None, exists=False)
    data = read_bytes(path)
    if b"\x00" in data[:8192]:
        raise ToolError(f"{ctx.rel(path)} is a binary file; it cannot be edited as text")
    try:
        return BaseText(data.decode("utf-8"), None, exists=True)
    except UnicodeDecodeError as exc:
        raise ToolError(f"{ctx.rel(path)} is not UTF-8 text; it cannot be edited as text") from exc


async def base_to_write(ctx: ToolContext, path: Path, read_bytes: ReadBytes = read_disk) -> BaseText:
    """`load_base` for a tool about to write `path`. A protected path (which the user has just
    approved: the policy always asks) is held in the agent's sandbox by a read-only mount, or
    by an empty placeholder folder when it does not exist (`guard/pins.py`); the server's own
    write would undo that hold under a living sandbox, and a placeholder is in the way of a
    new file. So the agent's shell is put away first (its jobs end; the next command starts a
    new shell with its cwd and exports)."""
    if _protected(path, ctx.root):
        put_away = getattr(ctx.shell, "put_away", None)
        if put_away is not None:
            await put_away()
    return load_base(ctx, path, read_bytes)


def _protected(path: Path, root: Path) -> bool:
    from coder_ls.guard.protected import protected_reason_for

    real, real_root = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return bool(protected_reason_for(path, root) or protected_reason_for(real, real_root))


def atomic_write(path: Path, text: str, root: Path) -> None:
    """Write `text` (UTF-8, line endings as given) so readers see the old or the new file,
    and never outside `root` even if a folder on the way is swapped for a symlink meanwhile
    (`fsutil.write_atomic`, the project's one atomic write)."""
    write_atomic(path, text.encode("utf-8"), root=root)


def build_change(path: Path, base: BaseText, new_text: str) -> FileChange:
    if not base.exists:
        return FileChange(path=str(path), kind="create", new_text=new_text)
    return FileChange(
        path=str(path),
        kind="edit",
        new_text=new_text,
        edits=minimal_edits(base.text, new_text),
        base_version=base.version,
    )


async def commit_text(
    ctx: ToolContext,
    path: Path,
    base: BaseText,
    new_text: str,
    *,
    label: str,
    write_text: WriteText = atomic_write,
) -> FileChange:
    """Send the change from `base` to `new_text` to the editor (or the disk).

    Emits `EditApplied`, reports "Editing <path>", records the path in
    `ctx.changed_paths`. A rejected edit raises `ToolError("the user rejected the edit: ...")`.
    """
    rel = ctx.rel(path)
    change = build_change(path, base, new_text)
    ctx.report(f"Editing {rel}")
    if ctx.review_edit is not None and ctx.host.caps.apply_edit:
        from coder_ls.agent.review import commit_reviewed  # the edit is the approval question

        await commit_reviewed(ctx, path, base.text, change, ctx.review_edit)
        return change
    lines, key = ctx.agent_lines, key_of(path)
    if lines is not None:
        lines.expect(key, new_text)  # the editor's echo of this edit is not the user's typing
    try:
        if ctx.host.caps.apply_edit:
            outcome = await ctx.host.apply_edit(EditRequest(label=label, changes=(change,), root=str(ctx.write_root)))
        else:
            try:
                await asyncio.to_thread(write_text, path, new_text, ctx.write_root)
            except OSError as exc:
                raise ToolError(f"could not write {rel}: {exc}") from exc
            outcome = EditOutcome(applied=True, written_to_disk=True)
    finally:
        if lines is not None:
            lines.unexpect(key)
    uri = path.as_uri()
    if lines is not None and outcome.applied:
        lines.wrote(key, rel, base.text, new_text, ctx.submission_id, ctx.subagent)
    if not outcome.applied:
        reason = outcome.reason or "no reason given"
        ctx.emit(EditApplied(uri=uri, applied=False, reason=outcome.reason))
        if outcome.failed:  # not the user's answer: e.g. a folder on the way became a link out
            raise ToolError(f"could not write {rel}: {reason}")
        raise ToolError(f"the user rejected the edit: {reason}")
    ctx.emit(EditApplied(uri=uri, applied=True, on_disk=outcome.written_to_disk))
    ctx.changed_paths.add(str(path))
    return change


def numbered(lines: list[str], first: int, max_line: int = 2000) -> str:
    """1-based line numbers, a tab, the line (long ones cut). No padding: the tab already
    separates the number, and `cat -n`'s six columns cost ~5 characters a line."""
    out = []
    for n, line in enumerate(lines, start=first):
        if len(line) > max_line:
            line = line[:max_line] + f"… [{len(line) - max_line} more characters]"
        out.append(f"{n}\t{line}")
    return "\n".join(out)
