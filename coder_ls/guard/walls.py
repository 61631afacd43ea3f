"""What the sandbox stopped, read from a sandboxed command's output: the paths it kept
read-only and the domains its network proxy refused. The bash tool's offer to run a command
again outside the sandbox names them, and is never made for a protected path.

A path comes from the error lines programs print: coreutils and most C tools (`touch:
cannot touch 'x': Read-only file system`), the shell's redirections (`bash: line 1: x:
Read-only file system`), Python (`OSError: [Errno 30] Read-only file system: '/x'`), Node
(`EROFS: read-only file system, open '/x'`), git (`fatal: Unable to create '…/index.lock':
…`). "Read-only file system" (EROFS) and "Device or resource busy" (EBUSY: a pinned entry
renamed over or removed) come from the sandbox's read-only mounts; "Permission denied" and
"Operation not permitted" are the sandbox's under Landlock, or for a path outside the
folders it may write, and otherwise the file's own permissions; "Is a directory" only for a
protected name (the empty directory that holds a missing one). A domain comes from the
proxy's refusal (`coder-ls proxy: <domain> is not allowed (sandbox.network)`) or from the
caller's list.

Such a line counts whatever the command's exit code (`echo x > /outside/f; echo done`
exits 0 with its write lost), unless the line only reads (a reader printing these words is
quoting them) or, the command having exited 0, the line calls itself a warning (pytest's
cache it could not write). Without a named path, a failed command (exit code not 0) whose output says
one of those errors, or that a name could not be resolved, still counts, unnamed.

The output is the command's own: it can print such a line for a path it never tried. The
offer therefore quotes where the name came from, shows the whole command, and is withheld
when either the output or the command's visible writes name a protected path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from coder_ls.guard import protected

ERRORS = {
    "read-only file system": "erofs",
    "device or resource busy": "ebusy",
    "resource busy or locked": "ebusy",
    "permission denied": "eacces",
    "operation not permitted": "eperm",
    "is a directory": "eisdir",  # a protected name held by an empty directory (a placeholder)
}
_FAILURES = (
    r"read-only file system|device or resource busy|resource busy or locked|permission denied|operation not permitted"
)
_ERR = rf"(?P<err>{_FAILURES}|is a directory)"
_Q = r"['\u2018\u2019\"`]"
_NAME = r"[^'\u2018\u2019\"`\n]+"
_LINE_PATTERNS = (
    # Python: `[Errno 30] Read-only file system: 'a'` (`-> 'b'` for a rename: the last one)
    re.compile(rf"\[Errno \d+\] {_ERR}: {_Q}(?P<path>{_NAME}){_Q}(?: -> {_Q}(?P<path2>{_NAME}){_Q})?", re.I),
    # Node: `EROFS: read-only file system, open '/x'`
    re.compile(rf"\bE(?:ROFS|BUSY|ACCES|PERM): {_ERR}, \w+ '(?P<path>[^']+)'(?: -> '(?P<path2>[^']+)')?", re.I),
    # `prog: cannot touch 'x': ERR`, `fatal: Unable to create '/x': ERR`: the last quoted name
    re.compile(rf"^[^\n]*{_Q}(?P<path>{_NAME}){_Q}[^'\n]*?: {_ERR}\s*$", re.I | re.M),
    # `bash: line 1: x: ERR`, `sh: 1: cannot create x: ERR`, `error: could not lock config file x: ERR`
    re.compile(rf"^[^\n:]*:(?: line \d+:| \d+:)? (?P<path>[^:\n]+): {_ERR}\s*$", re.I | re.M),
)
_PROXY = re.compile(r"coder-ls proxy: (?P<domain>[A-Za-z0-9*._-]+) is not allowed \(sandbox\.network\)")
_NETWORK = re.compile(
    r"^.*(?:could not resolve host|temporary failure in name resolution|name or service not known|"
    r"network is unreachable|getaddrinfo \w+).*$",
    re.I | re.M,
)
_GENERIC = re.compile(rf"^.*(?:{_FAILURES}).*$", re.I | re.M)
# Words one of the above needs: an output with none of them is read no further (most are).
_CLUES = (
    "file system",
    "busy",
    "denied",
    "not permitted",
    "directory",
    "coder-ls proxy",
    "resolv",
    "unreachable",
    "name or service",
    "getaddrinfo",
)
# What git executes or trusts inside `.git` (the git lane keeps these read-only): a wall
# there is a protected path; anything else in `.git` (the index, objects, refs) is git's data.
GIT_TRUSTED = frozenset({"config", "config.worktree", "hooks", "info", "commondir", "worktrees", "modules"})
QUOTE_WIDTH = 160


class Wall(msgspec.Struct, frozen=True):
    """One thing the sandbox stopped: a path (as the error printed it), a domain, the network
    (unnamed), or an error line with no name in it."""

    kind: Literal["path", "domain", "network", "other"]
    what: str
    error: str = ""  # "erofs", "ebusy", "eacces", "eperm" for a path
    protected: str = ""  # why the path is protected (then nothing is offered)

    def says(self) -> str:
        if self.kind == "domain":
            return f"the network proxy refused {self.what} (sandbox.network does not allow it)"
        if self.kind == "network":
            return f"it has no network in the sandbox (its output says `{self.what}`)"
        if self.kind == "other":
            return f"its output says `{self.what}`"
        how = "read-only in the sandbox" if self.error in ("erofs", "ebusy") else "refused by the sandbox"
        if self.protected:
            return f"{self.what} is protected ({self.protected})"
        return f"its output names {self.what} ({how})"


class Stopped(msgspec.Struct, frozen=True):
    walls: tuple[Wall, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.walls)

    @property
    def protected(self) -> tuple[Wall, ...]:
        return tuple(w for w in self.walls if w.protected)

    @property
    def offer(self) -> bool:
        """Whether running outside may be offered: something was stopped, nothing protected."""
        return bool(self.walls) and not self.protected

    def named(self, limit: int = 4) -> str:
        shown = [w.says() for w in self.walls[:limit]]
        more = len(self.walls) - limit
        return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def protected_reason(path: Path, root: Path) -> str:
    """Why a path the sandbox stopped is protected ("" when it is not): a protected name of
    the workspace (`guard/protected.py`), but inside `.git` only what git executes or trusts."""
    real_root = Path(os.path.realpath(root))
    for p, top in ((Path(os.path.realpath(path)), real_root), (path, Path(os.path.abspath(root)))):
        try:
            parts = p.relative_to(top).parts
        except ValueError:
            continue
        name = protected.protected_name(parts)
        if name is None:
            continue
        if name == ".git":
            rest = parts[parts.index(".git") + 1 :]
            trusted = not rest or rest[0] in GIT_TRUSTED or rest[0].startswith("config")
            if not trusted and rest[:3] != ("objects", "info", "alternates"):
                continue  # git's own data: the index, objects, refs
        return protected.reason(name)
    return ""


def _path_of(text: str) -> str:
    """The path in `cannot create x` or `could not lock config file .git/config`."""
    text = text.strip()
    if " " in text and not os.path.isabs(text):
        text = text.rsplit(" ", 1)[1]
    return text.strip("'\u2018\u2019\"`")


def _paths(output: str, *, warnings: bool) -> Iterable[tuple[str, str]]:
    """(path, error) of each error line; `warnings`: also the lines that call themselves one
    (`PytestCacheWarning: could not create cache path …`), which do not fail a command."""
    for i, pattern in enumerate(_LINE_PATTERNS):
        for m in pattern.finditer(output):
            start = output.rfind("\n", 0, m.start()) + 1
            end = output.find("\n", m.end())
            if not warnings and "warning" in output[start : end if end >= 0 else len(output)].lower():
                continue
            path = m.groupdict().get("path2") or m.group("path")
            if i == 3:
                path = _path_of(path)
            if path:
                yield path, ERRORS[m.group("err").lower()]


def _inside(real: Path, writable: Sequence[str]) -> bool:
    return any(real.is_relative_to(top) for top in writable)


def _quote(line: str) -> str:
    line = line.strip()
    return line if len(line) <= QUOTE_WIDTH else line[:QUOTE_WIDTH] + "…"


def clues(output: str, refused_domains: Sequence[str] = ()) -> bool:
    """Whether the output may tell of a wall at all (most do not: they are read no further)."""
    low = output.lower()
    return bool(refused_domains) or any(clue in low for clue in _CLUES)


def stopped(
    command: str,
    output: str,
    exit_code: int | None,
    *,
    root: Path,
    cwds: Sequence[Path],
    writable: Sequence[str],
    backend: str,
    network: str,
    refused_domains: Sequence[str] = (),
) -> Stopped:
    """What the sandbox stopped in this run of `command`. `cwds`: where the shell was
    before and after it (a relative name is judged against each); `writable`: the real
    folders it may write; `network`: "none", "all" or "domains"."""
    if not clues(output, refused_domains):
        return Stopped()
    from coder_ls.guard.shellparse import parse
    from coder_ls.guard.shellparse.reach import writes
    from coder_ls.guard.shellparse.readers import is_read_only

    line = parse(command, cwd=str(cwds[0]) if cwds else None)
    walls: list[Wall] = []

    def add(wall: Wall) -> None:
        if all((w.kind, w.what) != (wall.kind, wall.what) for w in walls):
            walls.append(wall)

    for domain in (*refused_domains, *(m.group("domain") for m in _PROXY.finditer(output))):
        add(Wall("domain", domain.lower()))
    if not is_read_only(line):
        for raw, error in _paths(output, warnings=exit_code not in (0, None)):
            places = [Path(os.path.normpath(c / raw)) for c in cwds] or [Path(raw)]
            why = next((r for p in places if (r := protected_reason(p, root))), "")
            outside = not any(_inside(Path(os.path.realpath(p)), writable) for p in places)
            sandboxs = error in ("erofs", "ebusy") or (error != "eisdir" and (backend == "landlock" or outside))
            if why or sandboxs:
                add(Wall("path", raw, error, why))
    if not walls and exit_code not in (0, None):
        if network != "all" and (m := _NETWORK.search(output)):
            add(Wall("network", _quote(m.group(0))))
        elif m := _GENERIC.search(output):
            add(Wall("other", _quote(m.group(0))))
    if walls:
        for w in writes(line)[0]:  # a protected path the command writes by name: never offered
            if w.after_cd:
                name = protected.protected_name(Path(w.target).parts)
                why = protected.reason(name) if name else ""
            else:
                places = [Path(os.path.normpath(c / os.path.expanduser(w.target))) for c in cwds]
                why = next((r for p in places if (r := protected_reason(p, root))), "")
            if why:
                add(Wall("path", w.target, "", why))
    return Stopped(tuple(walls))
