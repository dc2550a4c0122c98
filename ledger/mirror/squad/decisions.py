"""`decisions.md`: the team's decision log, split into the decisions a person sees, and written so that
Squad's own readers see one decision in each block Canon writes."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise

from ledger.mirror.squad.dates import _DATE, _date_and_time, _date_from
from ledger.mirror.squad.headings import (
    _DATE_START,
    _DECISION_HEADING,
    _DECISION_PREFIX,
    _clean_person,
    _known,
    _read_heading,
)
from ledger.mirror.squad.lines import (
    _BOLD_FIELD_START,
    _FIELD,
    Text,
    _body_lines,
    _is_blank,
    _one_line,
    _Scan,
    _scan,
    _split_lines,
    _strip_blank_lines,
    _without_trailing_rules,
)

DECISION_TYPES = ("architectural", "scope", "process", "technical")

# Why text between decision blocks is not a block (`Text.reason`).
_PREAMBLE = "preamble"
_SEPARATOR = "separator"
_DAY_HEADING = "day heading"
_BLANK = "blank"


@dataclass(frozen=True)
class Block:
    """One decision block of decisions.md.

    - `text`: the exact source, from the heading line to the block's last line that is neither blank
      nor a `---` line;
    - `level`: the heading level (1-3);
    - `title`: the heading's own title: without '#', the date prefix, a `— Name:` part naming a known
      person, a `Decision:` prefix and the `(HH:MM:SSZ, #id)` suffix Canon writes;
    - `date`: aware (UTC when the text has no offset): the heading's date (with the time of Canon's
      suffix), else the date of the day section it stands in, refined by a `**Date:**` field of the same
      day that has a time; else the `**Date:**` field;
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
_DAY_REST = re.compile(r"(?:[ \t]*(?:\u2014|\u2013|--?)[ \t]+\S.*)?\Z", re.DOTALL)
_DECISION_FIELDS = frozenset({"by", "author", "date", "status", "what", "why", "type"})
_SIGNATURE_FIELDS = frozenset({"by", "author"})
# Sub-headings that divide one decision into parts: a dated `##` heading over them is not a day.
_PART_HEADINGS = frozenset(
    {
        "alternatives",
        "alternatives considered",
        "background",
        "consequences",
        "context",
        "decision",
        "details",
        "impact",
        "notes",
        "options",
        "options considered",
        "outcome",
        "problem",
        "rationale",
        "status",
        "summary",
        "what",
        "why",
    }
)


def _block_levels(contents: list[str], scan: _Scan) -> dict[int, int]:
    """The lines heading a decision block, with their levels: a `#`..`###` heading starting with a date
    or `Decision:`, or a `##`/`###` heading whose next non-blank line is a bold `**By:**`, `**Author:**`,
    `**Date:**`, `**Status:**` or `**What:**` field."""
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


def _field_label(content: str) -> str:
    """The case-folded label of a bold `**Label:** value` line, "" when the line is not one."""
    matched = _FIELD.match(content) if "**" in content else None
    return matched.group(1).strip().casefold() if matched else ""


def _has_field(contents: list[str], mask: list[bool], start: int, end: int, labels: frozenset[str]) -> bool:
    return any(not mask[i] and _field_label(contents[i]) in labels for i in range(start, end))


def _signatures(contents: list[str], mask: list[bool]) -> list[str]:
    """Every person a `**By:**` or `**Author:**` field outside fenced code names."""
    return [
        matched.group(2)
        for i, content in enumerate(contents)
        if not mask[i]
        and "**" in content
        and (matched := _FIELD.match(content))
        and matched.group(1).strip().casefold() in _SIGNATURE_FIELDS
    ]


@dataclass
class _Heads:
    """The headings a decision block can end at: `level` of each, `kind` ("block", "day" or "intro")
    and, for a block in a day section, the day's date and whether it has a time."""

    level: dict[int, int]
    kind: dict[int, str]
    day: dict[int, tuple[datetime | None, bool]]


