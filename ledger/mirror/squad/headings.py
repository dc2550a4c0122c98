"""What a heading says: its date, its author and its title."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from ledger.mirror.squad.dates import _DATE, _date_from
from ledger.mirror.squad.lines import _one_line

_DECISION_PREFIX = re.compile(r"decision[ \t]*:[ \t]*", re.IGNORECASE)
_DECISION_HEADING = re.compile(r"decision[ \t]*:", re.IGNORECASE)
_DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}(?!\d)")
_AUTHOR_PART = re.compile(
    r"[ \t]*(?:\u2014|\u2013|--?)[ \t]*([^:\u2014\u2013]{1,60}?)[ \t]*:[ \t]*(.*)\Z", re.DOTALL
)
_LEADING_SEPARATOR = re.compile(r"\A[ \t]*(?::|\u2014|\u2013|--?|\|)?[ \t]*")
_AGENT_TOPIC = re.compile(r"([^\u2014\u2013:]{1,40}?)[ \t]+(?:\u2014|\u2013)[ \t]+\S")
# Canon's own block headings end with the time in UTC and the decision's id: `(14:05:11Z, #42)`.
_TIME_SUFFIX = re.compile(r"\(([0-9]{2}):([0-9]{2}):([0-9]{2})Z(?:, #[0-9]+)?\)")


def _clean_person(raw: str) -> str:
    """A person or agent as written in a field: `(Role)` and `(via …)` dropped, emphasis and white space
    trimmed."""
    kept: list[str] = []
    depth = 0
    for char in raw:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if not depth:
                kept.append(" ")
        elif not depth:
            kept.append(char)
    return _one_line("".join(kept)).strip("*_` ").rstrip(".,;").strip()


def _looks_like_name(candidate: str) -> bool:
    words = candidate.split()
    return 0 < len(words) <= 4 and candidate.casefold() != "decision" and not candidate[0].isdigit()


def _known(names: Iterable[str]) -> frozenset[str]:
    """People as `_read_heading` compares them: each cleaned as in a field, case-folded."""
    return frozenset(cleaned.casefold() for name in names if (cleaned := _clean_person(name)))


def _read_heading(text: str, known: frozenset[str] = frozenset()) -> tuple[str, str, datetime | None, bool]:
    """(title, author, date, date has a time) of a heading's text.

    Removed from the title, in order: a date prefix (any form `parse_date` reads); after it, either a
    `— Name:` part when Name is one of `known` (from `_known`), which gives the author, or a single
    `:`, em or en dash, `-`, `--` or `|` separator; a `Decision:` prefix; and, when the date has no time, the
    `(HH:MM:SSZ)` or `(HH:MM:SSZ, #id)` suffix Canon writes, which gives the time (UTC).
    """
    author = ""
    when: datetime | None = None
    timed = False
    rest = text
    matched = _DATE.match(rest)
    if matched:
        when, timed = _date_from(matched)
        rest = rest[matched.end() :]
        byline = _AUTHOR_PART.match(rest)
        if byline and _clean_person(byline.group(1)).casefold() in known:
            author = _clean_person(byline.group(1))
            rest = byline.group(2)
        else:
            rest = _LEADING_SEPARATOR.sub("", rest, count=1)
    prefix = _DECISION_PREFIX.match(rest)
    if prefix:
        rest = rest[prefix.end() :]
    rest = rest.strip()
    if when is not None and not timed:
        when, timed, rest = _time_suffix(when, rest)
    return rest, author, when, timed


def _time_suffix(day: datetime, title: str) -> tuple[datetime, bool, str]:
    """(date, has a time, title) once the `(HH:MM:SSZ[, #id])` suffix at the end of `title`, standing
    alone or after white space, is read into `day`'s time; unchanged when there is none."""
    opened = title.rfind("(")
    suffix = _TIME_SUFFIX.fullmatch(title, opened) if opened >= 0 else None
    if suffix is None or (opened and title[opened - 1] not in " \t"):
        return day, False, title
    hour, minute, second = (int(part) for part in suffix.groups())
    if hour > 23 or minute > 59 or second > 59:
        return day, False, title
    return day.replace(hour=hour, minute=minute, second=second), True, title[:opened].rstrip(" \t")
