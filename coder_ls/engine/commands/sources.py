"""Command sources beside the user's and the workspace's files (contract section 18):
`managed` (the administrator's folder, `engine/managed.py`) and `bundled` (skills shipped
in the package, `coder_ls/bundled/skills/`). Each is a function returning its commands
with their source, for the registry's one precedence order: managed first, then the
built-ins and the files, bundled last. Both are read as the user's own files (neither
comes with a clone): their `allowed-tools` and `` !`cmd` `` need no `/trust`."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Literal

import msgspec

from coder_ls.engine.commands.files import LoadProblem, SourceDir, load_commands
from coder_ls.engine.commands.registry import Command
from coder_ls.engine.managed import managed_dir

BUNDLED = Path(__file__).resolve().parent.parent.parent / "bundled" / "skills"


def managed_dirs(env: Mapping[str, str]) -> list[SourceDir]:
    base = managed_dir(env)
    return [SourceDir(base / "commands", "user", False), SourceDir(base / "skills", "user", True)]


def bundled_dirs() -> list[SourceDir]:
    return [SourceDir(BUNDLED, "user", True)]


def load_source(
    dirs: list[SourceDir], source: Literal["managed", "bundled"], reserved: Collection[str]
) -> tuple[list[Command], list[LoadProblem]]:
    """The commands of `dirs` as `source`; `reserved`: names they cannot take."""
    commands, problems = load_commands(dirs, reserved, reserved, trusted=True)
    return [msgspec.structs.replace(c, source=source) for c in commands], problems


def first_wins(*layers: list[Command]) -> list[Command]:
    """One list in precedence order: a name taken by an earlier layer is not taken again."""
    seen: set[str] = set()
    out: list[Command] = []
    for layer in layers:
        for c in layer:
            if c.name not in seen:
                seen.add(c.name)
                out.append(c)
    return out
