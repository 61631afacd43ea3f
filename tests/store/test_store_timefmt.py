"""Times shown in the configured timezone."""

from __future__ import annotations

import pytest

from coder_ls.store.timefmt import (
    DEFAULT_TIMEZONE,
    FormattedTime,
    UnknownTimezone,
    format_time,
    format_time_checked,
    get_zone,
    is_valid_timezone,
    parse_iso,
)

EPOCH = 1795316580.0  # 2026-11-22 03:03:00 UTC


def test_shanghai() -> None:
    assert format_time(EPOCH, "Asia/Shanghai") == (
        "2026-11-22T11:03:00+08:00",
        "2026-11-22 11:03 (Asia/Shanghai)",
    )


def test_other_zones_and_dst() -> None:
    assert format_time(EPOCH, "UTC") == ("2026-11-22T03:03:00+00:00", "2026-11-22 03:03 (UTC)")
    assert format_time(EPOCH, "America/New_York")[0] == "2026-11-21T22:03:00-05:00"
    summer = EPOCH - 150 * 86400  # June: daylight saving time
    assert format_time(summer, "America/New_York")[0].endswith("-04:00")
    assert format_time(EPOCH, "Asia/Kolkata")[1] == "2026-11-22 08:33 (Asia/Kolkata)"


def test_seconds_are_truncated_in_human_form() -> None:
    iso, human = format_time(EPOCH + 59.9, "Asia/Shanghai")
    assert iso == "2026-11-22T11:03:59+08:00"
    assert human == "2026-11-22 11:03 (Asia/Shanghai)"


@pytest.mark.parametrize("bad", ["Mars/Olympus", "", "   ", "../etc/passwd", "America", "/etc/localtime"])
def test_unknown_timezone_falls_back_with_a_flag(bad: str) -> None:
    result = format_time_checked(EPOCH, bad)
    assert result == FormattedTime(
        iso="2026-11-22T11:03:00+08:00",
        human="2026-11-22 11:03 (Asia/Shanghai)",
        timezone=DEFAULT_TIMEZONE,
        fell_back=True,
    )
    assert format_time(EPOCH, bad) == (result.iso, result.human)
    assert not is_valid_timezone(bad)
    with pytest.raises(UnknownTimezone) as info:
        get_zone(bad)
    assert "Asia/Shanghai" in str(info.value)


def test_known_timezone_does_not_fall_back() -> None:
    assert not format_time_checked(EPOCH, "Europe/Paris").fell_back
    assert format_time_checked(EPOCH, None) == format_time_checked(EPOCH, "Asia/Shanghai")
    assert is_valid_timezone("Europe/Paris")


def test_parse_iso_round_trip() -> None:
    iso, _ = format_time(EPOCH, "Asia/Shanghai")
    assert parse_iso(iso) == EPOCH
    assert parse_iso("2026-11-22T03:03:00") == EPOCH  # naive = UTC
