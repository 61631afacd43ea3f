"""Project instructions for the system prompt (contract section 9).

The user's `$XDG_CONFIG_HOME/coder/AGENTS.md` (or `~/.config/coder/AGENTS.md`) and
`~/.claude/CLAUDE.md`, then `<root>/AGENTS.md`, `<root>/CLAUDE.md`, `<root>/.claude/CLAUDE.md`,
`<root>/CLAUDE.local.md` and `<root>/CODER.md` (Claude Code's memory files), each under a
heading that names it, together at most `instructions.maxBytes` (the rest is cut, with a
note). A file that is the same file as one before it (`AGENTS.md` a link to `CLAUDE.md`)
is included once.

The files are read again only when their stat signature changes (size, mtime, inode):
an unchanged set gives the same text byte for byte, so the cached prompt prefix holds.
The workspace is hostile input: only regular files are read, without blocking, capped.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from coder_ls.saferead import UnreadableFile, read_regular_file
from coder_ls.userdirs import config_dir

ROOT_FILES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "CODER.md")
READ_CAP = 1024 * 1024  # bytes read of one file at most (what is shown is capped by maxBytes)

Signature = tuple[tuple[str, int, int, int], ...]


def user_instructions_path(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "AGENTS.md"


def _cut_utf8(data: bytes, limit: int) -> bytes:
    """At most `limit` bytes, not splitting a UTF-8 character."""
    cut = data[:limit]
    return cut.decode("utf-8", errors="ignore").encode("utf-8")


class ProjectInstructions:
    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        user = user_instructions_path(env)
        claude = Path(env.get("HOME", os.path.expanduser("~"))) / ".claude" / "CLAUDE.md"
        users = [(user, str(user)), (claude, str(claude))]
        self.files: list[tuple[Path, str]] = users + [(root / n, n) for n in ROOT_FILES]
        self._key: tuple[Signature, int] | None = None
        self._text = ""

    def _signature(self) -> Signature:
        out: list[tuple[str, int, int, int]] = []
        for path, _ in self.files:
            try:
                st = os.stat(path)
            except OSError:
                continue
            out.append((str(path), st.st_size, st.st_mtime_ns, st.st_ino))
        return tuple(out)

    def text(self, max_bytes: int) -> str:
        """The instructions section ("" when there are none), read again only when changed."""
        key = (self._signature(), max_bytes)
        if key != self._key:
            self._text = self._read(max_bytes)
            self._key = key
        return self._text

    def _read(self, max_bytes: int) -> str:
        parts: list[bytes] = []
        seen: set[tuple[int, int]] = set()
        for path, label in self.files:
            try:
                st = os.stat(path)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:  # the same file under another name: once
                continue
            seen.add((st.st_dev, st.st_ino))
            try:
                data = read_regular_file(path, READ_CAP)
            except UnreadableFile as exc:
                data = f"({label} was not read: {exc})".encode()
            if data is None:
                continue
            body = data.decode("utf-8", errors="replace").replace("\r\n", "\n").strip()
            if body:
                parts.append(f"## {label}\n\n{body}\n".encode())
        if not parts:
            return ""
        joined = b"\n".join(parts)
        if len(joined) > max_bytes:
            left = len(joined) - max_bytes
            kept = _cut_utf8(joined, max_bytes).decode("utf-8")
            note = f"\n\n[Cut here: {left} more bytes exceed instructions.maxBytes ({max_bytes}).]"
            return kept.rstrip() + note
        return joined.decode("utf-8").rstrip()
