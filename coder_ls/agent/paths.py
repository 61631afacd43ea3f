"""Workspace paths: resolving what the model names, refusing escapes (globs: `coder_ls.globs`)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from coder_ls.protocol.wiretext import carried, name_from_shown, stray_surrogate


class PathError(Exception):
    """A path the agent may not use (outside the workspace, malformed)."""


def _strip_uri(raw: str) -> str:
    if raw.startswith("file://"):
        return unquote(urlparse(raw).path)
    return raw


def call_paths(tool_input: object, root: Path) -> list[Path]:
    """The file a tool call names (its `path`), resolved in the workspace: none when it names
    none or one the tools would refuse."""
    raw = tool_input.get("path") if isinstance(tool_input, dict) else None
    if not isinstance(raw, str):
        return []
    try:
        return [resolve_path(root, raw)]
    except PathError:
        return []


def resolve_path(root: Path, raw: str, *, allow_outside: bool = False) -> Path:
    """`raw` (relative to `root`, or absolute) as an absolute, normalised path.

    Refuses `..` escapes, absolute paths outside the root, and paths whose real
    location (symlinks followed with `Path.resolve()`) leaves the root, unless
    `allow_outside`. The returned path is lexical (the symlinks are kept) so it
    names the file the way the editor does.

    A byte of a name that is not UTF-8 (or a control character) is written `\\xNN`, as
    the tools show it (`protocol/wiretext.py`): taken as that byte unless the path as
    written exists. A lone surrogate (a JSON `\\ud800`) is no text and is refused.
    """
    text = _strip_uri(raw.strip())
    if not text:
        raise PathError("the path is empty")
    if "\x00" in text:
        raise PathError(f"path {raw!r} contains a NUL character")
    if (bad := stray_surrogate(text)) is not None:
        raise PathError(
            f"path {carried(raw)!r} contains a lone surrogate (U+{ord(bad):04X}), which is not text; "
            "a byte of a name that is not UTF-8 is written \\xNN, as ls and glob show it"
        )
    root = Path(os.path.abspath(root))
    text = _unescaped(root, text)
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = root / candidate
    lexical = Path(os.path.normpath(candidate))
    if allow_outside:
        return lexical
    real_root = root.resolve()
    inside_lexically = lexical == root or lexical.is_relative_to(root)
    try:
        real = lexical.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise PathError(f"path {raw} cannot be resolved: {exc}") from exc
    if not inside_lexically or not (real == real_root or real.is_relative_to(real_root)):
        raise PathError(f"path {raw} is outside the workspace ({root})")
    return lexical


def _unescaped(root: Path, text: str) -> str:
    """`text` with its `\\xNN` escapes as bytes (`wiretext.name_from_shown`), unless the path
    as written exists (a name that really holds a backslash)."""
    named = name_from_shown(text)
    if named == text or os.path.lexists(os.path.join(root, text)):
        return text
    return named


def display_path(root: Path, path: Path) -> str:
    """`path` relative to `root` in POSIX form, or absolute when outside it."""
    root = Path(os.path.abspath(root))
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    text = rel.as_posix()
    return text if text != "." else "."


def is_inside(root: Path, path: Path) -> bool:
    root = Path(os.path.abspath(root))
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def glob_literal_length(pattern: str) -> int:
    """How many characters of the glob are not wildcards (its specificity)."""
    return sum(1 for c in pattern if c not in "*?[]{}!,")


def skill_file(raw: str, folders: list[Path]) -> Path | None:
    """`raw` as an absolute path inside one of `folders` (a skill's folder the agent may
    read), the real location included (a link inside pointing out is refused), else None."""
    text = _strip_uri(raw.strip())
    if not text or "\x00" in text or not os.path.isabs(text):
        return None
    lexical = Path(os.path.normpath(text))
    try:
        real = lexical.resolve()
    except (OSError, RuntimeError):
        return None
    for folder in folders:
        top = Path(os.path.normpath(folder))
        try:
            real_top = top.resolve()
        except (OSError, RuntimeError):
            continue
        if lexical.is_relative_to(top) and real.is_relative_to(real_top):
            return lexical
    return None