def _heads(contents: list[str], scan: _Scan) -> _Heads:
    """Block headings, day headings and headings that only introduce blocks (see `parse_decisions`)."""
    mask = scan.mask
    n = len(contents)
    levels = _block_levels(contents, scan)
    heads = _Heads(level=levels, kind=dict.fromkeys(levels, "block"), day={})
    headings = sorted(scan.headings)
    order = sorted(heads.level)
    for at, d in enumerate(order):
        title = scan.headings[d][1]
        dated = _DATE.match(title) if heads.level[d] == 2 else None
        if dated is None or not _DAY_REST.match(title, dated.end()):
            continue
        following = at + 1
        while following < len(order) and heads.level[order[following]] > 2:
            following += 1
        end = order[following] if following < len(order) else n
        children = [
            h
            for h in headings[bisect_right(headings, d) : bisect_right(headings, end - 1)]
            if scan.headings[h][0] == 3
        ]
        if (
            not children
            or _has_field(contents, mask, d + 1, children[0], _DECISION_FIELDS)
            or any(scan.headings[h][1].rstrip(":").strip().casefold() in _PART_HEADINGS for h in children)
        ):
            continue
        heads.kind[d] = "day"
        for h in children:
            heads.level[h] = 3
            heads.kind[h] = "block"
            heads.day[h] = _date_from(dated)
    for at in range(len(headings) - 1, -1, -1):
        h = headings[at]
        level = scan.headings[h][0]
        if h in heads.kind or level > 2 or at + 1 == len(headings):
            continue
        following = headings[at + 1]
        if heads.level.get(following, 0) <= level:
            continue
        between = range(h + 1, following)
        if all(_is_blank(contents[i]) or contents[i].rstrip(" \t") == "---" for i in between):
            heads.level[h] = level
            heads.kind[h] = "intro"
    return heads


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
    lines: list[str],
    contents: list[str],
    scan: _Scan,
    start: int,
    end: int,
    level: int,
    known: frozenset[str],
    day: tuple[datetime | None, bool],
) -> Block:
    title, author, when, timed = _read_heading(scan.headings[start][1], known)
    if when is None:
        when, timed = day
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


def _trailing_run(contents: list[str], mask: list[bool], separators: set[int], start: int, end: int) -> int:
    """The first line of the blank and `---` lines (outside fenced code) that end lines [start, end)."""
    while end > start and not mask[end - 1] and (_is_blank(contents[end - 1]) or end - 1 in separators):
        end -= 1
    return end


def parse_decisions(text: str, *, known_people: Iterable[str] = ()) -> list[Text | Block]:
    """Split a decisions.md into the decisions a person sees there and the verbatim text around them,
    losslessly: joining the parts' `text` gives `text` back.

    Headings (outside fenced code, ``` or ~~~) that matter:

    - a block heading: a `#`..`###` heading that starts with a date (`2026-03-02`, with an optional
      time and zone, or Squad's `2026-11-26T11-04-35`), a `Decision:` heading of those levels, or a
      `##`/`###` heading whose next non-blank line is a bold `**By:**`, `**Author:**`, `**Date:**`,
      `**Status:**` or `**What:**` field;
    - a day heading: a `##` heading that is a date, alone or followed by a dash and words
      (`## 2026-06-08 — Sprint review`), with `###` headings under it (up to the next block heading of
      level 1 or 2), no `**By/Author/Date/Status/What/Why/Type:**` field before the first of them, and
      none of them naming a part of one decision (`### Context`, `### Why`, …). Each `###` heading under
      it is a block heading; a block there whose heading has no date takes the day's;
    - a heading that only introduces blocks: a `#`/`##` heading that is none of the above, whose next
      heading is a deeper block, day or introducing heading, with only blank and `---` lines between.

    A block runs from its heading to the next of these headings that is of the same or a higher level,
    that follows a `---` line (with only blank and `---` lines between the two), or, for a block heading,
    that has a `**By:**` or `**Author:**` field of its own before the next heading (a decision someone
    signed); else to the end. A `---` line or a deeper heading alone never ends a block. The blank and
    `---` lines that end a block's lines are not in it.

    Every other line is in a `Text` part, whose `reason` says why: "preamble" (before the first block,
    and a heading that only introduces blocks with what follows it up to its block), "day heading" (a
    day heading up to its first block), "separator" (the blank and `---` lines after a block when there
    is a `---` among them) or "blank" (when there is not). Adjacent text of one reason is one part; no
    part is empty.

    `known_people` names the people a `— Name:` part of a heading may name (agent folders, ledger
    agents); the names written in the file's `**By:**` and `**Author:**` fields count too. A `— Name:`
    part naming anyone else is part of the title (`### 2026-03-01 — Release process: option (a)`).
    """
    lines, contents = _split_lines(text)
    n = len(lines)
    scan = _scan(contents)
    mask = scan.mask
    separators = set(scan.separators)
    known = _known([*known_people, *_signatures(contents, mask)])
    heads = _heads(contents, scan)
    order = sorted(heads.level)
    headings = sorted(scan.headings)
    parts: list[Text | Block] = []

    def add_text(start: int, end: int, reason: str) -> None:
        if start >= end:
            return
        chunk = "".join(lines[start:end])
        last = parts[-1] if parts else None
        if isinstance(last, Text) and last.reason == reason:
            parts[-1] = Text(last.text + chunk, reason=reason)
        else:
            parts.append(Text(chunk, reason=reason))

    def signed(head: int) -> bool:
        after = bisect_right(headings, head)
        following = headings[after] if after < len(headings) else n
        return _has_field(contents, mask, head + 1, following, _SIGNATURE_FIELDS)

    def ends_block(head: int, level: int, k: int) -> bool:
        if heads.level[k] <= level:
            return True
        run = _trailing_run(contents, mask, separators, head + 1, k)
        if any(i in separators for i in range(run, k)):
            return True
        return heads.kind[k] == "block" and signed(k)

    add_text(0, order[0] if order else n, _PREAMBLE)
    h = 0
    while h < len(order):
        i = order[h]
        h += 1
        if heads.kind[i] != "block":
            add_text(i, order[h], _DAY_HEADING if heads.kind[i] == "day" else _PREAMBLE)
            continue
        level = heads.level[i]
        while h < len(order) and not ends_block(i, level, order[h]):
            h += 1
        boundary = order[h] if h < len(order) else n
        end = max(_trailing_run(contents, mask, separators, i + 1, boundary), i + 1)
        day = heads.day.get(i, (None, False))
        parts.append(_make_block(lines, contents, scan, i, end, level, known, day))
        add_text(end, boundary, _SEPARATOR if any(j in separators for j in range(end, boundary)) else _BLANK)
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
    """True when a `---` line stands between two blocks (a "separator" Text after a block that another
    block follows)."""
    seen_block = False
    pending = False
    for part in parts:
        if isinstance(part, Block):
            if pending:
                return True
            seen_block = True
            pending = False
        elif seen_block and part.reason == _SEPARATOR:
            pending = True
    return False


