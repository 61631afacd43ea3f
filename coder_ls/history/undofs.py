"""The file-system half of `/undo`: check each path, then remove or rewrite it, never through a link.

Every operation starts from a descriptor of the workspace root and opens each folder on the way
with `O_NOFOLLOW | O_DIRECTORY` (openat semantics), so a folder swapped for a symlink — to a place
outside the workspace or not — is never entered: the path counts as absent (which is what git
sees too) and nothing is written, read or removed under it. The last component is handled with
`dir_fd` and no following: `unlink` removes a link itself, a rewrite is a temporary file in the
same folder renamed over the name.

A path is reverted only while it still holds what the submission left there: its git entry (mode
and blob id, computed here from the bytes on disk) must equal the one in the "after" snapshot.
Another process may write the same paths while `/undo` runs, so that check and the write are one
step per path, not two passes: the new content is prepared as a temporary beside the name, the
entry at the name is moved aside (atomic) and checked again, and the name is then created with
`RENAME_NOREPLACE`, never over a file someone created meanwhile; what was moved aside and is not
what the submission left goes back. No writer's rename is lost at any moment. (An atomic
`renameat2(RENAME_EXCHANGE)` would do it in one step, but editors watching the file, VS Code
among them, did not take the exchange as a change and kept showing the agent's text after
/undo.) A removal moves the entry aside first and checks it again. One case
stays out of reach: a writer that opened the file before the swap and writes into it afterwards
writes into the old, now unlinked, file (as with any rename-based write).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from coder_ls.fsutil import temporary_at

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
        return _entry_at(*found, max_bytes)


def _entry_at(fd: int, name: str, max_bytes: int) -> Entry | None:
    """What `name` in the folder `fd` holds now, as git would record it (None: absent)."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError:
        return OTHER
    if stat.S_ISLNK(st.st_mode):
        try:
            return Entry(SYMLINK, blob_id(os.fsencode(os.readlink(name, dir_fd=fd))))
        except OSError:
            return OTHER
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


RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """glibc's `renameat2` (Linux; glibc >= 2.28), or None."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def rename_flags(fd: int, src: str, dst: str, flags: int) -> bool:
    """`renameat2(fd, src, fd, dst, flags)`: True when done, False when this system or file
    system cannot (no renameat2, ENOSYS, EINVAL); any other failure raises OSError."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(fd, os.fsencode(src), fd, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), dst)


def _temporary(fd: int, name: str, mode: str, data: bytes) -> str:
    """A new temporary beside `name` holding `data` as a file of `mode` or a symlink; its name."""
    if mode != SYMLINK:
        return temporary_at(fd, name, data, 0o755 if mode == "100755" else 0o644, fsync=False)
    tmp = f".{name[:200]}.coder-undo.{os.getpid()}.{os.urandom(4).hex()}"
    os.symlink(os.fsdecode(data), tmp, dir_fd=fd)
    return tmp


def _create_new(fd: int, src: str, dst: str) -> bool:
    """Move `src` to `dst` only if `dst` does not exist (then False and `src` stays)."""
    try:
        if rename_flags(fd, src, dst, RENAME_NOREPLACE):
            return True
    except FileExistsError:
        return False
    try:  # no renameat2: a hard link is created only where no name is, atomically too
        os.link(src, dst, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
    except FileExistsError:
        return False
    os.unlink(src, dir_fd=fd)
    return True


def _revert_one(fd: int, name: str, change: Change, data: bytes, max_bytes: int) -> bool:
    """Put `change.before` at `name` if, up to the atomic swap, it held `change.after`."""
    assert change.before is not None
    if _entry_at(fd, name, max_bytes) != change.after:
        return False  # changed since the submission: no need to prepare anything
    tmp = _temporary(fd, name, change.before.mode, data)
    try:
        if change.after is None:  # the submission removed it: create it, never over a newcomer
            return _create_new(fd, tmp, name)
        # Move what is there aside (atomic), check what was moved, and only then create the
        # name anew, never over a newcomer: a writer's rename over the name at any moment is
        # either what was moved aside (put back) or a newcomer the creation leaves alone.
        # (An exchange would do it in one step, but editors watching the file, VS Code among
        # them, do not take an exchange as a change and keep showing the old buffer.)
        aside = f".{name[:200]}.coder-undo.{os.getpid()}.{os.urandom(4).hex()}"
        try:
            os.rename(name, aside, src_dir_fd=fd, dst_dir_fd=fd)
        except FileNotFoundError:
            return False  # removed meanwhile: someone else's change, kept
        if _entry_at(fd, aside, max_bytes) != change.after:
            if not _create_new(fd, aside, name):  # a newer entry took the name: it stays
                os.unlink(aside, dir_fd=fd)
            return False
        if _create_new(fd, tmp, name):
            os.unlink(aside, dir_fd=fd)
            return True
        os.unlink(aside, dir_fd=fd)  # a writer created the name meanwhile: theirs stays
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=fd)


def _remove_one(fd: int, name: str, change: Change, max_bytes: int) -> bool:
    """Remove `name` if, up to the moment it is moved aside, it held `change.after`."""
    if _entry_at(fd, name, max_bytes) != change.after:
        return False
    aside = f".{name[:200]}.coder-undo.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        os.rename(name, aside, src_dir_fd=fd, dst_dir_fd=fd)
    except FileNotFoundError:
        return True  # removed by someone else meanwhile: what /undo wanted
    if _entry_at(fd, aside, max_bytes) == change.after:
        os.unlink(aside, dir_fd=fd)
        return True
    if not _create_new(fd, aside, name):  # a newer entry took the name: it stays
        if stat.S_ISDIR(os.stat(aside, dir_fd=fd, follow_symlinks=False).st_mode):
            os.rename(aside, name, src_dir_fd=fd, dst_dir_fd=fd)  # pragma: no cover - a folder raced in
        else:
            os.unlink(aside, dir_fd=fd)
    return False


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
    "before" entry (removed when it had none); the others are kept and returned as conflicts.

    Each path is checked and written in one step (see the module's docstring), removals first
    (deepest first, so a folder that replaced a file is gone before the file comes back)."""
    conflicts = set(already_conflicting)
    removed: list[str] = []
    restored: list[str] = []
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        removals = sorted((c for c in changes if c.before is None), key=_depth, reverse=True)
        rewrites = sorted((c for c in changes if c.before is not None), key=lambda c: c.path)
        for change in [*removals, *rewrites]:
            if change.path in conflicts:
                continue
            data = blobs.get(change.before.oid) if change.before is not None else b""
            if data is None or not _apply_one(root_fd, change, data, max_bytes):
                conflicts.add(change.path)
            elif change.before is None:
                removed.append(change.path)
                _prune(root_fd, change.path)
            else:
                restored.append(change.path)
    finally:
        os.close(root_fd)
    return Applied(sorted(restored), sorted(removed), sorted(conflicts))


def _apply_one(root_fd: int, change: Change, data: bytes, max_bytes: int) -> bool:
    try:
        with _parent(root_fd, change.path, create=change.before is not None) as found:
            if found is None:
                return change.after is None and change.before is None  # nothing there, nothing to remove
            fd, name = found
            if change.before is None:
                return _remove_one(fd, name, change, max_bytes)
            return _revert_one(fd, name, change, data, max_bytes)
    except ValueError:  # never a path into .git or out of the workspace
        return False
    except OSError:
        return False
