"""Front matter already read, kept between server starts.

A server reads every command and skill file when it starts. Reading their YAML front
matter was most of the first `coder.listCommands` with 1,000 skills installed: ~35 ms of
PyYAML, and ~15 ms to import it, every start, for files that had not changed. Reading
front matter is a pure function of its text (`frontmatter.read_meta`), so what it gave is
kept under that exact text: a text seen before costs a dictionary lookup, and a server
whose files were all seen before never imports PyYAML.

The memo is a file in the user's cache directory (`userdirs.cache_dir`, private to the
user: a workspace cannot write it), `frontmatter-<n>.msgpack`. Its header names the
reader it came from (the package version, and the size and modification time of
`frontmatter.py`), so a file another version wrote is ignored and replaced. A file that
cannot be read or decoded is ignored (the texts are read again); it is replaced
atomically (`fsutil.write_atomic`), without fsync (a torn one is only ignored), after a
load that read a text it did not hold, keeping the texts that load used first and the
others up to `MAX_ENTRIES`. The write waits `SAVE_DELAY` seconds on the event loop
(`save_soon`): not on the path of the first listing, nor of each changed file's reload
(one write for a burst of edits).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from coder_ls import __version__
from coder_ls.commands import frontmatter
from coder_ls.commands.frontmatter import CommandMeta, read_meta

log = logging.getLogger(__name__)

FORMAT = 1
MAX_ENTRIES = 20_000
SAVE_DELAY = 2.0  # seconds


class Entry(msgspec.Struct, array_like=True, frozen=True):
    meta: CommandMeta
    problems: tuple[str, ...]


class MemoFile(msgspec.Struct):
    reader: str  # which reader wrote it (`reader_id`)
    entries: dict[str, Entry]


def reader_id() -> str:
    """The reader the entries come from: a changed `frontmatter.py` (a release, or a
    developer's edit) reads anew."""
    try:
        st = os.stat(frontmatter.__file__)
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except (OSError, TypeError):
        stamp = "?"
    return f"{FORMAT}:{__version__}:{stamp}"


def memo_path(env: Mapping[str, str]) -> Path | None:
    from coder_ls.userdirs import cache_dir

    try:
        return cache_dir(env) / f"frontmatter-{FORMAT}.msgpack"
    except OSError:  # no cache directory at all: every start reads the texts
        return None


class FrontMatterMemo:
    """`read_meta`, remembered (see the module docstring). Called as a `MetaReader`."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._kept: dict[str, Entry] | None = None  # from the file, read on first use
        self._used: dict[str, Entry] = {}  # read or found since the last save
        self._new = 0  # texts read (not found) since the last save
        self._reader = ""
        self._scheduled: asyncio.TimerHandle | None = None

    def __call__(self, raw: str) -> tuple[CommandMeta, list[str]]:
        hit = self._used.get(raw)
        if hit is None:
            hit = self._load().get(raw)
            if hit is None:
                meta, problems = read_meta(raw)
                hit = Entry(meta, tuple(problems))
                self._new += 1
            self._used[raw] = hit
        return hit.meta, list(hit.problems)

    def _load(self) -> dict[str, Entry]:
        if self._kept is not None:
            return self._kept
        self._kept = {}
        self._reader = reader_id()
        if self.path is None:
            return self._kept
        try:
            data = self.path.read_bytes()
        except OSError:
            return self._kept
        try:
            memo = msgspec.msgpack.decode(data, type=MemoFile)
        except (msgspec.DecodeError, msgspec.ValidationError):
            log.debug("front matter memo %s unreadable: ignored", self.path)
            return self._kept
        if memo.reader == self._reader:
            self._kept = memo.entries
        return self._kept

    def save_soon(self) -> None:
        """`save` in `SAVE_DELAY` seconds on the running loop (once for many calls); at once
        when no loop runs (a script, a test building the engine)."""
        if not self._new or self.path is None or self._scheduled is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.save()
            return
        self._scheduled = loop.call_later(SAVE_DELAY, self.save)

    def save(self) -> None:
        """Write the memo when a text was read that it did not hold (else nothing)."""
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        if not self._new or self.path is None:
            return
        from coder_ls.fsutil import ANYWHERE, write_atomic

        entries = dict(self._used)
        for raw, entry in self._load().items():
            if len(entries) >= MAX_ENTRIES:
                break
            entries.setdefault(raw, entry)
        try:
            data = msgspec.msgpack.encode(MemoFile(self._reader, entries))
            write_atomic(self.path, data, root=ANYWHERE, fsync=False)  # the user's cache
        except OSError as exc:
            log.debug("front matter memo not written: %s", exc)
        self._kept, self._used, self._new = entries, {}, 0
