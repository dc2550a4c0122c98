"""Squad's own file formats, read losslessly and written in the team's style. Pure functions, no database.

- `decisions.md`: `parse_decisions` splits the log into decision `Block`s and the verbatim `Text` between
  them; `render_block` writes a new block the way Squad's Scribe does.
- `agents/{name}/history.md`: `parse_history` splits an agent's memory into `Entry`s and `Text`;
  `render_entry` and `render_section_heading` write new ones.
- `decisions/inbox/*.md` without front matter: `parse_native_proposal`.
- Front matter (inbox files that have it, `identity/now.md`): `split_front_matter`, `load_yaml`, `render_now`.

Every parser is lossless: joining the `text` of the parts it returns gives back its input exactly, for any
string (CRLF, a byte-order mark, no final newline, odd Unicode). Only `\\n` ends a line; a `\\r` before it
stays with the line's ending. Parsing is linear in the size of the input.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from itertools import accumulate, pairwise
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from yaml.nodes import Node

from ledger.values import normalize_entry_slug

__all__ = [
    "DECISION_TYPES",
    "ENTRY_TYPES",
    "SECTION_FOR_TYPE",
    "SECTION_TYPES",
    "Block",
    "Entry",
    "FrontMatterError",
    "Proposal",
    "Text",
    "load_yaml",
    "newest_first",
    "parse_date",
    "parse_decisions",
    "parse_history",
    "parse_native_proposal",
    "render_block",
    "render_entry",
    "render_now",
    "render_section_heading",
    "slug_from_filename",
    "split_front_matter",
    "uses_separators",
]

DECISION_TYPES = ("architectural", "scope", "process", "technical")
ENTRY_TYPES = ("architectural", "scope", "process", "technical", "pattern", "learning", "update")

SECTION_TYPES = {"core context": "core_context", "learnings": "learning", "recent updates": "update"}
SECTION_FOR_TYPE = {
    "core_context": "Core Context",
    "learning": "Learnings",
    "update": "Recent Updates",
    "pattern": "Patterns",
}
# SECTION_TYPES plus the "Patterns" section, which holds `pattern` entries.
_HISTORY_SECTION_TYPES = {**SECTION_TYPES, "patterns": "pattern"}

_YAML_MAX_BYTES = 64 * 1024
_YAML_MAX_DEPTH = 64
_BOM = "\ufeff"
_PIN = "📌"

# --- shared line machinery ------------------------------------------------------------------------

_HEADING = re.compile(r"(#{1,6})(?:[ \t](.*))?\Z", re.DOTALL)
_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)\Z", re.DOTALL)
_FENCE_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*\Z")
_SEPARATOR = re.compile(r"---[ \t]*\Z")
_BOLD_FIELD_START = re.compile(
    r"\*\*(?:by|author|date|status|what)[ \t]*(?::\*\*|\*\*[ \t]*:)", re.IGNORECASE
)
_FIELD = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?\*\*([A-Za-z][A-Za-z ]{0,30}?)[ \t]*(?::\*\*|\*\*[ \t]*:)[ \t]*(.*)\Z", re.DOTALL
)
_PLAIN_FIELD = re.compile(r"[ \t]*(?:[-*+][ \t]+)?(owner|date)[ \t]*:[ \t]*(.*)\Z", re.IGNORECASE | re.DOTALL)


def _split_lines(text: str) -> tuple[list[str], list[str]]:
    """Return the lines of `text` with their endings, and their contents (no `\\n`, no `\\r` before it,
    no byte-order mark on the first)."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    else:
        pieces.pop()
    contents = [piece[:-1] if piece.endswith("\r") else piece for piece in pieces] if "\r" in text else pieces
    if contents and contents[0].startswith(_BOM):
        contents[0] = contents[0][1:]
    return lines, contents


def _is_blank(content: str) -> bool:
    return not content or content.isspace()


_FENCE_FIRST = frozenset("`~ \t")
_SCAN_FIRST = frozenset("#-`~ \t")


