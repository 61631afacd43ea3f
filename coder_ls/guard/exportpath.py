"""Where `/export` may write (contract section 19; docs/security.md, "Exports").

An export holds text the model and the workspace wrote, so where it lands is checked like
any write the user did not make by hand:

- no path: `.coder/exports/<sessionId>.<md|jsonl>` in the workspace (replaced each time);
- a path inside the workspace (relative to its root, or absolute): not in a protected place
  (`.git/hooks/…`, `.vscode/`, `.coder/config.json`, …: `guard/protected.py`), except
  `.coder/exports/`;
- a path outside the workspace: only under the user's home, only when the user typed the
  command (origin `typed`), and never in a hidden file or folder there (dotfiles configure
  programs: `~/.bashrc`, `~/.ssh/…`);
- an existing file is not replaced unless `--force` (then only a regular file), a symlink or
  a directory at the path is refused, and symlinks in the folders on the way are resolved
  before these checks (the write itself then opens each folder without following links:
  `fsutil.write_atomic` with the checked root).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec

from coder_ls.guard.protected import protected_name, reason

EXPORTS = Path(".coder") / "exports"


class Target(msgspec.Struct, frozen=True):
    path: Path  # real location (symlinks of its folders resolved)
    root: Path  # the folder the write is confined to (workspace or home)
    default: bool  # the server chose it (under .coder/exports)


class Refused(msgspec.Struct, frozen=True):
    code: str  # export_refused | export_exists
    message: str


def _inside(path: Path, top: Path) -> bool:
    return os.path.commonpath([str(path), str(top)]) == str(top)


def _default(real_root: Path, name: str) -> Target | Refused:
    """`.coder/exports/<name>`: ours, replaced each time, but a cloned repository can ship
    `.coder/exports` as a symlink (to `.git/hooks`, out of the workspace): refused, as is a
    symlink at the name."""
    folder = real_root / EXPORTS
    if os.path.lexists(folder) and Path(os.path.realpath(folder)) != folder:
        return Refused("export_refused", f"/export will not write through {EXPORTS}: it is a symbolic link.")
    path = folder / name
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isfile(path)):
        return Refused("export_refused", f"/export will not replace {EXPORTS / name}: not a regular file.")
    return Target(path=path, root=real_root, default=True)


def resolve(
    root: Path, session_id: str, arg: str, ext: str, *, origin: str, force: bool, home: Path
) -> Target | Refused:
    real_root = Path(os.path.realpath(root))
    if not arg:
        return _default(real_root, f"{session_id}.{ext}")
    given = Path(os.path.expanduser(arg)) if arg.startswith("~/") else Path(arg)
    absolute = Path(os.path.abspath(given if given.is_absolute() else root / given))
    if absolute.name in ("", ".", ".."):
        return Refused("export_refused", f"/export: {arg!r} names no file")
    real = Path(os.path.realpath(absolute.parent)) / absolute.name
    if _inside(real, real_root):
        rel = real.relative_to(real_root)
        name = protected_name(rel.parts)
        if name is not None and not _inside(real, real_root / EXPORTS):
            return Refused("export_refused", f"/export will not write {rel}: {reason(name)}.")
        confine = real_root
    else:
        real_home = Path(os.path.realpath(home))
        if not _inside(real, real_home) or real == real_home:
            return Refused(
                "export_refused", f"/export writes only inside the workspace or your home; {real} is in neither."
            )
        if origin != "typed":
            return Refused(
                "export_refused", f"/export outside the workspace needs a command you typed (origin {origin})."
            )
        hidden = next((p for p in real.relative_to(real_home).parts if p.startswith(".")), None)
        if hidden is not None:
            return Refused(
                "export_refused",
                f"/export will not write into {hidden} in your home: hidden files and folders configure programs.",
            )
        confine = real_home
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return Target(path=real, root=confine, default=False)
    except OSError as exc:
        return Refused("export_refused", f"/export cannot use {real}: {exc.strerror}")
    if stat.S_ISLNK(st.st_mode):
        return Refused("export_refused", f"/export will not write through the symbolic link {real}.")
    if stat.S_ISDIR(st.st_mode):
        return Refused("export_refused", f"/export: {real} is a folder; give a file name.")
    if not stat.S_ISREG(st.st_mode):
        return Refused("export_refused", f"/export: {real} is not a regular file.")
    if not force:
        return Refused("export_exists", f"/export: {real} exists; choose another name, or add --force to replace it.")
    return Target(path=real, root=confine, default=False)
