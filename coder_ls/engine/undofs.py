"""The file-system half of `/undo`: check each path, then remove or rewrite it, never through a link.

Every operation starts from a descriptor of the workspace root and opens each folder on the way
with `O_NOFOLLOW | O_DIRECTORY` (openat semantics), so a folder swapped for a symlink — to a place
outside the workspace or not — is never entered: the path counts as absent (which is what git
sees too) and nothing is written, read or removed under it. The last component is handled with
`dir_fd` and no following: `unlink` removes a link itself, a rewrite is a temporary file in the
same folder renamed over the name.

A path is reverted only while it still holds what the submission left there: its git entry (mode
and blob id, computed here from the bytes on disk) must equal the one in the "after" snapshot.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from coder_ls.fsutil import replace_at

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
GITLINK = "160000"
SYMLINK = "120000"


class Entry(NamedTuple):
    """A git tree entry: mode (`100644`, `100755`, `120000`) and blob id."""

    mode: str
    oid: str


class Change(NamedTuple):
    """One path a submission changed: its entry before and after (None = absent)."""

    path: str
    before: Entry | None
    after: Entry | None


class Applied(NamedTuple):
    restored: list[str]
    removed: list[str]
    conflicts: list[str]


OTHER = Entry("other", "")  # a folder, a fifo, an unreadable or too large file: never "what it left"


def blob_id(data: bytes) -> str:
    """The git (sha-1) blob id of `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") or p.lower() == ".git" for p in parts):
        raise ValueError(f"not a workspace-relative path outside .git: {rel!r}")
    return parts


@contextlib.contextmanager
def _parent(root_fd: int, rel: str, *, create: bool) -> Iterator[tuple[int, str] | None]:
    """(descriptor of the folder holding `rel`, last name), or None when a folder on the way is
    missing (and `create` is false) or is not a real folder (a symlink, a file)."""
    *folders, name = _parts(rel)
    fd = os.dup(root_fd)
    try:
        for part in folders:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    yield None
                    return
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    yield None
                    return
            except OSError:  # ELOOP (a symlink), ENOTDIR (a file), EACCES...
                yield None
                return
            os.close(fd)
            fd = nxt
        yield fd, name
    finally:
        os.close(fd)


def current_entry(root_fd: int, rel: str, max_bytes: int) -> Entry | None:
    """What `rel` holds now, as git would record it; None when absent (for git: also when a
    folder on the way is a symlink or a file)."""
    with _parent(root_fd, rel, create=False) as found:
        if found is None:
            return None
        fd, name = found
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError:
            return OTHER
        if stat.S_ISLNK(st.st_mode):
            return Entry(SYMLINK, blob_id(os.fsencode(os.readlink(name, dir_fd=fd))))
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return OTHER
        try:
            data = _read(fd, name)
        except OSError:
            return OTHER
        return Entry("100755" if st.st_mode & stat.S_IXUSR else "100644", blob_id(data))


def _read(dir_fd: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def remove_entry(root_fd: int, rel: str) -> bool:
    """Unlink the file or link at `rel` (never what a link points at), then drop the folders this
    left empty. False when it could not (a folder on the way is not a real folder, ...)."""
    with _parent(root_fd, rel, create=False) as found:
        if found is None:
            return False
        fd, name = found
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        except OSError:
            return False
    _prune(root_fd, rel)
    return True


def _prune(root_fd: int, rel: str) -> None:
    """Remove the now-empty folders above `rel` (deepest first), stopping at the first that is not."""
    folders = _parts(rel)[:-1]
    while folders:
        folder = "/".join(folders)
        with _parent(root_fd, folder, create=False) as found:
            if found is None:
                return
            fd, name = found
            try:
                os.rmdir(name, dir_fd=fd)  # only when empty; a symlink there fails with ENOTDIR
            except OSError:
                return
        folders.pop()


def write_entry(root_fd: int, rel: str, mode: str, data: bytes) -> bool:
    """Put `data` at `rel` as a file (`100644`/`100755`) or a symlink (`120000`): a temporary in the
    same folder renamed over the name. Creates missing folders; False when it could not."""
    with _parent(root_fd, rel, create=True) as found:
        if found is None:
            return False
        fd, name = found
        if mode != SYMLINK:
            try:
                replace_at(fd, name, data, 0o755 if mode == "100755" else 0o644, fsync=False)
            except OSError:
                return False
            return True
        tmp = f".{name[:200]}.coder-undo.{os.getpid()}"
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=fd)
            os.symlink(os.fsdecode(data), tmp, dir_fd=fd)
            os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            return False
        return True


def _depth(change: Change) -> int:
    return change.path.count("/")


def apply_undo(
    root: str,
    changes: Sequence[Change],
    blobs: dict[str, bytes],
    already_conflicting: set[str],
    max_bytes: int,
) -> Applied:
    """Revert `changes` under `root`: each path that still holds its "after" entry goes back to its
    "before" entry (removed when it had none); the others are kept and returned as conflicts."""
    conflicts = set(already_conflicting)
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        ready = []
        for change in changes:
            if change.path in conflicts:
                continue
            try:
                now = current_entry(root_fd, change.path, max_bytes)
            except ValueError:  # never a path into .git or out of the workspace
                now = OTHER
            if now != change.after:
                conflicts.add(change.path)
            else:
                ready.append(change)
        removed: list[str] = []
        for change in sorted((c for c in ready if c.before is None), key=_depth, reverse=True):
            if remove_entry(root_fd, change.path):
                removed.append(change.path)
            else:
                conflicts.add(change.path)
        restored: list[str] = []
        for change in sorted((c for c in ready if c.before is not None), key=lambda c: c.path):
            assert change.before is not None
            data = blobs.get(change.before.oid)
            if data is not None and write_entry(root_fd, change.path, change.before.mode, data):
                restored.append(change.path)
            else:
                conflicts.add(change.path)
    finally:
        os.close(root_fd)
    return Applied(sorted(restored), sorted(removed), sorted(conflicts))
