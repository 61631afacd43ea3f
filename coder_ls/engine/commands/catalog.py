"""The catalog as clients see it (`coder.listCommands`, `/help`): hidden commands left out
unless asked for, each entry's availability computed now (`availability.py`)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from coder_ls.engine.activation import Touched, activated_by
from coder_ls.engine.commands.availability import Probe, unavailable
from coder_ls.engine.commands.registry import Registry
from coder_ls.protocol.results import Activation, CommandInfo


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
