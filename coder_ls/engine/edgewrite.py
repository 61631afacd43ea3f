"""The disk side of an edit an edge applies (LSP `workspace/applyEdit`, ACP
`fs/write_text_file`), bounded by the workspace root the `EditRequest` names.

The server's own write is the project's one atomic write (`fsutil.write_atomic`): each folder
opened with `O_NOFOLLOW` from the root's descriptor, the temporary created and renamed in the
last folder's descriptor, so a folder swapped for a link at any moment before it makes the
write fail. The editor's write cannot be made that way: the edge checks, right before it
hands the edit over and again once the editor answered, that no component of the path is
(now) a link leading out of the workspace, and reports the edit as failed when one is. What
remains (docs/security.md, "Writes that stay inside"): a swap between the first check and the
editor's own write of the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from coder_ls.fsutil import UnsafePathError, link_out, write_atomic
from coder_ls.protocol.edits import EditOutcome


def _shown(root: Path, path: Path) -> str:
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
    return rel or "."


def refusal(root: Path, paths: Iterable[str], *, answered: bool = False) -> EditOutcome | None:
    """A failed outcome when a component of one of `paths` leads out of `root` now (None:
    every one stays inside). `answered`: the check after the editor's answer."""
    for raw in paths:
        path = Path(raw)
        bad = link_out(root, path)
        if bad is None:
            continue
        if bad == Path(os.path.normpath(path)) and not os.path.islink(bad):
            why = f"{_shown(root, path)} is outside the workspace"
        else:
            target = os.path.realpath(bad)
            when = " while the editor applied the edit" if answered else ""
            why = f"{_shown(root, bad)} became a link leading outside the workspace ({target}){when}"
        return EditOutcome(applied=False, reason=f"{why}; {_shown(root, path)} was not written", failed=True)
    return None


def write_inside(root: Path, path: str, text: str) -> EditOutcome | None:
    """The server's own write of an edit, never outside `root`; a failed outcome when it
    could not be made (None: written)."""
    try:
        write_atomic(Path(path), text.encode("utf-8"), root=root)
    except UnsafePathError:
        found = refusal(root, [path])
        if found is not None:
            return found
        why = f"a folder on the way to {_shown(root, Path(path))} was swapped for a link while it was written"
        return EditOutcome(applied=False, reason=f"{why}; nothing was written outside the workspace", failed=True)
    except OSError as exc:
        return EditOutcome(applied=False, reason=f"the disk write failed: {exc}", failed=True)
    return None
