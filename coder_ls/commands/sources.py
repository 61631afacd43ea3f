"""Command sources beside the user's and the workspace's files (contract section 18):
`managed` (the administrator's folder, `guard/managed.py`) and `bundled` (skills shipped
in the package, `coder_ls/bundled/skills/`). They are folders like the others, loaded by
the same loader (`files.load_commands`) and ranked by the registry's one precedence order
(`registry.LAYERS`). Both are read as the user's own files (neither comes with a clone):
their `allowed-tools` and `` !`cmd` `` need no `/trust`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from coder_ls.commands.files import SourceDir, source_dirs
from coder_ls.guard.managed import managed_dir

BUNDLED = Path(__file__).resolve().parent.parent / "bundled" / "skills"  # coder_ls/bundled/skills


def managed_dirs(env: Mapping[str, str]) -> list[SourceDir]:
    base = managed_dir(env)
    return [SourceDir(base / "commands", "managed", False), SourceDir(base / "skills", "managed", True)]


def bundled_dirs() -> list[SourceDir]:
    return [SourceDir(BUNDLED, "bundled", True)]


def all_dirs(root: Path, env: Mapping[str, str], plugins: list[SourceDir] | None = None) -> list[SourceDir]:
    """Every command and skill folder, in discovery order (the registry ranks by layer)."""
    return [*managed_dirs(env), *source_dirs(root, env, plugins), *bundled_dirs()]
