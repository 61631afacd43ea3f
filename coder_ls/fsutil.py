"""The one atomic write, safe against symlink races.

A path checked to be inside the workspace can be made to point outside it a moment later
(a directory swapped for a symlink between the check and the write). So the write never
re-walks a path by name: it resolves the target once, checks that its real location is
under `root`, then opens each directory of that real location with `O_NOFOLLOW`, starting
from the root's descriptor. A component that has become a symlink since fails the open
(`ELOOP`/`ENOTDIR`) instead of being followed, and everything after that (the temporary
file, the rename, the fsync) happens relative to the parent directory's descriptor.

If the final name has become a symlink in the meantime, the rename replaces the link
itself, inside the checked directory: the data never lands anywhere else.

Every write names its `root`: there is no default. A file of the workspace (an edit of the
agent's, whatever edge applies it, the session logs) is bounded by the workspace; the
user's own files outside any workspace (their settings, caches, trust records) are written
where their links lead, which the caller says with `ANYWHERE`. `link_out` is the check an
edge makes around an edit the editor applies itself (it cannot be made to write by
descriptor): which component of a path, if any, now leads out of `root`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

__all__ = ["ANYWHERE", "UnsafePathError", "default_file_mode", "link_out", "open_dir_beneath", "write_atomic"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# The root of a write to one of the user's own files outside any workspace (settings, caches,
# trust records): their links are theirs to lead anywhere; a swap after the resolution is
# still refused.
ANYWHERE = Path("/")


class UnsafePathError(OSError):
    """The path leaves `root`, or changed into a symlink while it was being written."""


def default_file_mode() -> int:
    """0666 less the process umask (what `open()` would give a new file)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def open_dir_beneath(root: Path, directory: Path, *, create: bool = False) -> int:
    """A descriptor of `directory`, whose real location must be `root` or below it.

    Each component below the root is opened with `O_NOFOLLOW`: a symlink that appears after
    the check is refused, never followed. With `create`, missing directories are made.
    The caller closes the descriptor."""
    real_root = os.path.realpath(root)
    real_dir = os.path.realpath(directory)
    if os.path.commonpath([real_root, real_dir]) != real_root:
        raise UnsafePathError(errno.EXDEV, f"{directory} is outside {root}")
    fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in Path(os.path.relpath(real_dir, real_root)).parts:
            if part == ".":
                continue
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafePathError(exc.errno, f"{directory} changed while it was being written") from exc
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_atomic(
    path: Path,
    data: bytes,
    *,
    root: Path,
    new_mode: int | None = None,
    fsync: bool = True,
) -> None:
    """Replace `path` with `data` so that readers see the old or the new file, never a mix,
    and nothing is written outside `root` (`ANYWHERE` for the user's own files: still
    without following a symlink swapped in after the path was resolved).

    A symlink at `path` is written through to its target when that target is under `root`
    (the editor's view of a linked file); an existing file keeps its permission bits; a new
    file gets `new_mode` (default: 0666 less the umask)."""
    target = Path(os.path.realpath(path))
    dir_fd = open_dir_beneath(root, target.parent, create=True)
    name = target.name
    try:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
        except FileNotFoundError:
            mode = None
        if mode is None:
            mode = new_mode if new_mode is not None else default_file_mode()
        replace_at(dir_fd, name, data, mode, fsync=fsync)
    finally:
        os.close(dir_fd)


def link_out(root: Path, path: Path) -> Path | None:
    """The first component of `path` (the path itself included) whose real location is not
    under `root`'s, as a path: `path` itself when it is not under `root` by name; None when
    every component that exists stays inside. A link that stays inside is fine."""
    real_root = os.path.realpath(root)
    lexical = Path(os.path.normpath(path))
    base = Path(os.path.normpath(os.path.abspath(root)))
    if lexical != base and not lexical.is_relative_to(base):
        return lexical
    current = base
    for part in lexical.relative_to(base).parts:
        current = current / part
        try:
            if not os.path.islink(current):
                continue
        except OSError:  # pragma: no cover - islink never raises on Linux
            return current
        real = os.path.realpath(current)
        if os.path.commonpath([real_root, real]) != real_root:
            return current
    return None


def temporary_at(dir_fd: int, name: str, data: bytes, mode: int, *, fsync: bool = True) -> str:
    """`data` in a new temporary beside `name` in the directory `dir_fd` (O_EXCL|O_NOFOLLOW:
    never through a link), `mode` set whatever the umask; its name. Nothing is left behind
    when it fails."""
    tmp = f".{name[:200]}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if fsync:
                os.fsync(fd)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    return tmp


def replace_at(dir_fd: int, name: str, data: bytes, mode: int, *, fsync: bool = True) -> None:
    """The one atomic replace: `temporary_at`, then renamed over `name`. The temporary is
    removed when anything fails."""
    tmp = temporary_at(dir_fd, name, data, mode, fsync=fsync)
    try:
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    if fsync:
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
