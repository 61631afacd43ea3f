"""Timestamps as the user sees them: ISO 8601 with offset, and a short human form.

Everything is stored as UTC epoch seconds (float); only presentation uses a timezone.
The configured timezone is an IANA name (default `Asia/Shanghai`). A name that does not
resolve never breaks a listing: formatting falls back to `Asia/Shanghai` and says so,
either through `FormattedTime.fell_back` or, for callers that prefer an exception,
through `UnknownTimezone` raised by `get_zone`.
"""

from __future__ import annotations

import functools
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

DEFAULT_TIMEZONE = "Asia/Shanghai"


class UnknownTimezone(ValueError):
    """`name` is not an IANA timezone this system knows."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"unknown timezone {name!r}: expected an IANA name such as 'Asia/Shanghai' "
            f"or 'Europe/Paris'; using {DEFAULT_TIMEZONE}"
        )


class FormattedTime(msgspec.Struct, frozen=True):
    """One instant, formatted. `timezone` is the zone actually used."""

    iso: str  # "2026-11-22T11:03:00+08:00"
    human: str  # "2026-11-22 11:03 (Asia/Shanghai)"
    timezone: str
    fell_back: bool = False  # the requested name was unknown; DEFAULT_TIMEZONE was used


@functools.lru_cache(maxsize=64)
def _load_zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def get_zone(tz_name: str) -> ZoneInfo:
    """The zone for an IANA name; raises `UnknownTimezone` if it does not resolve."""
    name = tz_name.strip() if isinstance(tz_name, str) else ""
    if not name:
        raise UnknownTimezone(str(tz_name))
    try:
        return _load_zone(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        # ValueError: malformed keys ("../x", absolute paths); OSError: a directory
        # of the tz database ("America") on some platforms.
        raise UnknownTimezone(name) from exc


def resolve_zone(tz_name: str | None) -> tuple[ZoneInfo, bool]:
    """(zone, fell_back): the named zone, or `Asia/Shanghai` with `fell_back=True`.

    `None` means "not configured" and yields the default without a fallback flag.
    """
    if tz_name is None:
        return _load_zone(DEFAULT_TIMEZONE), False
    try:
        return get_zone(tz_name), False
    except UnknownTimezone:
        return _load_zone(DEFAULT_TIMEZONE), True


def is_valid_timezone(tz_name: str) -> bool:
    """Whether `tz_name` resolves (for configuration validation)."""
    try:
        get_zone(tz_name)
    except UnknownTimezone:
        return False
    return True


def _format_in(epoch: float, zone: tzinfo, label: str) -> tuple[str, str]:
    moment = datetime.fromtimestamp(epoch, zone)
    iso = moment.isoformat(timespec="seconds")
    human = f"{moment:%Y-%m-%d %H:%M} ({label})"
    return iso, human


def format_time_checked(epoch: float, tz_name: str | None) -> FormattedTime:
    """Format `epoch` in `tz_name`, reporting whether it had to fall back."""
    zone, fell_back = resolve_zone(tz_name)
    iso, human = _format_in(epoch, zone, zone.key)
    return FormattedTime(iso=iso, human=human, timezone=zone.key, fell_back=fell_back)


def format_time(epoch: float, tz_name: str) -> tuple[str, str]:
    """(ISO 8601 with offset, human form) of a UTC epoch in the named timezone.

    >>> format_time(1795316580.0, "Asia/Shanghai")
    ('2026-11-22T11:03:00+08:00', '2026-11-22 11:03 (Asia/Shanghai)')

    An unknown name falls back to `Asia/Shanghai` (visible in the human form); use
    `format_time_checked` to learn that it happened and report it once.
    """
    formatted = format_time_checked(epoch, tz_name)
    return formatted.iso, formatted.human


def parse_iso(text: str) -> float:
    """The UTC epoch of an ISO 8601 timestamp; a naive one is taken as UTC."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_load_zone("UTC"))
    return moment.timestamp()
