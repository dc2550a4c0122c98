"""`decisions/inbox/*.md`: proposals in Squad's own shapes, Squad's governed-memory decisions, and
Canon's own proposals written in the shape Squad's `squad_decide` writes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ledger.mirror.squad.dates import _DATE, _date_from, _date_in_filename, parse_date
from ledger.mirror.squad.decisions import _heading_title, _known_type, _utc
from ledger.mirror.squad.headings import (
    _AGENT_TOPIC,
    _DECISION_HEADING,
    _LEADING_SEPARATOR,
    _clean_person,
    _known,
    _looks_like_name,
    _read_heading,
)
from ledger.mirror.squad.lines import (
    _FIELD,
    _PLAIN_FIELD,
    _body_lines,
    _fence_opener,
    _heading,
    _is_blank,
    _one_line,
    _scan,
    _split_lines,
    _strip_blank_lines,
    _without_trailing_rules,
)
from ledger.values import normalize_entry_slug

ENTRY_TYPES = ("architectural", "scope", "process", "technical", "pattern", "learning", "update")
IMPORTANCE_LEVELS = ("high", "medium", "low")


@dataclass(frozen=True)
class Proposal:
    """A proposal in decisions/inbox/, as a person, an agent or Squad wrote it.

    - `slug`: from the file name (`slug_from_filename`);
    - `agent`: who proposes it ("" when nobody is named);
    - `title`: the title its heading or front matter gives ("" when none);
    - `type`: one of ENTRY_TYPES, "" when the file names none;
    - `content`: the proposal itself, stripped, lines joined with "\\n";
    - `rationale`: why, stripped ("" when none);
    - `date`: when it was written, aware; None when no date is readable;
    - `importance`: one of IMPORTANCE_LEVELS, "" when the file names none;
    - `tags`: the tags it names, in order (empty when none);
    - `run_id`: the agent run it came from ("" when none).
    """

    slug: str
    agent: str
    title: str
    type: str
    content: str
    rationale: str
    date: datetime | None
    importance: str = ""
    tags: tuple[str, ...] = ()
    run_id: str = ""


_MARKDOWN_SUFFIX = re.compile(r"\.(?:md|markdown)\Z", re.IGNORECASE)
_RATIONALE_HEADINGS = ("why", "rationale")
# Fields that open a file (after its title heading) and that the proposal's own attributes hold: left
# out of its content (`**What:**` only when it repeats the title, as `squad_decide` writes it).
_HEADER_FIELDS = frozenset({"by", "author", "owner", "date", "type", "importance", "tags", "run"})
# Fields that end a `**Why:**` or `**Rationale:**` field's text.
_PROPOSAL_FIELDS = frozenset(
    {
        *_HEADER_FIELDS,
        *_RATIONALE_HEADINGS,
        "status",
        "what",
        "references",
    }
)


def slug_from_filename(filename: str) -> str:
    """The slug a file name stands for: its folder and `.md` suffix dropped, lower-cased, every run outside
    [a-z0-9] made one "-", ends trimmed; an existing "--" (Canon's de-collision, `use-postgres--bob`) is
    kept. "" when nothing is left."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return normalize_entry_slug(_MARKDOWN_SUFFIX.sub("", name))


def _field(content: str) -> tuple[str, str] | None:
    """(case-folded label, value) of a bold `**Label:** value` line, else None."""
    matched = _FIELD.match(content) if "**" in content else None
    return (matched.group(1).strip().casefold(), matched.group(2)) if matched else None


def _rationale_ranges(contents: list[str], mask: list[bool]) -> tuple[list[tuple[int, int]], list[str]]:
    """The line ranges [start, end) holding rationale, and the rationale text of each.

    A `Why` / `Rationale` heading (any level) runs to the next heading of its level or higher. A
    `**Why:**` / `**Rationale:**` field runs to the next heading of level 1-3, the next bold field that
    names part of a decision (`_PROPOSAL_FIELDS`), or the end, blank lines and fenced code included.
    """
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
        field = _field(content)
        if field and field[0] in _RATIONALE_HEADINGS:
            j = i + 1
            while j < n and (mask[j] or not _ends_field_text(contents[j])):
                j += 1
            ranges.append((i, j))
            texts.append("\n".join([field[1], *contents[i + 1 : j]]).strip())
            i = j
            continue
        i += 1
    return ranges, texts


def _ends_field_text(content: str) -> bool:
    """Whether a line ends the text of a `**Why:**` field: a heading of level 1-3, or a bold field that
    names part of a decision."""
    heading = _heading(content)
    field = _field(content)
    return (heading is not None and heading[0] <= 3) or (field is not None and field[0] in _PROPOSAL_FIELDS)


def _header_lines(contents: list[str], mask: list[bool], start: int, title: str) -> list[int]:
    """The lines of the bold fields that open the file at `start` (after blank lines) which the
    proposal's attributes hold: `_HEADER_FIELDS`, and `**What:**` when its value is the title."""
    n = len(contents)
    i = start
    while i < n and _is_blank(contents[i]):
        i += 1
    dropped: list[int] = []
    while i < n and not mask[i] and (field := _field(contents[i])):
        label, value = field
        if label in _HEADER_FIELDS or (label == "what" and value.strip() == title):
            dropped.append(i)
        i += 1
    return dropped


def parse_native_proposal(filename: str, text: str, agent_folders: Iterable[str]) -> Proposal:
    """Read an inbox file written in one of Squad's own shapes (no front matter). Never raises.

    - `agent`: `**By:**` / `**Author:**` / `**Owner:**` / `Owner:` with `(Role)` removed; else the file
      name's first dash-separated word when it names one of `agent_folders` (spelled as the folder);
      else a `— Name:` part of a dated heading naming an agent folder or a person of those fields; else
      the agent of a `# {Agent} — topic` heading; else "";
    - `title`: the first heading's text (outside fenced code) without '#', its date prefix (any form
      `parse_date` reads, Squad's `2026-11-26T11-04-35` included) and a `Decision:` prefix, and, when the
      heading has no date of its own, a date after that prefix (`# Decision: 2026-03-01 — Cache`); ""
      when the file has no heading;
    - `type`, `importance`: the `**Type:**` / `**Importance:**` value lower-cased when it is one of
      ENTRY_TYPES / IMPORTANCE_LEVELS, else "";
    - `tags`: the `**Tags:**` value split at commas, each stripped, empty ones dropped;
    - `run_id`: the `**Run:**` value, stripped;
    - `rationale`: every `**Why:**` / `**Rationale:**` field and `Why` / `Rationale` section
      (`_rationale_ranges`), each stripped, joined by a blank line; "" when none;
    - `content`: the file without the heading line that gave the title, without the rationale, and
      without the bold fields that directly follow that heading (or open a file without one) and that
      the attributes above hold (`**By:**`, `**Author:**`, `**Owner:**`, `**Date:**`, `**Type:**`,
      `**Importance:**`, `**Tags:**`, `**Run:**`, and `**What:**` when it repeats the title); other
      fields (`**Status:**`, `**References:**`, a `**What:**` saying more) stay; stripped;
    - `date`: the `**Date:**` field, else the heading's date, else a plain `Date:` line, else a date in
      the file name (`20260302T140511Z`, `2026-03-02`).

    A file `render_proposal` wrote reads back as the proposal it was written from (see there).
    """
    _, contents = _split_lines(text)
    mask = _scan(contents).mask
    fields: dict[str, str] = {}
    plain: dict[str, str] = {}
    heading_at: int | None = None
    first_heading: str | None = None
    for i, content in enumerate(contents):
        if mask[i]:
            continue
        if heading_at is None:
            heading = _heading(content)
            if heading is not None:
                heading_at, first_heading = i, heading[1]
                continue
        if "**" in content and (field := _FIELD.match(content)):
            fields.setdefault(field.group(1).strip().casefold(), field.group(2).strip())
        elif plain_field := _PLAIN_FIELD.match(content):
            plain.setdefault(plain_field.group(1).casefold(), plain_field.group(2).strip())

    written = [fields.get("by"), fields.get("author"), fields.get("owner"), plain.get("owner")]
    known = _known([*agent_folders, *(person for person in written if person)])
    title, heading_author, heading_date, _ = _read_heading(first_heading or "", known)
    dated = _DATE.match(title) if heading_date is None else None
    if dated:
        heading_date = _date_from(dated)[0]
        title = _LEADING_SEPARATOR.sub("", title[dated.end() :], count=1).strip()

    agent = ""
    for person in written:
        if person and (agent := _clean_person(person)):
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
    header_start = heading_at + 1 if heading_at is not None else 0
    ranges.extend((i, i + 1) for i in _header_lines(contents, mask, header_start, title))
    if heading_at is not None:
        ranges.append((heading_at, heading_at + 1))
    kept: list[str] = []
    position = 0
    for start, end in [*sorted(ranges), (len(contents), len(contents))]:
        kept.extend(contents[position:start])
        position = max(position, end)
        while kept and _is_blank(kept[-1]) and position < len(contents) and _is_blank(contents[position]):
            kept.pop()

    when = parse_date(fields.get("date", "")) or heading_date
    when = when or parse_date(plain.get("date", "")) or _date_in_filename(filename)

    importance = fields.get("importance", "").strip().lower()
    return Proposal(
        slug=slug_from_filename(filename),
        agent=agent,
        title=title,
        type=_known_type(fields.get("type", ""), ENTRY_TYPES),
        content="\n".join(kept).strip(),
        rationale="\n\n".join(part for part in rationales if part),
        date=when,
        importance=importance if importance in IMPORTANCE_LEVELS else "",
        tags=tuple(tag.strip() for tag in fields.get("tags", "").split(",") if tag.strip()),
        run_id=fields.get("run", ""),
    )


def render_proposal(
    *,
    date: datetime,
    title: str,
    author: str,
    content: str,
    rationale: str,
    type: str,
    importance: str,
    tags: Iterable[str],
    run_id: str,
) -> str:
    """Canon's own inbox file for a proposal, in the shape Squad's `squad_decide` writes (a `###`
    heading, `**By:**`, `**What:**`, the text, `**Why:**`); no front matter. Ends with one "\\n".

    ```
    ### 2026-11-26: {title} (11:04:35Z)
    **By:** {author}
    **What:** {title}             (when there is a title)
    **Type:** {type}              (each of these when set)
    **Importance:** {importance}
    **Tags:** {tag}, {tag}
    **Run:** {run_id}

    {content}

    **Why:** {rationale}          (when there is one)
    ```

    The time is `date` in UTC, whole seconds (a naive `date` is taken to be UTC), written as Canon's
    decision blocks write it: the date first, so that Squad's `parseDecisionsMarkdown` reads it once
    `squad nap` has appended the file to the log (it reads no date from `squad_decide`'s own
    `2026-11-26T11-04-35`), and the time after the title, so that two proposals with one title do not
    share a heading (Squad's Scribe keeps only the first of blocks that do). Title, author, type,
    importance, each tag and the run id are made one line; a title starting with `Decision:` gets a
    second `Decision: ` in the heading. Content and rationale are stripped, then written as `render_block`
    writes a body: headings demoted (shallowest `####`), fenced code left open closed; blank and `---`
    lines at the very end of the file are dropped. A rationale whose first line opens fenced code starts
    on the line after `**Why:**`.

    So `squad nap`, which appends the file to decisions.md as it is, appends one decision block, and
    `parse_native_proposal` gives back title, agent, type, importance, tags, run id, content, rationale
    and date (in whole seconds): exactly for one-line values without surrounding white space (a type and
    an importance Canon knows, tags without commas, an author without parentheses), and for content and
    rationale as this function writes them (their headings demoted), when neither holds a line, outside
    fenced code, that is a `Why` or `Rationale` heading or one of the bold fields `**By:**`,
    `**Author:**`, `**Owner:**`, `**Date:**`, `**Type:**`, `**Importance:**`, `**Tags:**`, `**Run:**`,
    `**What:**`, `**Status:**`, `**References:**`, `**Why:**`, `**Rationale:**`, and the last of them
    written does not end with a `---` line.
    """
    when = _utc(date)
    heading_title = _heading_title(title)
    out = [
        " ".join(
            part for part in (f"### {when.date().isoformat()}:", heading_title, f"({when:%H:%M:%S}Z)") if part
        )
    ]
    out.append("**By:**" + (f" {_one_line(author)}" if _one_line(author) else ""))
    fields = [
        ("What", _one_line(title)),
        ("Type", _one_line(type)),
        ("Importance", _one_line(importance)),
        ("Tags", ", ".join(line for tag in tags if (line := _one_line(tag)))),
        ("Run", _one_line(run_id)),
    ]
    out.extend(f"**{label}:** {value}" for label, value in fields if value)
    header = len(out)
    content_lines = _body_lines(content.strip())
    if content_lines:
        out.append("")
        out.extend(content_lines)
    why = _body_lines(rationale.strip())
    if why:
        out.append("")
        if _fence_opener(why[0]):
            out.append("**Why:**")
            out.extend(why)
        else:
            out.append(f"**Why:** {why[0]}")
            out.extend(why[1:])
    return "\n".join(_without_trailing_rules(out, header)) + "\n"


def _text(value: Any) -> str:
    """A front matter value as one stripped line of text; "" for nothing, lists and mappings."""
    if value is None or isinstance(value, (list, dict)):
        return ""
    return _one_line(str(value))


def parse_squad_memory(filename: str, meta: dict[str, Any], body: str) -> Proposal:
    """A decision Squad's `squad memory write --class DECISION` wrote: the file
    `decisions/inbox/{author}-{title}-{id8}.md`, whose front matter (`id`, `class`, `loadGuidance`,
    `title`, `author`, `createdAt`, `metadata`) is `meta` as `load_yaml` reads it, and whose text after
    the front matter is `body`. Never raises.

    - `agent`: `author`, cleaned as a field's person is (`(Role)` removed); "" when it is missing or is
      Squad's "unknown" (written when no `--author` was given);
    - `title`: `title`, one line;
    - `date`: `createdAt` (`2026-11-26T15:17:05.185Z`), None when unreadable;
    - `content`: `body` stripped, lines joined with "\\n";
    - `slug`: from the file name (`slug_from_filename`);
    - nothing else is set: Squad's memory has no type, rationale, importance, tags or run.
    """
    agent = _clean_person(_text(meta.get("author")))
    return Proposal(
        slug=slug_from_filename(filename),
        agent="" if agent.casefold() == "unknown" else agent,
        title=_text(meta.get("title")),
        type="",
        content="\n".join(_split_lines(body)[1]).strip(),
        rationale="",
        date=parse_date(_text(meta.get("createdAt"))),
    )