def _heading_title(title: str) -> str:
    """`title` as one line, written so that `_read_heading` gives it back: a title that itself starts
    with `Decision:` gets a second one, as the first is read as a prefix."""
    line = _one_line(title)
    return f"Decision: {line}" if _DECISION_PREFIX.match(line) else line


def _utc(date: datetime) -> datetime:
    """`date` in UTC, whole seconds (a naive one is taken to be UTC)."""
    aware = date if date.tzinfo is not None else date.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(microsecond=0)


def render_block(
    *,
    date: datetime,
    title: str,
    author: str,
    body: str,
    type: str = "",
    status: str = "",
    note: str = "",
    ref: int | None = None,
) -> str:
    """A decision block in Squad's style, ending with exactly one "\\n".

    ```
    ### 2026-03-02: {title} (14:05:11Z, #42)
    **By:** {author}
    **Type:** {type}          (when given)
    **Status:** {status}      (when given)

    {body}

    {note}                    (when given)
    ```

    The heading starts with the date and a colon (`### YYYY-MM-DD: `, the only form Squad's
    `parseDecisionsMarkdown` reads a date from) and ends with the time and Canon's id of the decision
    (`ref`), both after the title, so that no two blocks Canon writes share a heading (Squad's Scribe
    keeps only the first of blocks with the same `###` heading); without `ref` only the time is written.
    Date and time are UTC, whole seconds (a naive `date` is taken to be UTC). Title, author, type and
    status are made one line; a title starting with `Decision:` gets a second `Decision: ` before it.

    Body and note lose their surrounding blank lines, and their headings outside fenced code are demoted
    as Squad's `prepareInboxBodyForMerge` demotes an inbox body (the shallowest becomes `####`, relative
    levels kept, at most `######`), so none of Squad's readers (`parseDecisionsMarkdown`: any `##`/`###`;
    `splitEntries`: `###`; `nap`: `^###\\s`) nor `parse_decisions` sees a second block in them. Fenced
    code left open is closed; blank and `---` lines at the very end are dropped (the log would read them
    as a separator). Everything else, `---` lines included, stays as written, and lines in fenced code
    never change.

    So `parse_decisions` of the result is exactly one Block whose text is the whole result, whose title
    is the one-line title and whose date is `date` in whole seconds; and the same holds wherever the
    block stands in a log, after a blank or a `---` line.

    What cannot be avoided without changing code: a fenced line starting with `###` and a space or tab
    still starts an entry for Squad's `nap`, which is not aware of fences. When `nap` archives entries
    (a log over 20 KB) it may move the two parts apart: a block older than 30 days goes to
    `decisions-archive.md` while its part from an undated fenced `###` line stays in `decisions.md` (and
    a fenced `###` line with an old date takes its part out of a recent block), leaving the archive with
    a fence that never closes and the log with a stray fence line that opens one. The Scribe, removing
    blocks that share a `###` heading, may take such a line for a heading too; `parseDecisionsMarkdown`
    reads fenced `##`/`###` lines as headings.
    """
    when = _utc(date)
    suffix = f"{when:%H:%M:%S}Z" + (f", #{ref}" if ref is not None else "")
    out = [
        " ".join(
            part for part in (f"### {when.date().isoformat()}:", _heading_title(title), f"({suffix})") if part
        )
    ]
    out.append("**By:**" + (f" {_one_line(author)}" if _one_line(author) else ""))
    if _one_line(type):
        out.append(f"**Type:** {_one_line(type)}")
    if _one_line(status):
        out.append(f"**Status:** {_one_line(status)}")
    header = len(out)
    for chunk in (body, note):
        chunk_lines = _body_lines(chunk)
        if chunk_lines:
            out.append("")
            out.extend(chunk_lines)
    return "\n".join(_without_trailing_rules(out, header)) + "\n"