def _fence_opener(content: str) -> str:
    """The backticks or tildes opening fenced code on this line, "" when it opens none."""
    if content[:1] not in _FENCE_FIRST or content.lstrip(" \t")[:3] not in ("```", "~~~"):
        return ""
    opened = _FENCE_OPEN.match(content)
    if opened is None or (opened.group(1)[0] == "`" and "`" in opened.group(2)):
        return ""
    return opened.group(1)


def _closes(content: str, marker: str) -> bool:
    if content.lstrip(" \t")[:3] != marker[:3]:
        return False
    closed = _FENCE_CLOSE.match(content)
    return closed is not None and closed.group(1)[0] == marker[0] and len(closed.group(1)) >= len(marker)


@dataclass
class _Scan:
    """What a pass over a file's lines found: fenced code (`ends`: opening line -> closing line, the last
    line when it never closes; `mask`: True on every fenced line), headings outside fences (line ->
    (level, text)) and `---` lines outside fences (ascending)."""

    ends: dict[int, int]
    mask: list[bool]
    headings: dict[int, tuple[int, str]]
    separators: list[int]


def _scan(contents: list[str]) -> _Scan:
    n = len(contents)
    ends: dict[int, int] = {}
    headings: dict[int, tuple[int, str]] = {}
    separators: list[int] = []
    marker = ""
    opened_at = -1
    for i in [i for i, content in enumerate(contents) if content[:1] in _SCAN_FIRST]:
        content = contents[i]
        if marker:
            if _closes(content, marker):
                ends[opened_at] = i
                marker = ""
            continue
        first = content[0]
        if first == "#":
            heading = _heading(content)
            if heading is not None:
                headings[i] = heading
        elif first == "-":
            if content.startswith("---") and _SEPARATOR.match(content):
                separators.append(i)
        else:
            marker = _fence_opener(content)
            opened_at = i
    if marker:
        ends[opened_at] = n - 1
    mask = [False] * n
    for start, end in ends.items():
        mask[start : end + 1] = [True] * (end + 1 - start)
    return _Scan(ends, mask, headings, separators)


