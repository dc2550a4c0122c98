"""What a heading says: its date, its author and its title."""

from __future__ import annotations

import re
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


def _read_heading(text: str) -> tuple[str, str, datetime | None, bool]:
    """(title, author, date, date has a time) of a heading's text: the date prefix, a `— Name:` part
    after it, and a `Decision:` prefix removed."""
    author = ""
    when: datetime | None = None
    timed = False
    rest = text
    matched = _DATE.match(rest)
    if matched:
        when, timed = _date_from(matched)
        rest = rest[matched.end() :]
        byline = _AUTHOR_PART.match(rest)
        if byline and _looks_like_name(byline.group(1)):
            author = _clean_person(byline.group(1))
            rest = byline.group(2)
        else:
            rest = _LEADING_SEPARATOR.sub("", rest, count=1)
    prefix = _DECISION_PREFIX.match(rest)
    if prefix:
        rest = rest[prefix.end() :]
    return rest.strip(), author, when, timed
