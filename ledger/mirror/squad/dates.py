"""Dates as teams write them in headings, fields and file names."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ledger.mirror.squad.lines import _BOM

_ZONE_OFFSETS = {
    "UTC": 0,
    "GMT": 0,
    "PST": -480,
    "PDT": -420,
    "MST": -420,
    "MDT": -360,
    "CST": -360,
    "CDT": -300,
    "EST": -300,
    "EDT": -240,
    "CET": 60,
    "CEST": 120,
    "BST": 60,
    "JST": 540,
    "AEST": 600,
    "AEDT": 660,
}
_ZONE_NAMES = {
    "PT": ("America/Los_Angeles", -480),
    "MT": ("America/Denver", -420),
    "CT": ("America/Chicago", -360),
    "ET": ("America/New_York", -300),
}
_ZONE_WORDS = "|".join(sorted([*_ZONE_OFFSETS, *_ZONE_NAMES], key=len, reverse=True))
_DATE = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})(?!\d)"
    r"(?:"
    # Squad's `squad_decide` writes UTC times with '-' for ':' (`2026-11-26T11-04-35`)
    r"T(?P<dashed_hour>\d{2})-(?P<dashed_minute>\d{2})-(?P<dashed_second>\d{2})(?!\d)"
    r"|(?:T|[ \t]+)(?P<hour>\d{1,2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,9}))?)?(?!\d)"
    r"(?:[ \t]*(?P<offset>Z|[+-]\d{2}(?::?\d{2})?)(?!\d))?"
    r")?"
    rf"(?:[ \t]*\(?(?P<word>{_ZONE_WORDS})\)?(?![A-Za-z0-9]))?"
)
_COMPACT_DATE = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?(?!\d)")


@lru_cache(maxsize=8)
def _named_zone(word: str) -> tzinfo:
    name, standard = _ZONE_NAMES[word]
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return timezone(timedelta(minutes=standard))


def _zone(offset: str | None, word: str | None) -> tzinfo:
    if offset and offset != "Z":
        sign = -1 if offset[0] == "-" else 1
        digits = offset[1:].replace(":", "")
        minutes = int(digits[:2]) * 60 + (int(digits[2:]) if digits[2:] else 0)
        return timezone(sign * timedelta(minutes=minutes))
    if offset == "Z" or not word:
        return UTC
    if word in _ZONE_NAMES:
        return _named_zone(word)
    return timezone(timedelta(minutes=_ZONE_OFFSETS[word]))


def _date_from(matched: re.Match[str]) -> tuple[datetime | None, bool]:
    """The aware datetime a `_DATE` match stands for (None when it is not a real date), and whether it
    carries a time of day."""
    found = matched.groupdict()
    year, month, day = int(found["year"]), int(found["month"]), int(found["day"])
    try:
        if found["dashed_hour"] is not None:
            hour, minute, second = (int(found[f"dashed_{unit}"]) for unit in ("hour", "minute", "second"))
            return datetime(year, month, day, hour, minute, second, tzinfo=UTC), True
        if found["hour"] is None:
            return datetime(year, month, day, tzinfo=UTC), False
        fraction = found["fraction"]
        micro = int(fraction[:6].ljust(6, "0")) if fraction else 0
        return (
            datetime(
                year,
                month,
                day,
                int(found["hour"]),
                int(found["minute"]),
                int(found["second"] or 0),
                micro,
                tzinfo=_zone(found["offset"], found["word"]),
            ),
            True,
        )
    except (ValueError, OverflowError):
        return None, found["hour"] is not None or found["dashed_hour"] is not None


def _date_and_time(value: str) -> tuple[datetime | None, bool]:
    matched = _DATE.match(value.strip().lstrip(_BOM))
    if matched is None:
        return None, False
    return _date_from(matched)


def parse_date(value: str) -> datetime | None:
    """Read a date as teams write it, or None (never raises).

    Accepts `2026-03-02`, `2026-03-02T14:05:11Z`, `2026-03-02T14:05:11-08:00`, `2026-03-02 14:05`,
    `2026-03-02 14:05 PT`, `2026-02-27 PT` (a zone word without a time is ignored) and Squad's
    `squad_decide` timestamp `2026-11-26T11-04-35` (':' written as '-', always UTC), with anything after
    the date ignored. The result is aware: in the written offset or zone, UTC when none is written.
    """
    return _date_and_time(value)[0]


def _date_in_filename(filename: str) -> datetime | None:
    for matched in _COMPACT_DATE.finditer(filename):
        year, month, day, hour, minute, second, _ = matched.groups()
        try:
            if hour is None:
                return datetime(int(year), int(month), int(day), tzinfo=UTC)
            return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=UTC)
        except (ValueError, OverflowError):
            continue
    return None
