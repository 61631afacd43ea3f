"""What the model may see of a path the editor named (contract section 23).

The editor's answers are not trusted: a client (or a language server behind it) may name
`/etc/shadow`, `.git/config` or a link leading out. Each path goes through the checks of
any read, once per path: `resolve_path` (outside the workspace, `..`, links leading out
refused unless `allowOutsideWorkspace`), and a rule that denies `read` of it. A path that
fails is left out, counted, never shown. Text of a file (a definition's line, a symbol's
source) needs more: the policy's full `read` decision must allow it outright (an `ask` is
not a yes here) and no part of the path may be a protected name (`.git`, `.coder`, ...:
`guard/protected.py`); a location there is shown without its text.
"""

from __future__ import annotations

import os
from pathlib import Path

from coder_ls.agent.paths import PathError, display_path, resolve_path
from coder_ls.guard.protected import protected_name
from coder_ls.protocol.config import Config


def _denies_reads(config: Config) -> bool:
    return any(r.action in ("deny", "ask") and r.tool in ("read", "*") for r in config.rules)


class PathGuard:
    """The read checks for the editor's paths, remembered per path for one answer."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = Path(os.path.abspath(root))
        self.config = config
        self._rules = _denies_reads(config)
        self._shown: dict[str, str | None] = {}
        self._text: dict[str, Path | None] = {}

    def _decision(self, path: Path) -> str:
        from coder_ls.agent.references import read_decision

        return read_decision(self.root, self.config, path, []).action

    def shown(self, raw: str) -> str | None:
        """The path as the model sees it (relative to the workspace), or None: left out.

        A file that is no link is where its folder is: the folder is checked once
        (`resolve_path`), the file only for being a link (5,000 diagnostics over 500
        files of one folder: one check and 500 `lstat`s). Anything else is checked whole."""
        if raw in self._shown:
            return self._shown[raw]
        folder, name = os.path.split(raw)
        top = str(self.root)
        inside = folder == top or folder.startswith(top.rstrip("/") + "/")
        if inside and name not in ("", ".", "..") and not os.path.islink(raw):
            base = self.shown(folder) if folder not in self._shown else self._shown[folder]
            rel = None if base is None else (name if base == "." else f"{base}/{name}")
            if rel is not None and self._rules and self._decision(Path(raw)) == "deny":
                rel = None
            self._shown[raw] = rel
            return rel
        try:
            path = resolve_path(self.root, raw, allow_outside=self.config.allow_outside_workspace)
        except PathError:
            path = None
        if path is not None and not os.path.isabs(raw):
            path = None  # the edge sends absolute paths only: anything else is not the editor's
        rel = None
        if path is not None and not (self._rules and self._decision(path) == "deny"):
            rel = display_path(self.root, path)
        self._shown[raw] = rel
        return rel

    def readable(self, raw: str) -> Path | None:
        """The path whose text the model may see, or None (see the module's docstring)."""
        if raw in self._text:
            return self._text[raw]
        rel = self.shown(raw)
        path: Path | None = None
        if rel is not None:
            candidate = Path(os.path.abspath(raw))
            inside = candidate.is_relative_to(self.root)
            parts = candidate.relative_to(self.root).parts if inside else candidate.parts
            real = Path(os.path.realpath(candidate))
            real_root = Path(os.path.realpath(self.root))
            real_parts = real.relative_to(real_root).parts if real.is_relative_to(real_root) else real.parts
            if protected_name(parts) is None and protected_name(real_parts) is None:
                path = candidate if self._decision(candidate) == "allow" else None
        self._text[raw] = path
        return path
