"""pygls hands over what a client sent for a method it has no type for (a custom request's
result) as namedtuple-like `Object`s, and lsprotocol values as attrs classes: `plain()`
turns either back into plain JSON values, for msgspec to convert."""

from __future__ import annotations

from typing import Any


def plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "__attrs_attrs__"):
        from lsprotocol import converters

        return converters.get_converter().unstructure(value)
    return value
