"""`decisions/inbox/*.md` without front matter: proposals in Squad's own shapes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from ledger.mirror.squad.dates import _DATE, _date_from, _date_in_filename, parse_date
from ledger.mirror.squad.decisions import _known_type
from ledger.mirror.squad.headings import (
    _AGENT_TOPIC,
    _DECISION_HEADING,
    _LEADING_SEPARATOR,
    _clean_person,
    _looks_like_name,
    _read_heading,
)
from ledger.mirror.squad.lines import (
    _FIELD,
    _PLAIN_FIELD,
    _heading,
    _is_blank,
    _scan,
    _split_lines,
    _strip_blank_lines,
)
from ledger.values import normalize_entry_slug

ENTRY_TYPES = ("architectural", "scope", "process", "technical", "pattern", "learning", "update")


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
