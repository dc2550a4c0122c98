"""`decisions.md`: the team's decision log, split into blocks and written in the Scribe's style."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from ledger.mirror.squad.dates import _date_and_time
from ledger.mirror.squad.headings import _DATE_START, _DECISION_HEADING, _clean_person, _read_heading
from ledger.mirror.squad.lines import (
    _BOLD_FIELD_START,
    _FIELD,
    Text,
    _is_blank,
    _normalise_newlines,
    _one_line,
    _Scan,
    _scan,
    _split_lines,
    _strip_blank_lines,
)

DECISION_TYPES = ("architectural", "scope", "process", "technical")


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
