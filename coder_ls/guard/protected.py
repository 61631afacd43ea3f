"""The paths whose content something later executes or trusts outside the sandbox: the one
list both sandbox backends keep read-only and the agent's file tools always ask about.

A name here is protected wherever it appears in a path the agent's file tools write (a
nested `.envrc` runs when a shell enters its folder, a nested `.git` is a repository). The
sandbox holds them at the workspace's top (existing or not: a missing `.mcp.json` cannot be
created) and, for `.git`, the whole directory or file (config, hooks, `commondir`,
`info/attributes`, the index: git's own writes from the sandbox fail and are asked about).

`writable_parts` is how both backends grant a directory except some paths beneath it:
neither a bind mount nor Landlock can take a sub-path back out of a writable one, so the
directory is granted child by child, and only the children on the way to a kept-out path are
split further. The cost: no new entry can be created directly in a split directory (the
workspace's top), and its entries cannot be renamed or removed.

What is left out and why: see docs/security.md ("What is protected").
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from pathlib import Path

# name -> what later runs or trusts it (the question the file tools ask says this).
PROTECTED: dict[str, str] = {
    ".git": "git's internals (its config, hooks and commondir run code on any later git command)",
    ".gitmodules": "it names the submodules, whose .git files are protected too, and where git clones them from",
    ".coder": "the agent's own configuration (it could change its permissions, commands and skills)",
    ".claude": "Claude Code's settings, hooks and slash commands, which run outside the sandbox",
    ".mcp.json": "it names the MCP servers that MCP clients start",
    ".envrc": "direnv runs it when a shell enters the folder",
    ".vscode": "VS Code's tasks and settings can run programs when the folder opens",
    ".idea": "JetBrains run configurations and startup tasks run programs",
    ".devcontainer": "a dev container's initializeCommand runs on the host",
    ".nvim.lua": "Neovim runs it at start with 'exrc'",
    ".nvimrc": "Neovim and Vim run it at start with 'exrc'",
    ".exrc": "Vim runs it at start with 'exrc'",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names on the user's next git commit",
    ".husky": "husky's git hooks run on the user's next git commit",
}


def protected_name(parts: Iterable[str]) -> str | None:
    """The first protected name among a relative path's parts, or None."""
    for part in parts:
        if part in PROTECTED:
            return part
    return None


def reason(name: str) -> str:
    return f"it is in {name}: {PROTECTED[name]}"


def submodule_gits(root: Path) -> list[Path]:
    """The `.git` files of the submodules `.gitmodules` lists (`path = sub/dir`): a nested
    repository's pointer to its git dir, which git follows like the top one."""
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        key, _, value = line.partition("=")
        rel = Path(os.path.normpath(value.strip().strip('"')))
        if key.strip() == "path" and value.strip() and not rel.is_absolute() and ".." not in rel.parts:
            out.append(root / rel / ".git")
    return out


def kept_out(root: Path) -> set[Path]:
    """The protected paths of the workspace `root` (resolved), existing or not, the `.git`
    of each submodule, and the real location of each that is a link into the workspace
    (writes there would be writes here)."""
    out: set[Path] = set()
    for path in (*(root / name for name in PROTECTED), *submodule_gits(root)):
        out.add(path)
        if path.is_symlink():
            real = Path(os.path.realpath(path))
            if real.is_relative_to(root):
                out.add(real)
    return out


def _strictly_under(path: Path, top: Path) -> bool:
    return path != top and path.is_relative_to(top)


def writable_parts(top: Path, keep_out: Collection[Path]) -> tuple[list[str], list[str]]:
    """(directories, files) that together cover what is under `top` except `keep_out`
    and links (a link is not granted: what it points to is not `top`'s)."""
    dirs: list[str] = []
    files: list[str] = []

    def split(folder: Path) -> None:
        if folder in keep_out:
            return
        if not any(_strictly_under(k, folder) for k in keep_out):
            dirs.append(str(folder))
            return
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink() or path in keep_out:
                continue
            if entry.is_dir(follow_symlinks=False):
                split(path)
            else:
                files.append(str(path))

    split(top)
    return dirs, files
