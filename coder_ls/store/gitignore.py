"""The state directory `<root>/.coder/`, its layout, and the `.gitignore` that keeps it out of git.

Everything the server writes for itself (session logs, the index, checkpoints) is private
state; only what the user curates (`config.json`, `commands/`, `skills/`, `agents/`) is
meant to be committed. The `.gitignore` is created the first time anything is written
below `.coder/` and is never rewritten afterwards: a user who edits it keeps their edits.

The patterns are anchored (`/*`), so only the top level of `.coder/` is ignored and the
re-included directories keep all their content, however deeply nested.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec

from coder_ls import fsutil

STATE_DIR_NAME = ".coder"
SESSIONS_DIR_NAME = "sessions"
INDEX_FILE_NAME = "index.sqlite"
CHECKPOINTS_DIR_NAME = "checkpoints"
CONFIG_FILE_NAME = "config.json"

#: What stays tracked inside `.coder/`; everything else is ignored.
TRACKED = ("config.json", "commands/", "skills/", "agents/")

GITIGNORE_TEXT = (
    "# Created by coder-ls. Session logs, the index, checkpoints and this file are private\n"
    "# state; only the workspace configuration, commands, skills and agents belong in git.\n"
    "/*\n" + "".join(f"!/{name}\n" for name in TRACKED)
)


class StatePaths(msgspec.Struct, frozen=True):
    """Where each piece of state lives for one workspace root."""

    root: Path
    state_dir: Path
    sessions_dir: Path
    index_path: Path
    checkpoints_dir: Path
    config_path: Path
    gitignore_path: Path

    def session_log(self, session_id: str) -> Path:
        return self.sessions_dir / f"{session_id}.jsonl"


def state_paths(root: str | os.PathLike[str]) -> StatePaths:
    """The layout of `<root>/.coder/` (pure: touches nothing on disk)."""
    root_path = Path(root)
    state = root_path / STATE_DIR_NAME
    return StatePaths(
        root=root_path,
        state_dir=state,
        sessions_dir=state / SESSIONS_DIR_NAME,
        index_path=state / INDEX_FILE_NAME,
        checkpoints_dir=state / CHECKPOINTS_DIR_NAME,
        config_path=state / CONFIG_FILE_NAME,
        gitignore_path=state / ".gitignore",
    )


def ensure_state_dir(root: str | os.PathLike[str]) -> Path:
    """Create `<root>/.coder/` (and its `.gitignore` if absent); return the directory.

    Safe to call before every write: it is idempotent, never overwrites an existing
    `.gitignore`, and tolerates a concurrent process creating the same files.
    """
    paths = state_paths(root)
    # Never `parents=True`: a workspace deleted while the server runs must stay deleted
    # (FileNotFoundError), not come back as an empty folder holding `.coder/`.
    paths.state_dir.mkdir(exist_ok=True)
    if not paths.gitignore_path.exists():
        _create_exclusive(paths.gitignore_path, GITIGNORE_TEXT.encode())
    for kept in (paths.sessions_dir, paths.checkpoints_dir):
        keep_from_clean(kept)
    return paths.state_dir


def keep_from_clean(directory: Path) -> None:
    """Make `git clean -fdx` in the user's repository leave `directory` alone.

    `git clean` skips a nested repository unless `-f` is given twice; a folder counts as
    one when it holds a valid `.git`. So a minimal git directory (HEAD, objects/, refs/)
    is created as `directory/.git`: no git call, no objects, nothing to track. The session
    logs and checkpoints then survive `!git clean -fdx`; the index is rebuilt from the
    logs at start. `config.json`, `commands/`, `skills/` and `agents/` stay ordinary
    files the user's git can track."""
    marker = directory / ".git"
    if (marker / "HEAD").exists():
        return
    for sub in ("objects", "refs"):
        (marker / sub).mkdir(parents=True, exist_ok=True)
    _create_exclusive(marker / "HEAD", b"ref: refs/heads/main\n")


def ensure_sessions_dir(root: str | os.PathLike[str]) -> Path:
    """`<root>/.coder/sessions/`, created (with the state dir and `.gitignore`) if needed."""
    ensure_state_dir(root)
    sessions = state_paths(root).sessions_dir
    sessions.mkdir(exist_ok=True)
    return sessions


def state_problem(root: str | os.PathLike[str]) -> str | None:
    """Why the server cannot keep state in `<root>/.coder/` (None when it can).

    Creates the state directory with its `sessions/` and `checkpoints/` folders (what the
    first write would do anyway) and a probe file in each, removed at once: a read-only
    mount, a read-only `.coder`, a full disk or a missing workspace all show here, once,
    instead of as a failure of every command."""
    paths = state_paths(root)
    if not paths.root.is_dir():
        return f"the workspace folder {paths.root} does not exist"
    probe = f".probe-{os.getpid()}"
    target = paths.state_dir
    try:
        ensure_state_dir(root)
        for target in (paths.sessions_dir, paths.checkpoints_dir):
            target.mkdir(exist_ok=True)
            fd = os.open(target / probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.close(fd)
            os.unlink(target / probe)
    except OSError as exc:
        return f"cannot write {exc.filename or target}: {exc.strerror or exc}"
    return None


def _create_exclusive(path: Path, data: bytes) -> None:
    """Write `data` to a new file; do nothing if it already exists (another writer won)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: Path) -> None:
    """Make a directory entry (a new or renamed file) durable; best effort off POSIX."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_state_file(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file
    (fsynced file and directory; never through a symlink swapped in meanwhile): the
    project's one atomic write, `fsutil.write_atomic`, below the state directory."""
    boundary = next((p.parent for p in path.parents if p.name == STATE_DIR_NAME), path.parent)
    fsutil.write_atomic(path, data, root=boundary, new_mode=0o644)
