"""The user's own directories the server writes outside the workspace, with a fallback.

- **state** (`$XDG_STATE_HOME/coder`, else `~/.local/state/coder`): trust records, the ids
  of the sessions and tasks this user created, per-server run directories;
- **cache** (`$XDG_CACHE_HOME/coder-ls`, else `~/.cache/coder-ls`): the sandbox's
  per-workspace cache, the Models API listing.

A home that is a file, missing, read-only or full must not stop the server, nor fail a
turn (issue 20: every agent turn failed with `NotADirectoryError` under `~/.cache`). When
the usual directory cannot be created, the server uses a private directory of its own
instead: `$XDG_RUNTIME_DIR/coder-ls` when that is a private directory of this user, else
`<temp dir>/coder-ls-<uid>` (created 0700, and used only when it is a directory owned by
this user that nobody else can write: a directory someone else planted is refused). What
is kept there lasts until the next reboot; `fallback_note` says so in one sentence for
the one warning the server shows.

- **config** (`$XDG_CONFIG_HOME/coder/config.json`, else `~/.config/coder/config.json`): the
  user's configuration file (`user_config_path`), which the server reads, `/config --user`
  writes and the sandbox keeps read-only; no fallback: it is the user's file, not ours.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

__all__ = ["cache_dir", "fallback_note", "state_dir", "user_config_path"]

Kind = Literal["state", "cache"]


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _usual(kind: Kind, env: Mapping[str, str]) -> Path:
    if kind == "state":
        return Path(env.get("XDG_STATE_HOME") or os.path.join(_home(env), ".local", "state")) / "coder"
    return Path(env.get("XDG_CACHE_HOME") or os.path.join(_home(env), ".cache")) / "coder-ls"


def _private(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _makes(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def _fallback(kind: Kind, env: Mapping[str, str]) -> Path:
    runtime = env.get("XDG_RUNTIME_DIR") or ""
    if runtime and os.path.isabs(runtime) and _private(Path(runtime)):
        base = Path(runtime) / "coder-ls"
    else:
        base = Path(tempfile.gettempdir()) / f"coder-ls-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(base, 0o700)
    if not _private(base):
        raise PermissionError(f"{base} is not a private directory of this user: refusing to use it")
    path = base / kind
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    return path


def _dir(kind: Kind, env: Mapping[str, str]) -> tuple[Path, bool]:
    usual = _usual(kind, env)
    if _makes(usual):
        return usual, False
    return _fallback(kind, env), True


def state_dir(env: Mapping[str, str]) -> Path:
    """The server's state directory (created), or its fallback (module docstring)."""
    return _dir("state", env)[0]


def cache_dir(env: Mapping[str, str]) -> Path:
    """The server's cache directory (created), or its fallback (module docstring)."""
    return _dir("cache", env)[0]


def fallback_note(env: Mapping[str, str]) -> str | None:
    """One sentence for the user when a usual directory could not be used, else None."""
    moved = []
    for kind in ("state", "cache"):
        usual = _usual(kind, env)  # type: ignore[arg-type]
        path, fell_back = _dir(kind, env)  # type: ignore[arg-type]
        if fell_back:
            moved.append(f"{kind} ({usual}) is kept in {path}")
    if not moved:
        return None
    return (
        f"coder: HOME ({_home(env)}) is not writable here: its {'; its '.join(moved)} until the next reboot "
        "(trust, session ownership and caches do not survive it). Agent turns and commands work as usual."
    )


def config_dir(env: Mapping[str, str]) -> Path:
    """The user's coder folder: `$XDG_CONFIG_HOME/coder`, else `~/.config/coder` (their
    config.json, AGENTS.md, commands, skills, agents and plugins)."""
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".config")
    return Path(base) / "coder"


def user_config_path(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "config.json"
