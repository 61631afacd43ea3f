"""Conditional skills (contract section 18): a skill with `paths:` globs is offered to the
model only once the session has touched a matching file: the agent read, wrote or edited
it (a tool call's `path`), or the user's input named it (a word of the input, `@path`,
the file of the selection context, which the turn writes into the input). From then on
it stays active for the whole session, and says which file activated it.

The session keeps the paths it touched, in order (`Session.touched`); they are read again
from the session log on `/resume` (the log keeps every message, compacted or not), so no
state of its own is stored. Whether a skill is active is computed when asked, from its
globs and those paths: a skill file added later activates on what was touched before.

Globs are relative to the workspace root, read as everywhere else (`coder_ls.globs`): `*`
and `?` stay inside one path segment, `**` spans segments, `{ts,tsx}` and `[...]` work,
and a glob without a `/` matches a file's name at any depth (`*.sql`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from coder_ls.globs import name_or_path_match
from coder_ls.protocol.messages import Message, TextBlock, ToolUseBlock

_STRIP = "`'\"()[]{}<>,;:!?@"


def matches(glob: str, rel: str) -> bool:
    return name_or_path_match(glob, rel)


def activated_by(globs: Sequence[str], touched: Iterable[str]) -> str | None:
    """The first touched path that matches one of `globs`, or None."""
    return next((p for p in touched if any(matches(g, p) for g in globs)), None)


def _relative(text: str, root: Path) -> str | None:
    text = text.strip().strip(_STRIP).rstrip(".").split("#", 1)[0]
    if not text or "\n" in text or len(text) > 1024:
        return None
    if os.path.isabs(text):
        try:
            text = Path(os.path.normpath(text)).relative_to(root).as_posix()
        except ValueError:
            return None  # outside the workspace
    text = os.path.normpath(text).replace(os.sep, "/")
    return None if text.startswith("../") or text in (".", "..") else text


def touched_paths(message: Message, root: Path) -> list[str]:
    """The workspace paths `message` touches: its tool calls' `path`, and in the user's
    text every word that looks like a path (has a `/` or a `.` inside)."""
    out: list[str] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            value = block.input.get("path")
            if isinstance(value, str) and (rel := _relative(value, root)) is not None:
                out.append(rel)
        elif isinstance(block, TextBlock) and message.role == "user":
            for word in block.text.split():
                word = word.strip(_STRIP).rstrip(".")
                if ("/" in word or "." in word.strip(".")) and (rel := _relative(word, root)) is not None:
                    out.append(rel)
    return out


class Touched:
    """A session's touched paths, first-seen order, each once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: list[str] = []
        self._seen: set[str] = set()
        self._matched: dict[tuple[str, ...], tuple[int, str | None]] = {}  # globs -> (paths looked at, match)

    def first_match(self, globs: tuple[str, ...]) -> str | None:
        """`activated_by(globs, self.paths)`, looking only at the paths added since it was
        last asked (the paths only grow, so a match found stays the first): a listing with
        500 conditional skills and 500 touched files matched 250,000 globs each time."""
        done, found = self._matched.get(globs, (0, None))
        if found is None and done < len(self.paths):
            found = activated_by(globs, itertools.islice(self.paths, done, None))
            self._matched[globs] = (len(self.paths), found)
        return found

    def note(self, message: Message) -> None:
        for p in touched_paths(message, self.root):
            if p not in self._seen:
                self._seen.add(p)
                self.paths.append(p)
