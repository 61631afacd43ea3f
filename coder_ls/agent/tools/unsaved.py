"""The editor's unsaved buffers, as the file tools see them (contract section 23).

The host (`engine/host.py`) hands over what the editor holds: `open_document(path)` for one
file, `open_paths()` for every open one. A buffer is *unsaved* only when its text differs
from the file on disk; one equal to the disk is just the file. `read`, `grep` and `edit` work
on an unsaved buffer instead of the disk and say so: `ToolOutput.unsaved` (the client's
`toolCallEnd.unsaved`) and `NOTE` in the text the model reads.

Which paths may be read or searched is decided on the path, as for a file (`ToolContext.
resolve`, grep's scope): a buffer never widens it. A buffer is capped like a file: grep skips
one over its file limit, edit refuses one over its limit; read shows a large one summarised.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from coder_ls.agent.textedits import split_lines
from coder_ls.engine.host import Host, OpenDocument
from coder_ls.saferead import read_text_or_none

NOTE = "(unsaved editor buffer: the text the editor holds, changed since the file was saved)"

Match = tuple[str, int, str]  # path, line number, line text (as `search.Match`)


def unsaved_buffer(host: Host, path: Path) -> OpenDocument | None:
    """The editor's buffer of `path` when it is open and differs from the disk, else None.
    Blocking (it reads the disk, at most one byte more than the buffer holds)."""
    doc = host.open_document(path)
    if doc is None:
        return None
    size = len(doc.text.encode("utf-8", "surrogatepass"))
    return None if read_text_or_none(path, size + 1) == doc.text else doc


def grep_text(text: str, regex: re.Pattern[str], rel: str, limit: int, max_chars: int) -> list[Match]:
    """The lines of a buffer's text that match, as grep reports a file's."""
    out: list[Match] = []
    for n, line in enumerate(split_lines(text), start=1):
        line = line.rstrip("\r\n")
        if regex.search(line):
            out.append((rel, n, line[:max_chars]))
            if len(out) > limit:
                break
    return out


class BufferScan:
    """What grep takes from the unsaved buffers in its scope: the matches of each (in place of
    its file's), and the paths whose disk matches are stale (every unsaved one in scope)."""

    def __init__(self) -> None:
        self.matches: list[Match] = []
        self.replaced: set[str] = set()  # workspace-relative paths whose buffer was used
        self.too_large: list[str] = []

    @property
    def unsaved(self) -> bool:
        return bool(self.replaced or self.too_large)

    def merge(self, disk: Sequence[Match]) -> list[Match]:
        """The disk's matches minus the files searched in their buffer, plus the buffers'
        matches, in path order (as ripgrep's `--sort path`)."""
        stale = self.replaced | set(self.too_large)
        kept = [m for m in disk if m[0] not in stale]
        return sorted(kept + self.matches, key=lambda m: (m[0], m[1]))

    def note(self) -> str:
        parts = []
        if self.replaced:
            parts.append(f"{NOTE[:-1]}; searched for: {', '.join(sorted(self.replaced))})")
        for rel in self.too_large:
            parts.append(f"({rel}: its unsaved editor buffer is too large to search; not searched)")
        return "\n".join(parts)


def unsaved_in(host: Host, candidates: Iterable[tuple[Path, str]]) -> list[tuple[str, OpenDocument]]:
    """(workspace-relative path, buffer) of each of `candidates` ((path, relative path)) whose
    buffer is unsaved. Blocking: it reads the disk to tell an unsaved buffer from a saved one."""
    out = []
    for path, rel in candidates:
        if (doc := unsaved_buffer(host, path)) is not None:
            out.append((rel, doc))
    return out


def search_buffers(
    found: Iterable[tuple[str, OpenDocument]], regex: re.Pattern[str], *, limit: int, max_chars: int, max_bytes: int
) -> BufferScan:
    """grep over unsaved buffers (`unsaved_in`, already in grep's scope and not ignored); one
    over `max_bytes` is skipped, as grep skips a file that large."""
    scan = BufferScan()
    for rel, doc in found:
        if len(doc.text.encode("utf-8", "surrogatepass")) > max_bytes:
            scan.too_large.append(rel)
            continue
        scan.replaced.add(rel)
        scan.matches.extend(grep_text(doc.text, regex, rel, limit, max_chars))
    return scan
