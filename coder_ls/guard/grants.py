"""A session's "Allow for session" grants: what the policy reads (`agent/policy.py`) and what
`/permissions` lists and takes back (`engine/permlist.py`). They stand here, below the
commands and the engine, so that both can name them without reaching up into the agent.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

import msgspec

from coder_ls.globs import glob_match

__all__ = ["Grant", "SessionGrants"]


class Grant(msgspec.Struct, frozen=True):
    """One "Allow for session": a tool plus an optional command prefix, path glob or domain."""

    tool: str
    command: str | None = None
    path: str | None = None
    domain: str | None = None  # a host name (the web tools): that host only


class SessionGrants:
    """The grants of one session (kept in memory, dropped with the session)."""

    def __init__(self, grants: Collection[Grant] = ()) -> None:
        self._grants: set[Grant] = set(grants)

    def add(self, grant: Grant) -> None:
        self._grants.add(grant)

    def clear(self) -> None:
        self._grants.clear()

    def discard(self, grant: Grant) -> bool:
        """`/permissions revoke`: drop one grant; False when the session did not hold it."""
        held = grant in self._grants
        self._grants.discard(grant)
        return held

    def __iter__(self) -> Iterator[Grant]:
        return iter(sorted(self._grants, key=lambda g: (g.tool, g.command or "", g.path or "", g.domain or "")))

    def __len__(self) -> int:
        return len(self._grants)

    def covers_path(self, tool: str, rel: str) -> bool:
        return any(
            g.tool == tool and g.command is None and g.domain is None and (g.path is None or glob_match(g.path, rel))
            for g in self._grants
        )

    def covers_domain(self, tool: str, host: str) -> bool:
        """A grant of `tool` for exactly this host (a web tool's "Allow for session")."""
        return any(g.tool == tool and g.domain == host for g in self._grants)
