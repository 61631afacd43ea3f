"""The catalog as clients see it (`coder.listCommands`, `/help`): hidden commands left out
unless asked for, each entry's availability computed now (`availability.py`)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from coder_ls.engine.activation import activated_by
from coder_ls.engine.commands.availability import Probe, unavailable
from coder_ls.engine.commands.registry import Registry
from coder_ls.protocol.results import Activation, CommandInfo


def _activated(info: CommandInfo, touched: Sequence[str]) -> CommandInfo:
    """A conditional skill's entry with whether the session's files activated it."""
    if info.activation is None or not touched:
        return info
    by = activated_by(info.activation.paths, touched)
    return msgspec.structs.replace(
        info, activation=Activation(paths=info.activation.paths, active=by is not None, by=by)
    )


def visible(registry: Registry, *, include_hidden: bool = False, touched: Sequence[str] = ()) -> list[CommandInfo]:
    return [_activated(info, touched) for info in registry.catalog() if include_hidden or not info.hidden]


def listing(
    registry: Registry, probe: Probe, *, include_hidden: bool = False, touched: Sequence[str] = ()
) -> list[CommandInfo]:
    out: list[CommandInfo] = []
    entries = visible(registry, include_hidden=include_hidden, touched=touched)
    for info in entries:
        command = registry.get(info.name)
        reason = unavailable(command, "", probe) if command is not None else None
        out.append(info if reason is None else msgspec.structs.replace(info, available=False, reason=reason))
    return out
