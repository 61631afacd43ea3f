"""Pins: how bubblewrap keeps the protected paths out of a writable root that is writable whole.

Each writable top (the workspace, each `sandbox.writableRoots` entry) is bound writable
whole, its top included, so the agent can create, rename and remove entries there (`sed -i
README.md`, `mkdir build`, `python3 -m compileall .`). What must stay out of its reach (the
paths of `protected.py`: `.git`, `.envrc`, ..., the home's list, the server's own folders)
is held by mounts laid over it, in this order:

- **anchors**: each folder between a top and a deeper pin (`libs` and `libs/x` for
  `libs/x/.git`) bound writable over itself. The kernel lets a process rename a folder that
  holds a mount point, which would carry the pin away and free the name (`mv libs l2; mkdir
  -p libs/x`); a mount point itself cannot be renamed or removed (EBUSY).
- **pins**: each existing protected entry bound read-only over itself: writes fail with
  EROFS, and unlink, rename-over and rmdir with EBUSY.
- **placeholders**: an absent protected name at a top gets an empty directory made on the
  host (`Placeholders`), then pinned: a mount needs an entry. An empty directory is invisible
  to git (`git status`, `git add -A`) and inert for the tools that read those names.
- **splits**, where neither works: the folder is bound read-only and its entries granted one
  by one around what is kept out (`protected.writable_parts`, as Landlock does): the home
  folder when a top holds it (bash takes a `.bash_profile` directory for an existing file and
  then skips `.profile`: no placeholder there), the folder holding a protected name that is a
  link (a mount follows the link, and the link itself could be removed and the name made
  again), and the nearest existing folder of a deeper absent path.

A pin is a mount on one directory entry: when a process outside replaces or removes that
entry (an editor's atomic save, `git checkout`, `git clean`), the kernel detaches the mount
and the name becomes writable in the sandbox. `Layout.held` names every entry whose
replacement would undo a mount, with its identity, for the agent's shell to watch and check
again before each command (`engine/pinguard.py`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import msgspec

from coder_ls.guard.protected import writable_parts

RECORD = "placeholders.json"  # in the server's run directory (`lifetime.run_dir`)


# Protected names that get no placeholder when absent: an empty folder in their place breaks
# a program that reads them on its own, all day. VS Code's git extension reads `.gitmodules`
# at every status and fails the whole update on a folder there (EISDIR; seen in the real
# editor). What an agent-made `.gitmodules` names (a submodule's path and URL) is no more than
# a nested repository, which a sandboxed command can make anywhere below the top already; an
# existing one stays pinned, and the file tools ask about it as before.
UNHELD_WHEN_ABSENT = frozenset({".gitmodules"})


class Held(msgspec.Struct, frozen=True):
    """An entry a mount sits on, as it was when the layout was made."""

    path: str
    dev: int
    ino: int
    kind: int  # S_IFMT: a placeholder folder removed and a file made in its place may reuse the inode


class Layout(msgspec.Struct, frozen=True):
    """The mounts of the writable tops, as (bubblewrap option, path) in order, and what they hold."""

    mounts: tuple[tuple[str, str], ...] = ()
    held: tuple[Held, ...] = ()  # pins, anchors and split folders: watched, checked before each command
    placeholders: tuple[str, ...] = ()  # taken from `Placeholders`; given back when the shell closes

    def watched(self) -> dict[str, frozenset[str]]:
        """folder -> the names in it whose change (created, removed, renamed) undoes a mount."""
        out: dict[str, set[str]] = {}
        for h in self.held:
            parent, name = os.path.split(h.path)
            out.setdefault(parent, set()).add(name)
        return {k: frozenset(v) for k, v in out.items()}

    def changed(self) -> str | None:
        """The first held entry that is gone or another one now (one `lstat` each), or None."""
        for h in self.held:
            try:
                st = os.lstat(h.path)
            except OSError:
                return h.path
            if (st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode)) != (h.dev, h.ino, h.kind):
                return h.path
        return None

    def detached(self, mountinfo: bytes) -> str | None:
        """The first held entry with no mount on it in a sandbox's `/proc/<pid>/mountinfo`
        (the kernel dropped it: the entry was replaced or removed outside), or None. Unlike
        `changed`, blind to nothing: not even to an inode number used again."""
        points = {_unescape(line.split(b" ")[4]) for line in mountinfo.splitlines() if line.count(b" ") > 4}
        for h in self.held:
            if os.fsencode(h.path) not in points:
                return h.path
        return None


def _unescape(field: bytes) -> bytes:
    """A mountinfo path: space, tab, newline and backslash come as octal escapes."""
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), field)


def _hold(path: Path) -> Held:
    try:
        st = os.lstat(path)
    except OSError:
        return Held(str(path), -1, -1, -1)  # gone already: `changed` says so at once
    return Held(str(path), st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode))


def _between(top: Path, folder: Path) -> list[Path]:
    """The folders below `top` down to `folder` included (none when `folder` is `top`)."""
    out, path = [], top
    for part in folder.relative_to(top).parts:
        path = path / part
        out.append(path)
    return out


def _first_link(top: Path, path: Path) -> Path | None:
    """The first component of `path` below `top` that is a symbolic link."""
    for p in _between(top, path):
        if p.is_symlink():
            return p
    return None


def _nearest(top: Path, path: Path) -> Path:
    """The nearest existing folder above an absent `path`, `top` at most."""
    found = top
    for p in _between(top, path.parent):
        if not p.is_dir():
            break
        found = p
    return found


def _depth(p: Path) -> int:
    return len(p.parts)


def _split(folder: Path, keep: Collection[Path]) -> list[tuple[str, str]]:
    dirs, files = writable_parts(folder, keep)
    if dirs == [str(folder)] and not files:
        return [("--bind", str(folder))]
    return [("--ro-bind", str(folder)), *(("--bind", p) for p in (*dirs, *files))]


class _Top:
    """The layout of one writable top: what holds each kept-out path below it."""

    def __init__(self, top: Path, keep: set[Path], splits: Iterable[Path]) -> None:
        self.top, self.keep = top, keep
        self.regions = set(splits)
        self.pins: set[Path] = set()
        self.anchors: set[Path] = set()
        self.wanted: set[Path] = set()  # placeholders to make, at the top
        for k in sorted(keep):
            self._place(k)

    def _place(self, k: Path) -> None:
        top = self.top
        if any(k.is_relative_to(r) for r in self.regions):
            return
        if (link := _first_link(top, k)) is not None:
            self.regions.add(link.parent)
            self.anchors.update(_between(top, link.parent.parent) if link.parent != top else ())
        elif os.path.lexists(k):
            self.pins.add(k)
            self.anchors.update(_between(top, k.parent))
        elif k.parent == top and k.name in UNHELD_WHEN_ABSENT:
            return  # an empty folder there would break its readers: see UNHELD_WHEN_ABSENT
        elif (near := _nearest(top, k)) == top:
            self.wanted.add(top / k.relative_to(top).parts[0])
        else:
            self.regions.add(near)
            self.anchors.update(_between(top, near.parent))

    def mounts(self, placeholders: Sequence[Path]) -> tuple[list[tuple[str, str]], list[Path]]:
        """(mounts, held entries), the placeholders made pinned like the rest."""
        if self.top in self.regions:
            return _split(self.top, self.keep), []
        regions = {r for r in self.regions if not any(r != o and r.is_relative_to(o) for o in self.regions)}
        inside = lambda p: any(p.is_relative_to(r) for r in regions)  # noqa: E731 - a split holds it
        pins = sorted({p for p in (*self.pins, *placeholders) if not inside(p)}, key=_depth)
        anchors = sorted((a for a in self.anchors if not inside(a)), key=_depth)
        out = [("--bind", str(self.top))]
        out += [("--bind", str(a)) for a in anchors]
        out += [("--ro-bind", str(p)) for p in pins]
        for r in sorted(regions, key=_depth):
            out += _split(r, {k for k in self.keep if k.is_relative_to(r)})
        return out, [*anchors, *pins, *sorted(regions, key=_depth)]


def plan(
    tops: Sequence[Path],
    keep_out: Collection[Path],
    splits: Collection[Path] = (),
    holder: Placeholders | None = None,
) -> Layout:
    """The mounts that make each of `tops` (resolved) writable except `keep_out` (existing or
    not). With a `holder` (a caller that watches `Layout.held`), each top is writable whole
    around pins and placeholders, `splits` and what cannot be pinned split; without one, every
    top is split (a pin undone on the host would go unnoticed)."""
    ordered = sorted(set(tops), key=_depth)  # outer first: a later bind hides what is below it
    mounts: list[tuple[str, str]] = []
    held: list[Path] = []
    taken: list[Path] = []
    for top in ordered:
        inner = [t for t in ordered if t != top and t.is_relative_to(top)]
        mine = {k for k in keep_out if (k.is_relative_to(top) or top.is_relative_to(k))}
        mine = {k for k in mine if not any(k.is_relative_to(t) for t in inner)}
        if any(top.is_relative_to(k) for k in mine):  # the top itself is kept out
            mounts.append(("--ro-bind", str(top)))
            continue
        regions = [s for s in splits if s.is_relative_to(top) and not any(s.is_relative_to(t) for t in inner)]
        layout = _Top(top, mine, regions if holder is not None else [top])
        made = _take(holder, layout)
        if made is None:  # a name could not be held: this top as Landlock has it
            layout.regions.add(top)
            made = []
        top_mounts, top_held = layout.mounts(made)
        mounts += top_mounts
        held += top_held
        taken += made
    return Layout(tuple(mounts), tuple(_hold(p) for p in held), tuple(str(p) for p in taken))


def _take(holder: Placeholders | None, layout: _Top) -> list[Path] | None:
    """The placeholders this top needs, made or shared (and those existing pins that are one
    of ours, shared); None when one could not be made."""
    if holder is None or layout.top in layout.regions:
        return []
    made: list[Path] = []
    for pin in sorted(layout.pins):
        if pin.parent == layout.top and holder.owns(pin) and holder.acquire(pin):
            made.append(pin)
    layout.pins.difference_update(made)
    for name in sorted(layout.wanted):
        if holder.acquire(name):
            made.append(name)
        elif os.path.lexists(name) and not os.path.islink(name):  # it appeared meanwhile: pin it
            layout.pins.add(name)
        else:
            holder.release(made)
            return None
    return made


class Placeholders:
    """The empty folders this server made to hold absent protected names, shared by its agent
    shells (counted) and recorded in `record` (in its run directory), so that the next server
    removes what a killed one left (`remove_recorded`). One a run directory (`registry`)."""

    def __init__(self, record: Path) -> None:
        self._record = record
        self._made: dict[str, tuple[int, int, int]] = {}  # path -> (dev, ino, users)

    def owns(self, path: Path) -> bool:
        entry = self._made.get(str(path))
        if entry is None:
            return False
        if _is(str(path), entry[0], entry[1]):
            return True
        del self._made[str(path)]  # replaced or removed on the host: not ours any more
        self._save()
        return False

    def acquire(self, path: Path) -> bool:
        """Make (or share) the placeholder `path`; False when it cannot be made."""
        key = str(path)
        if self.owns(path):
            dev, ino, users = self._made[key]
            self._made[key] = (dev, ino, users + 1)
            return True
        try:
            os.mkdir(key, 0o755)
            st = os.lstat(key)
        except OSError:
            return False
        self._made[key] = (st.st_dev, st.st_ino, 1)
        self._save()
        return True

    def release(self, paths: Iterable[str | Path]) -> None:
        """Give back; a placeholder no shell uses is removed if still ours and empty."""
        changed = False
        for path in map(str, paths):
            entry = self._made.get(path)
            if entry is None:
                continue
            dev, ino, users = entry
            if users > 1:
                self._made[path] = (dev, ino, users - 1)
                continue
            del self._made[path]
            _remove(path, dev, ino)
            changed = True
        if changed:
            self._save()

    def _save(self) -> None:
        data = msgspec.json.encode([{"path": p, "dev": d, "ino": i} for p, (d, i, _u) in self._made.items()])
        tmp = self._record.with_name(self._record.name + ".tmp")
        with contextlib.suppress(OSError):
            tmp.write_bytes(data)
            os.replace(tmp, self._record)


@functools.cache
def registry(record: Path) -> Placeholders:
    """The placeholders of this server (one record, one registry)."""
    return Placeholders(record)


def _is(path: str, dev: int, ino: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) == (dev, ino)


def _remove(path: str, dev: int, ino: int) -> bool:
    """rmdir `path` if it is still the empty folder we made."""
    if not _is(path, dev, ino):
        return False
    try:
        os.rmdir(path)
    except OSError:  # not empty: somebody put something in it, it is theirs now
        return False
    return True


class _Entry(msgspec.Struct):
    path: str
    dev: int
    ino: int


def remove_recorded(record: Path) -> int:
    """Remove the placeholders a server recorded (at its exit, or a dead server's at the next
    one's start); how many were removed."""
    try:
        entries = msgspec.json.decode(record.read_bytes(), type=list[_Entry])
    except (OSError, msgspec.DecodeError):
        return 0
    return sum(_remove(e.path, e.dev, e.ino) for e in entries)
