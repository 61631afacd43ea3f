"""Base classes for every wire struct: camelCase keys, no unknown keys."""

from __future__ import annotations

import msgspec


class Wire(msgspec.Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=False):
    """A struct that goes over the wire with camelCase keys."""


class Loose(msgspec.Struct, rename="camel", omit_defaults=False):
    """A wire struct that tolerates unknown keys (things clients send us freely)."""
