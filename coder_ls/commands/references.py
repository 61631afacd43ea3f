"""`@path` references in a command or skill body (Claude Code: "include file contents in
commands using the @ prefix"): each `@path` of the file's own body, at the start of a line
or after whitespace, that names a regular file inside the workspace (or inside the
command's own skill or plugin folder) has the file attached after the text, as Claude Code
attaches it. An `@` that names nothing stays text (`@team`, an e-mail address).

What can be attached is what the agent's `read` tool could read anyway: a path that
leaves the workspace (`@../x`, `@/etc/passwd`, a link pointing out) is left as text. Only
the body's references count: `@path` typed in the arguments is the user's text (the
input's own references are the input layer's). At most `MAX_BYTES` in all, with a note
when cut.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from coder_ls.saferead import UnreadableFile, read_regular_file

REFERENCE = re.compile(r"(?<![^\s(])@((?:[\w.-]+/)*[\w.-]*[\w-][\w.-]*)")
MAX_BYTES = 100_000


def _inside(path: Path, tops: list[Path]) -> bool:
    real = os.path.realpath(path)
    return any(real == os.path.realpath(t) or real.startswith(os.path.realpath(t) + os.sep) for t in tops)


def references(body: str) -> list[str]:
    """The `@path` names of a body, in order, each once."""
    return list(dict.fromkeys(m.group(1).rstrip(".") for m in REFERENCE.finditer(body)))


def attach(names: list[str], root: Path, extra: list[Path]) -> str:
    """The attachment text for `names` ("" when none names a file)."""
    parts: list[str] = []
    left = MAX_BYTES
    for name in names:
        candidates = [root / name, *(top / name for top in extra)]
        for path in candidates:
            if not _inside(path, [root, *extra]):
                continue
            try:
                data = read_regular_file(path, left + 1)
            except (UnreadableFile, OSError):
                continue
            if data is None:
                continue
            text = data[:left].decode("utf-8", errors="replace")
            cut = "\n[cut: the attachments' limit]" if len(data) > left else ""
            parts.append(f"Contents of @{name}:\n```\n{text}\n```{cut}")
            left -= min(len(data), left)
            break
        if left <= 0:
            break
    return "\n\n".join(parts)
