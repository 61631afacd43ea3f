"""An edit before it runs (contract section 15): the change a write/edit/multiEdit call
would make, computed from its input as the tool will compute it; the short unified diff the
approval question shows; and whether the call is asked as the edit itself (a client that
reviews edits in the editor). What the user then kept is `agent/review.py`'s.

Apart from `review.py` so that the tools' own module (`tools/fileio.py`, which hands an edit
under review to `review.commit_reviewed`) and the preview (which needs the tools' inputs and
their reading of the base text) never import each other in a circle.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from coder_ls.agent.textedits import split_lines
from coder_ls.engine.host import ClientCaps

if TYPE_CHECKING:
    from coder_ls.agent.tools.base import ToolContext

DIFF_LINES = 40
DIFF_WIDTH = 200  # a minified line is cut: the question stays readable
EDIT_TOOLS = frozenset({"write", "edit", "multiEdit"})


def _field(input: Any, name: str) -> Any:
    return input.get(name) if isinstance(input, dict) else getattr(input, name, None)


def edit_preview(ctx: ToolContext, tool: str, input: Any) -> tuple[Path, str, str, bool] | None:
    """(path, current text, intended new text, the file exists) of a write/edit/multiEdit
    call, computed as the tool will compute it; None when the call would fail anyway."""
    from coder_ls.agent.paths import PathError
    from coder_ls.agent.tools.base import Tool, ToolError
    from coder_ls.agent.tools.fileio import load_base
    from coder_ls.agent.tools.files import EditInput, MultiEditInput, WriteInput, replace_exact

    if tool not in EDIT_TOOLS:
        return None
    kinds: dict[str, type[msgspec.Struct]] = {"write": WriteInput, "edit": EditInput, "multiEdit": MultiEditInput}
    try:
        parsed: Any = Tool(tool, "", kinds[tool], _never).parse(input)
        path = ctx.resolve(parsed.path)
        rel = ctx.rel(path)
        base = load_base(ctx, path)
        if isinstance(parsed, WriteInput):
            new = parsed.content
            if base.exists and "\r\n" in base.text and "\r\n" not in new:
                new = new.replace("\n", "\r\n")
        elif isinstance(parsed, EditInput):
            new, _ = replace_exact(base.text, parsed, rel)
        else:
            new = base.text
            for spec in parsed.edits:
                new, _ = replace_exact(new, spec, rel)
    except (ToolError, PathError, OSError):
        return None
    return path, base.text, new, base.exists


async def _never(ctx: Any, inp: Any) -> Any:  # pragma: no cover - the parser only
    raise NotImplementedError


def unified_diff(old: str, new: str, rel: str, limit: int = DIFF_LINES) -> str:
    """`difflib.unified_diff` of old vs new, the first `limit` lines (and how many more)."""
    lines = list(
        difflib.unified_diff(split_lines(old), split_lines(new), fromfile=f"a/{rel}", tofile=f"b/{rel}", lineterm="")
    )
    if len(lines) > limit:
        more = len(lines) - limit
        lines = [*lines[:limit], f"… ({more} more diff lines)"]
    return "\n".join(line if len(line) <= DIFF_WIDTH else line[:DIFF_WIDTH] + "…" for line in lines)


def question_diff(ctx: ToolContext, tool: str, input: Any) -> str:
    """The diff the approval question shows for an edit ("" for other tools)."""
    preview = edit_preview(ctx, tool, input)
    if preview is None:
        return ""
    path, old, new, _ = preview
    if old == new:
        return ""
    return unified_diff(old, new, ctx.rel(path))


def reviews_in_editor(caps: ClientCaps) -> bool:
    """The client can show an edit for review (needsConfirmation change annotations)."""
    return caps.change_annotations and caps.apply_edit and caps.document_changes


def review_call(ctx: ToolContext, tool: str, input: Any) -> bool:
    """Whether this `ask` call is asked as the edit itself (no question first)."""
    if tool not in EDIT_TOOLS or not reviews_in_editor(ctx.host.caps):
        return False
    preview = edit_preview(ctx, tool, input)
    if preview is None:
        return True  # the tool fails before any edit: nothing to ask
    _, _, _, exists = preview
    return exists or ctx.host.caps.resource_create
