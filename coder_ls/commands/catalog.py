"""The catalog as clients see it (`coder.listCommands`, `/help`): hidden commands left out
unless asked for, each entry's availability computed now (`availability.py`).

`Listings` gives a listing again while nothing it was built from changed: the registry's
entries (one list per change of the sources), what availability looks at (the git
repository, the model, the disabled list: `Probe.conditions`, checked at every listing,
never kept) and how far the session's touched files go. So the conditions are checked
once per listing, not once per entry, and an unchanged listing costs no pass over its
1,000 entries; the same `CommandCatalog` object comes back, whose encoded bytes the LSP
edge keeps (`lsp/replies.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from coder_ls.commands.activation import Touched, activated_by
from coder_ls.commands.availability import Probe, unavailable
from coder_ls.commands.registry import Registry
from coder_ls.protocol.results import Activation, CommandCatalog, CommandInfo


def _activated(info: CommandInfo, touched: Touched | Sequence[str]) -> CommandInfo:
    """A conditional skill's entry with whether the session's files activated it."""
    if info.activation is None or not (touched.paths if isinstance(touched, Touched) else touched):
        return info
    paths = info.activation.paths
    by = touched.first_match(tuple(paths)) if isinstance(touched, Touched) else activated_by(paths, touched)
    return msgspec.structs.replace(
        info, activation=Activation(paths=info.activation.paths, active=by is not None, by=by)
    )


def visible(
    registry: Registry, *, include_hidden: bool = False, touched: Touched | Sequence[str] = ()
) -> list[CommandInfo]:
    return [_activated(info, touched) for info in registry.catalog() if include_hidden or not info.hidden]


def listing(
    registry: Registry, probe: Probe, *, include_hidden: bool = False, touched: Touched | Sequence[str] = ()
) -> list[CommandInfo]:
    """The catalog with each entry's availability as of now: one pass over the entries,
    each distinct set of needs checked once (`Probe.all_met`), `unavailable` only asked
    why for an entry that cannot run (a 1,000-skill listing asked it 1,000 times)."""
    out: list[CommandInfo] = []
    disabled = probe.disabled
    for info, command, needs in registry.entries():
        if info.hidden and not include_hidden:
            continue
        if command is not None and (disabled or (needs and not probe.all_met(needs))):
            reason = unavailable(command, "", probe)
            if reason is not None:
                info = registry.unavailable_entry(info, reason)
        out.append(_activated(info, touched))
    return out


class Listing(NamedTuple):
    catalog: CommandCatalog
    reply: str  # `/name hint` lines, the result's text


class Listings:
    """The last listing with and without hidden commands (see the module docstring)."""

    def __init__(self) -> None:
        # include_hidden -> (entries, conditions, touched, touched count, the listing)
        self._last: dict[bool, tuple[object, tuple[object, ...], object, int, Listing]] = {}

    def get(
        self, registry: Registry, probe: Probe, *, include_hidden: bool = False, touched: Touched | Sequence[str] = ()
    ) -> Listing:
        entries = registry.entries()
        conditions = probe.conditions()  # checked now, every time
        seen = touched if isinstance(touched, Touched) else tuple(touched)
        count = len(touched.paths) if isinstance(touched, Touched) else 0
        hit = self._last.get(include_hidden)
        if hit is not None and hit[0] is entries and hit[1] == conditions and hit[3] == count:
            if hit[2] is seen or (isinstance(seen, tuple) and hit[2] == seen):
                return hit[4]
        infos = listing(registry, probe, include_hidden=include_hidden, touched=touched)
        made = Listing(
            CommandCatalog(commands=infos), "\n".join(f"/{c.name} {c.argument_hint}".rstrip() for c in infos)
        )
        self._last[include_hidden] = (entries, conditions, seen, count, made)
        return made
