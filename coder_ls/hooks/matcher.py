"""Claude Code's matchers: which hooks of an event run for one tool (or source, trigger...).

As Claude Code documents them: case-sensitive; empty, missing or `*` matches everything;
a plain name (`Bash`) or a list of names (`Edit|Write`) matches exactly; anything else is
a regular expression searched in the value (`Notebook.*`, `mcp__memory__.*`, `mcp__.*__write.*`).
Our own tool names are tried too (`bash` and `Bash` both match the shell tool), so a
matcher written for either agent works. A regular expression that does not compile
matches nothing (and is reported once by the dispatcher).
"""

from __future__ import annotations

import re
from functools import lru_cache

_PLAIN = re.compile(r"^[A-Za-z0-9_|]+$")


@lru_cache(maxsize=256)
def _compiled(matcher: str) -> re.Pattern[str] | None:
    try:
        return re.compile(matcher)
    except re.error:
        return None


def valid(matcher: str) -> bool:
    return matcher in ("", "*") or bool(_PLAIN.match(matcher)) or _compiled(matcher) is not None


def matches(matcher: str, *values: str) -> bool:
    """Does `matcher` select any of `values` (the Claude Code name first, then ours)?"""
    if matcher in ("", "*"):
        return True
    if _PLAIN.match(matcher):
        names = set(matcher.split("|"))
        return any(v in names for v in values)
    pattern = _compiled(matcher)
    return pattern is not None and any(pattern.search(v) for v in values)
