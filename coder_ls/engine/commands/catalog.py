"""The catalog as clients see it (`coder.listCommands`, `/help`): hidden commands left out
unless asked for, each entry's availability computed now (`availability.py`)."""

from __future__ import annotations

import msgspec

from coder_ls.engine.commands.availability import Probe, unavailable
from coder_ls.engine.commands.registry import Registry
from coder_ls.protocol.results import CommandInfo


def visible(registry: Registry, *, include_hidden: bool = False) -> list[CommandInfo]:
    return [info for info in registry.catalog() if include_hidden or not info.hidden]


async def listing(registry: Registry, probe: Probe, *, include_hidden: bool = False) -> list[CommandInfo]:
    out: list[CommandInfo] = []
    for info in visible(registry, include_hidden=include_hidden):
        command = registry.get(info.name)
        reason = await unavailable(command, "", probe) if command is not None else None
        out.append(info if reason is None else msgspec.structs.replace(info, available=False, reason=reason))
    return out