def _heading(content: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line starting at the first column, else None."""
    if not content.startswith("#"):
        return None
    matched = _HEADING.match(content)
    if matched is None:
        return None
    return len(matched.group(1)), (matched.group(2) or "").strip()


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _normalise_newlines(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n")


def _strip_blank_lines(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and _is_blank(lines[start]):
        start += 1
    while end > start and _is_blank(lines[end - 1]):
        end -= 1
    return lines[start:end]


# --- dates ------------------------------------------------------------------------------------------

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
    r"(\d{4})-(\d{2})-(\d{2})(?!\d)"
    r"(?:(?:T|[ \t]+)(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?!\d)"
    r"(?:[ \t]*(Z|[+-]\d{2}(?::?\d{2})?)(?!\d))?)?"
    rf"(?:[ \t]*\(?({_ZONE_WORDS})\)?(?![A-Za-z0-9]))?"
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
    year, month, day, hour, minute, second, fraction, offset, word = matched.groups()
    try:
        if hour is None:
            return datetime(int(year), int(month), int(day), tzinfo=UTC), False
        micro = int(fraction[:6].ljust(6, "0")) if fraction else 0
        return (
            datetime(
                int(year),
                int(month),
                int(day),
                int(hour),
                int(minute),
                int(second or 0),
                micro,
                tzinfo=_zone(offset, word),
            ),
            True,
        )
    except (ValueError, OverflowError):
        return None, hour is not None


def _date_and_time(value: str) -> tuple[datetime | None, bool]:
    matched = _DATE.match(value.strip().lstrip(_BOM))
    if matched is None:
        return None, False
    return _date_from(matched)


def parse_date(value: str) -> datetime | None:
    """Read a date as teams write it, or None (never raises).

    Accepts `2026-03-02`, `2026-03-02T14:05:11Z`, `2026-03-02T14:05:11-08:00`, `2026-03-02 14:05`,
    `2026-03-02 14:05 PT` and `2026-02-27 PT` (a zone word without a time is ignored), with anything after
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


# --- people and headings ----------------------------------------------------------------------------

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


# --- decisions.md -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Verbatim text Canon does not interpret: a preamble, `---` lines, blank lines, anything unparsed.

    `section` is used by history.md only: the heading text of the section the text stands in, "" before
    any (a section's heading line stands in the section it opens).
    """

    text: str
    section: str = ""


@dataclass(frozen=True)
class Block:
    """One decision block of decisions.md.

    - `text`: the exact source, from the heading line to the last non-blank line before the next boundary;
    - `level`: the heading level (1-3);
    - `title`: the heading without '#', its date prefix, a `Decision:` prefix and a `— Author:` part;
    - `date`: aware (UTC when the text has no offset), from the heading or the `**Date:**` field;
    - `author`: `**By:**` / `**Author:**` / `— Name:` in the heading, `(Role)` and `(via …)` removed;
      "user" for a "User directive" heading naming nobody, else "";
    - `status`: "superseded" or "archived" when the `**Status:**` words say so, else "active";
    - `type`: the `**Type:**` value lower-cased when it is one of DECISION_TYPES, else "";
    - `body`: the lines after the heading line, surrounding blank lines removed, joined with "\\n".
    """

    text: str
    level: int
    title: str
    date: datetime | None
    author: str
    status: str
    type: str
    body: str


_SUPERSEDED = re.compile(r"\bsupersed", re.IGNORECASE)
_ARCHIVED = re.compile(r"\b(?:archived?|deprecated?|retired?|rejected|withdrawn)\b", re.IGNORECASE)


def _block_levels(contents: list[str], scan: _Scan) -> dict[int, int]:
    """The lines heading a decision block, with their levels."""
    n = len(contents)
    mask = scan.mask
    levels: dict[int, int] = {}
    for i, (level, title) in scan.headings.items():
        if level > 3:
            continue
        if _DATE_START.match(title) or _DECISION_HEADING.match(title):
            levels[i] = level
        elif level >= 2:
            j = i + 1
            while j < n and _is_blank(contents[j]):
                j += 1
            if j < n and not mask[j] and _BOLD_FIELD_START.match(contents[j]):
                levels[i] = level
    return levels


def _status(words: str) -> str:
    if _SUPERSEDED.search(words):
        return "superseded"
    if _ARCHIVED.search(words):
        return "archived"
    return "active"


def _known_type(value: str, known: tuple[str, ...]) -> str:
    word = value.strip().strip("*_`.").strip().lower()
    return word if word in known else ""


def _make_block(
    lines: list[str], contents: list[str], scan: _Scan, start: int, end: int, level: int
) -> Block:
    title, author, when, timed = _read_heading(scan.headings[start][1])
    fields: dict[str, str] = {}
    mask = scan.mask
    for i, content in enumerate(contents[start + 1 : end], start + 1):
        if "**" in content and not mask[i] and (matched := _FIELD.match(content)):
            fields.setdefault(matched.group(1).strip().casefold(), matched.group(2).strip())
    written_by = fields.get("by") or fields.get("author")
    if written_by:
        author = _clean_person(written_by) or author
    if not author and "user directive" in title.casefold():
        author = "user"
    field_date, field_timed = _date_and_time(fields.get("date", ""))
    if when is None or (
        not timed and field_timed and field_date is not None and field_date.date() == when.date()
    ):
        when = field_date or when
    return Block(
        text="".join(lines[start:end]),
        level=level,
        title=title,
        date=when,
        author=author,
        status=_status(fields.get("status", "")),
        type=_known_type(fields.get("type", ""), DECISION_TYPES),
        body="\n".join(_strip_blank_lines(contents[start + 1 : end])),
    )


def parse_decisions(text: str) -> list[Text | Block]:
    """Split a decisions.md into decision blocks and the verbatim text around them, losslessly.

    A block starts at a `#`..`###` heading that starts with a date (`2026-03-02`, with an optional time and
    zone), at a `Decision:` heading of those levels, or at a `##`/`###` heading whose next non-blank line is
    a bold `**By:**`, `**Author:**`, `**Date:**`, `**Status:**` or `**What:**` field. It ends before the next
    block heading of the same or a higher level, before a line that is exactly `---` (trailing spaces
    allowed), or at the end; its trailing blank lines go to the Text after it. Nothing inside fenced code
    (``` or ~~~) is a boundary. Everything before the first block is Text (the preamble); adjacent text is
    one Text part, and no part is empty.
    """
    lines, contents = _split_lines(text)
    n = len(lines)
    scan = _scan(contents)
    levels = _block_levels(contents, scan)
    heads = sorted(levels)
    separators = scan.separators
    parts: list[Text | Block] = []
    text_start = 0
    h = 0
    while h < len(heads):
        i = heads[h]
        level = levels[i]
        h += 1
        after = bisect_right(separators, i)
        limit = separators[after] if after < len(separators) else n
        while h < len(heads) and heads[h] < limit and levels[heads[h]] > level:
            h += 1
        j = heads[h] if h < len(heads) and heads[h] < limit else limit
        end = j
        while end > i + 1 and _is_blank(contents[end - 1]):
            end -= 1
        if text_start < i:
            parts.append(Text("".join(lines[text_start:i])))
        parts.append(_make_block(lines, contents, scan, i, end, level))
        text_start = end
    if text_start < n:
        parts.append(Text("".join(lines[text_start:])))
    return parts


def newest_first(parts: list[Text | Block]) -> bool:
    """True when the dated blocks run newest first (Squad often prepends new blocks).

    Compares each dated block with the dated block before it; False when more pairs run oldest first, or
    when fewer than two dates are known. A tie is settled by the first and last dates.
    """
    dates = [part.date for part in parts if isinstance(part, Block) and part.date is not None]
    if len(dates) < 2:
        return False
    falling = sum(1 for before, after in pairwise(dates) if after < before)
    rising = sum(1 for before, after in pairwise(dates) if after > before)
    if falling != rising:
        return falling > rising
    return dates[0] > dates[-1]


def uses_separators(parts: list[Text | Block]) -> bool:
    """True when a `---` line stands in the text between two blocks."""
    seen_block = False
    pending = False
    for part in parts:
        if isinstance(part, Block):
            if pending:
                return True
            seen_block = True
            pending = False
        elif seen_block:
            pending = bool(_scan(_split_lines(part.text)[1]).separators)
    return False


def render_block(
    *,
    date: datetime,
    title: str,
    author: str,
    body: str,
    type: str = "",
    status: str = "",
    note: str = "",
) -> str:
    """A decision block in Squad's style, ending with exactly one "\\n".

    ```
    ### 2026-03-02: {title}
    **By:** {author}
    **Type:** {type}          (when given)
    **Status:** {status}      (when given)

    {body}

    {note}                    (when given)
    ```

    The date is written as its own calendar date. Title, author, type and status are made one line; body
    and note lose their surrounding blank lines, and their lines that `parse_decisions` would read as a
    boundary (a block heading of any level, a `---` line) get a leading backslash. So `parse_decisions`
    of the result is exactly one Block whose text is the whole result, whatever the arguments.
    """
    out = [f"### {date.date().isoformat()}: {_one_line(title)}".rstrip()]
    out.append("**By:**" + (f" {_one_line(author)}" if _one_line(author) else ""))
    if _one_line(type):
        out.append(f"**Type:** {_one_line(type)}")
    if _one_line(status):
        out.append(f"**Status:** {_one_line(status)}")
    header = len(out)
    for chunk in (body, note):
        chunk_lines = _strip_blank_lines(_normalise_newlines(chunk).split("\n"))
        if chunk_lines:
            out.append("")
            out.extend(chunk_lines)
    scan = _scan(out)
    for i in [*_block_levels(out, scan), *scan.separators]:
        if i >= header:
            out[i] = "\\" + out[i]
    return "\n".join(out) + "\n"


# --- agents/{name}/history.md ------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One memory in an agent's history.md.

    - `text`: the exact source;
    - `section`: the heading text of its section, as written ("Learnings");
    - `type`: core_context / learning / update (from SECTION_TYPES), or "pattern" in a "Patterns" section;
    - `content`: the entry without its bullet marker (`- `, `1. `, `📌`), continuation indent removed,
      stripped, lines joined with "\\n". A `📌` entry keeps its date (`2026-03-01 — …`).
    """

    text: str
    section: str
    type: str
    content: str


_BULLET = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|\Z)")
_THEMATIC_BREAK = re.compile(r"[ \t]{0,3}(?:-{3,}|\*{3,}|_{3,})[ \t]*\Z")
_WORD = re.compile(r"\w+")


def _section_type(heading: str) -> str | None:
    """The entry type of a section heading: its words, case-folded, name a typed section."""
    if len(heading) > 100:
        return None
    return _HISTORY_SECTION_TYPES.get(" ".join(_WORD.findall(heading.casefold())))


def _is_pin(content: str) -> bool:
    return content.lstrip(" \t").startswith(_PIN)


def _dedent(content: str, width: int) -> str:
    """`content` without up to `width` columns of leading spaces and tabs."""
    k = 0
    column = 0
    while k < len(content) and column < width and content[k] in " \t":
        column += 1 if content[k] == " " else 4 - column % 4
        k += 1
    return content[k:]


def _entry_content(first: str, rest: list[str], width: int) -> str:
    kept = [first]
    for content in rest:
        kept.append("" if _is_blank(content) else _dedent(content, width))
    return "\n".join(kept).strip()


def parse_history(text: str) -> list[Text | Entry]:
    """Split an agent's history.md into memories and the verbatim text around them, losslessly.

    Sections are `#`/`##` headings; a section is typed when its heading names one of SECTION_TYPES or
    "Patterns" (case and surrounding punctuation ignored). Inside a typed section an entry is:

    - a bullet (`- `, `* `, `+ `, `1. `, `1) `) with its continuation lines: indented lines, and runs of
      whitespace-only (but not empty) lines followed by an indented line;
    - a `📌` line, with continuation lines as for a bullet;
    - a paragraph: consecutive non-blank lines up to a blank line, a heading or a `📌` line.

    Blank lines, sub-headings (`###` and deeper), `---`/`***`/`___` lines, HTML comments (`<!-- … -->`)
    standing alone and everything in untyped sections (`# Project Context`, others) are Text. Fenced code
    is never split: an entry that opens a fence runs to its end.
    """
    lines, contents = _split_lines(text)
    n = len(lines)
    scan = _scan(contents)
    ends, mask, headings = scan.ends, scan.mask, scan.headings
    fenced_before: list[int] = []
    next_close: list[int] = []
    if "<!--" in text:
        fenced_before = list(accumulate((int(fenced) for fenced in mask), initial=0))
        # first index >= i whose line closes an HTML comment
        next_close = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            next_close[i] = i if "-->" in contents[i] else next_close[i + 1]

    parts: list[Text | Entry] = []
    text_start = 0
    text_section = ""
    section = ""
    entry_type: str | None = None

    def flush_text(upto: int) -> None:
        if text_start < upto:
            parts.append(Text("".join(lines[text_start:upto]), text_section))

    def indented(k: int) -> bool:
        content = contents[k]
        return bool(content) and content[0] in " \t" and not content.isspace()

    def continuation_end(k: int) -> int:
        while k < n:
            if k in ends and indented(k):
                k = ends[k] + 1
            elif indented(k):
                k += 1
            elif contents[k] and contents[k].isspace():
                following = k + 1
                while following < n and contents[following] and contents[following].isspace():
                    following += 1
                if following < n and indented(following):
                    k = following
                else:
                    break
            else:
                break
        return k

    i = 0
    while i < n:
        content = contents[i]
        heading = headings.get(i)
        if heading is not None and heading[0] <= 2:
            flush_text(i)
            text_start = i
            section = heading[1]
            text_section = section
            entry_type = _section_type(section)
            i += 1
            continue
        if entry_type is None or heading is not None or _is_blank(content) or _THEMATIC_BREAK.match(content):
            i += 1
            continue
        stripped = content.lstrip(" \t")
        if stripped.startswith("<!--"):
            close = i if "-->" in stripped[4:] else next_close[i + 1]
            if close < n and fenced_before[close + 1] == fenced_before[i]:
                i = close + 1
                continue
        if _is_pin(content):
            first = stripped[len(_PIN) :].lstrip("\ufe0f")
            end = continuation_end(i + 1)
            body = _entry_content(first, contents[i + 1 : end], 2)
        elif bullet := _BULLET.match(content):
            end = continuation_end(i + 1)
            body = _entry_content(content[bullet.end() :], contents[i + 1 : end], bullet.end())
        else:
            end = i
            while end < n:
                if end in ends:
                    end = ends[end] + 1
                    continue
                line = contents[end]
                if end > i and (_is_blank(line) or end in headings or _is_pin(line)):
                    break
                end += 1
            body = _entry_content(contents[i], contents[i + 1 : end], 0)
        flush_text(i)
        parts.append(Entry("".join(lines[i:end]), section, entry_type, body))
        text_start = end
        text_section = section
        i = end
    flush_text(n)
    return parts


def _indent_continuation(first: str, content: str) -> str:
    lines = _normalise_newlines(content).strip().split("\n")
    out = [first + lines[0]]
    out.extend("  " + line if line.strip() else "  " for line in lines[1:])
    return "\n".join(out) + "\n"


def render_entry(*, type: str, content: str, date: datetime) -> str:
    """One memory for a history.md section, ending with "\\n".

    `- {first line}` with each further line indented by two spaces (blank lines become two spaces); an
    `update` is `📌 {date:%Y-%m-%d} — {first line}` with the same continuation. The content is stripped
    first. `parse_history` of a section holding the result gives exactly one Entry with that text.
    """
    if type == "update":
        return _indent_continuation(f"{_PIN} {date.date().isoformat()} — ", content)
    return _indent_continuation("- ", content)


def render_section_heading(section: str) -> str:
    """The heading that opens a new section at the end of a history.md: "\\n## {section}\\n\\n"."""
    return f"\n## {_one_line(section)}\n\n"


# --- decisions/inbox/*.md without front matter ------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    """A proposal a person or agent wrote into decisions/inbox/ by hand, in Squad's own shapes.

    - `slug`: from the file name (`slug_from_filename`);
    - `agent`: `**By:**` / `**Author:**` / `**Owner:**` / `Owner:` with `(Role)` removed; else the file
      name's first dash-separated word when it names one of the agent folders (spelled as the folder);
      else the agent of a `# {Agent} — topic` heading; else "";
    - `title`: the first heading's text without '#', a `Decision:` prefix and a date prefix ("" when the
      file has no heading);
    - `type`: the `**Type:**` value lower-cased when it is one of ENTRY_TYPES, else "";
    - `content`: the file without its rationale section or field, stripped, lines joined with "\\n";
    - `rationale`: the `**Why:**` / `**Rationale:**` field, or the `## Why` / `## Rationale` section,
      stripped (several are joined by a blank line); "" when none;
    - `date`: the `**Date:**` or `Date:` field, else the heading's date, else a date in the file name
      (`20260302T140511Z`, `2026-03-02`); None when none is readable.
    """

    slug: str
    agent: str
    title: str
    type: str
    content: str
    rationale: str
    date: datetime | None


_MARKDOWN_SUFFIX = re.compile(r"\.(?:md|markdown)\Z", re.IGNORECASE)
_RATIONALE_HEADINGS = ("why", "rationale")


def slug_from_filename(filename: str) -> str:
    """The slug a file name stands for: its folder and `.md` suffix dropped, lower-cased, every run outside
    [a-z0-9] made one "-", ends trimmed; an existing "--" (Canon's de-collision, `use-postgres--bob`) is
    kept. "" when nothing is left."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return normalize_entry_slug(_MARKDOWN_SUFFIX.sub("", name))


def _rationale_ranges(contents: list[str], mask: list[bool]) -> tuple[list[tuple[int, int]], list[str]]:
    """The line ranges [start, end) holding rationale, and the rationale text of each."""
    n = len(contents)
    ranges: list[tuple[int, int]] = []
    texts: list[str] = []
    i = 0
    while i < n:
        if mask[i]:
            i += 1
            continue
        content = contents[i]
        heading = _heading(content)
        if heading is not None and heading[1].rstrip(":").strip().casefold() in _RATIONALE_HEADINGS:
            level = heading[0]
            j = i + 1
            while j < n:
                other = None if mask[j] else _heading(contents[j])
                if other is not None and other[0] <= level:
                    break
                j += 1
            ranges.append((i, j))
            texts.append("\n".join(_strip_blank_lines(contents[i + 1 : j])))
            i = j
            continue
        field = _FIELD.match(content) if "**" in content else None
        if field and field.group(1).strip().casefold() in _RATIONALE_HEADINGS:
            kept = [field.group(2)]
            j = i + 1
            while j < n and not mask[j] and not _is_blank(contents[j]):
                following = contents[j]
                if _heading(following) is not None or ("**" in following and _FIELD.match(following)):
                    break
                kept.append(following)
                j += 1
            ranges.append((i, j))
            texts.append("\n".join(kept).strip())
            i = j
            continue
        i += 1
    return ranges, texts


def parse_native_proposal(filename: str, text: str, agent_folders: Iterable[str]) -> Proposal:
    """Read an inbox file written in one of Squad's own shapes (no front matter). Never raises."""
    _, contents = _split_lines(text)
    mask = _scan(contents).mask
    fields: dict[str, str] = {}
    plain: dict[str, str] = {}
    first_heading: str | None = None
    for i, content in enumerate(contents):
        if mask[i]:
            continue
        if first_heading is None:
            heading = _heading(content)
            if heading is not None:
                first_heading = heading[1]
                continue
        if "**" in content and (field := _FIELD.match(content)):
            fields.setdefault(field.group(1).strip().casefold(), field.group(2).strip())
        elif plain_field := _PLAIN_FIELD.match(content):
            plain.setdefault(plain_field.group(1).casefold(), plain_field.group(2).strip())

    title, heading_author, heading_date, _ = _read_heading(first_heading or "")
    dated = _DATE.match(title)
    if dated:
        heading_date = heading_date or _date_from(dated)[0]
        title = _LEADING_SEPARATOR.sub("", title[dated.end() :], count=1).strip()

    agent = ""
    for written in (fields.get("by"), fields.get("author"), fields.get("owner"), plain.get("owner")):
        if written and (agent := _clean_person(written)):
            break
    if not agent:
        stem = _MARKDOWN_SUFFIX.sub("", filename.replace("\\", "/").rsplit("/", 1)[-1])
        first_word = stem.split("-", 1)[0].casefold()
        agent = next((folder for folder in agent_folders if folder.casefold() == first_word), "")
    if not agent:
        agent = heading_author
    if not agent and first_heading:
        topic = _AGENT_TOPIC.match(first_heading)
        if topic and _looks_like_name(topic.group(1).strip()) and not _DECISION_HEADING.match(topic.group(1)):
            agent = _clean_person(topic.group(1))

    ranges, rationales = _rationale_ranges(contents, mask)
    kept: list[str] = []
    position = 0
    for start, end in [*ranges, (len(contents), len(contents))]:
        kept.extend(contents[position:start])
        position = end
        while kept and _is_blank(kept[-1]) and position < len(contents) and _is_blank(contents[position]):
            kept.pop()

    when = None
    for written in (fields.get("date"), plain.get("date")):
        if written and (when := parse_date(written)):
            break
    when = when or heading_date or _date_in_filename(filename)

    return Proposal(
        slug=slug_from_filename(filename),
        agent=agent,
        title=title,
        type=_known_type(fields.get("type", ""), ENTRY_TYPES),
        content="\n".join(kept).strip(),
        rationale="\n\n".join(part for part in rationales if part),
        date=when,
    )


# --- front matter -----------------------------------------------------------------------------------


class FrontMatterError(ValueError):
    """Front matter Canon refuses to read. The message is safe to show to the team."""


_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*\r?(?:\n|\Z)")
_FRONT_MATTER_CLOSE = re.compile(r"^---[ \t]*\r?$(?:\n)?", re.MULTILINE)
_CORE_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map")
)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_YAML_LINE_BREAKS = frozenset("\x85\u2028\u2029")


def split_front_matter(text: str) -> tuple[str, str] | None:
    """(front matter, rest) when `text`, after an optional byte-order mark, starts with a `---` line that
    a later `---` line closes; None otherwise. The front matter holds the mark, both `---` lines and their
    line endings, so the two parts joined give `text` back."""
    start = 1 if text.startswith(_BOM) else 0
    opened = _FRONT_MATTER_OPEN.match(text, start)
    if opened is None or not opened.group().endswith("\n"):
        return None
    closed = _FRONT_MATTER_CLOSE.search(text, opened.end())
    if closed is None:
        return None
    return text[: closed.end()], text[closed.end() :]


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors, aliases, tags beyond the core types and deep nesting, and keeps
    timestamps as the text written."""

    yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # refused while scanning: the scanner looks far ahead inside deeply nested `[` and `{`
        if self.flow_level >= _YAML_MAX_DEPTH:
            raise FrontMatterError(f"YAML is nested more than {_YAML_MAX_DEPTH} levels deep")
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            raise FrontMatterError("YAML aliases are not accepted")
        event = self.peek_event()
        if getattr(event, "anchor", None) is not None:
            raise FrontMatterError("YAML aliases are not accepted")
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!" and tag not in _CORE_TAGS:
            raise FrontMatterError("YAML tags are not accepted")
        self._depth += 1
        if self._depth > _YAML_MAX_DEPTH:
            raise FrontMatterError(f"YAML is nested more than {_YAML_MAX_DEPTH} levels deep")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _PlainDumper(yaml.SafeDumper):
    """SafeDumper that repeats shared values instead of writing anchors and aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_str(self, data: str) -> yaml.ScalarNode:
        if _YAML_LINE_BREAKS.intersection(data):
            # only the double-quoted style keeps these line breaks as they are
            return self.represent_scalar("tag:yaml.org,2002:str", data, style='"')
        return super().represent_str(data)


_PlainDumper.add_representer(str, _PlainDumper.represent_str)


def load_yaml(source: str) -> dict[str, Any]:
    """Read YAML front matter safely into plain data (text, numbers, booleans, null, lists, mappings).

    `source` is the YAML itself, or a whole block as `split_front_matter` returns it. Refuses, with a
    FrontMatterError, anything over 64 KiB, anchors and aliases ("YAML aliases are not accepted"), tags
    beyond the core types, nesting deeper than 64 levels, invalid YAML, and anything that is not a mapping
    with text keys. Dates and timestamps stay the text written (`parse_date` reads them). Empty YAML is {}.
    """
    if len(source) > _YAML_MAX_BYTES or len(source.encode("utf-8", "surrogatepass")) > _YAML_MAX_BYTES:
        raise FrontMatterError("front matter is larger than 64 KiB")
    block = split_front_matter(source)
    if block is not None and not block[1].strip():
        whole = block[0]
        source = whole[whole.index("\n") + 1 : whole.rstrip("\r\n").rfind("\n") + 1]
    try:
        loader = _StrictLoader(source)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except FrontMatterError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise FrontMatterError(
            f"front matter is not valid YAML{where}: {error.problem or 'unreadable'}"
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError):
        raise FrontMatterError("front matter is not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a mapping of names to values")
    if not all(isinstance(key, str) for key in data):
        raise FrontMatterError("front matter names must be text")
    return data


def render_now(*, meta: dict[str, Any], body: str) -> str:
    """identity/now.md: "---\\n" + `meta` as YAML (keys in their order, Unicode kept) + "---\\n" + body."""
    dumped = yaml.dump(
        meta,
        Dumper=_PlainDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,
    )
    return f"---\n{dumped}---\n{body}"
