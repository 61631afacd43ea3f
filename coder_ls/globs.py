"""Glob patterns over POSIX relative paths: one translation for every caller (the grants'
and rules' path globs, `grep`/`glob`'s filters, conditional skills' `paths:`).

`*` and `?` stay within one path segment, `**/` matches any number of directories (zero
included), `{a,b}` alternatives and `[...]` classes (`[!...]` negated) work, a leading
`./` is ignored. `name_or_path_match`: a glob without a `/` matches a file's name at any
depth (`*.sql`), as ripgrep's and Claude Code's do.
"""

from __future__ import annotations

import functools
import re

__all__ = ["glob_match", "glob_regex", "name_or_path_match"]


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j == -1:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : j]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "{":
            j = pattern.find("}", i)
            if j == -1:
                out.append(re.escape(c))
                i += 1
                continue
            alternatives = pattern[i + 1 : j].split(",")
            out.append("(?:" + "|".join(_translate(a) for a in alternatives) + ")")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regex for a glob over POSIX relative paths.

    `*` and `?` stay within one path segment, `**/` matches any number of
    directories (zero included), `{a,b}` alternatives and `[...]` classes work.
    A leading `./` is ignored.
    """
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return re.compile(_translate(pattern) + r"\Z")


def glob_match(pattern: str, rel_path: str) -> bool:
    """Whether `rel_path` (POSIX, relative) matches `pattern` (see `glob_regex`)."""
    return glob_regex(pattern).match(rel_path) is not None


def name_or_path_match(pattern: str, rel_path: str) -> bool:
    """`glob_match`, where a pattern without `/` is matched against the file's name only."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if not pattern:
        return False
    return glob_match(pattern, rel_path if "/" in pattern else rel_path.rsplit("/", 1)[-1])
