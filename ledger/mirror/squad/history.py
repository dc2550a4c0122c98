"""`agents/{name}/history.md`: an agent's memory, split into entries and written in the team's style."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate

from ledger.mirror.squad.dates import _DATE, _date_from, parse_date
from ledger.mirror.squad.lines import (
    HEADING_OF_ROWS,
    Text,
    _closes,
    _fence_opener,
    _is_blank,
    _normalise_newlines,
    _one_line,
    _scan,
    _split_lines,
)

# A section heading's words (case-folded, punctuation and a date left out) -> the type of its entries.
# Squad's `squad_memory` writes its kinds into "Learnings" (learnings), "Decisions" (updates) and
# "Context" (sessions: dated notes of what happened, so updates too); `createHistoryShadow` adds
# "Patterns", "Issues" (problems met and how they were solved: learnings, as are the questions an agent
# keeps open) and "References" (files and documents that hold for the whole project: core context).
SECTION_TYPES = {
    "core context": "core_context",
    "project context": "core_context",
    "references": "core_context",
    "learnings": "learning",
    "learning": "learning",
    "issues": "learning",
    "open questions": "learning",
    "questions": "learning",
    "recent updates": "update",
    "team updates": "update",
    "team update": "update",
    "updates": "update",
    "decisions": "update",
    "context": "update",
    "sessions": "update",
    "patterns": "pattern",
}
SECTION_FOR_TYPE = {
    "core_context": "Core Context",
    "learning": "Learnings",
    "update": "Recent Updates",
    "pattern": "Patterns",
}
# Names a longer heading may start or end with and still be that section ("Key Learnings",
# "Learnings — 2026-06-08: Rate limits", "gh-aw triage team update"), longest first.
_AFFIXES = sorted(
    (tuple(name.split()) for name in SECTION_TYPES if name not in ("context", "references", "sessions")),
    key=len,
    reverse=True,
)
_PIN = "📌"


@dataclass(frozen=True)
class Entry:
    """One memory in an agent's history.md.

    - `text`: the exact source;
    - `section`: the heading text of its section, as written ("Learnings");
    - `type`: core_context / learning / update / pattern, from the section (SECTION_TYPES); a `📌` entry
      is an `update` wherever it stands;
    - `content`: what the memory says. A bullet or `📌` line without its marker and the continuation
      indent; a `📌` line without a leading date (`📌 2026-03-01 — `); an entry a heading opens
      (`### 2026-06-07 — Crate audit`) is the heading's title (its date, `📌` and separators taken off)
      then, after a blank line, its body. Stripped, lines joined with "\\n";
    - `date`: when it was written, if the file says: a `📌` line's date, else the date of the nearest
      dated heading above it (`### 2026-06-07`, `## Learnings — 2026-06-08: Rate limits`), else None.
    """

    text: str
    section: str
    type: str
    content: str
    date: datetime | None = None


_BULLET = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|\Z)")
# A `📌` line: the pin after optional indentation and an optional bullet marker.
_PIN_LINE = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?📌")
# A `📌` line that ends a `###` entry: the pin (or its bullet) at the start of the line.
_PIN_AT_START = re.compile(r"(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?📌")
# A line that is an entry of its own wherever it stands, even under a `###` entry: a `📌` line, or a bullet
# dated as Canon writes its memories (`- 2026-03-02 — …`).
_ENTRY_OF_ITS_OWN = re.compile(r"(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?📌|- \d{4}-\d{2}-\d{2} \u2014(?:[ \t]|\Z)")
_THEMATIC_BREAK = re.compile(r"[ \t]{0,3}(?:-{3,}|\*{3,}|_{3,})[ \t]*\Z")
_RULE_AT_START = re.compile(r"(?:-{3,}|\*{3,}|_{3,})[ \t]*\Z")
# A bold label standing alone on its line: `**Key findings:**`, `**Key findings**:`.
_LABEL_ALONE = re.compile(r"[ \t]*\*\*[^*]+?(?::\*\*|\*\*[ \t]*:)[ \t]*\Z")
_LEADING_SEPARATOR = re.compile(r"[ \t]*(?:[\u2014\u2013:|]|-{1,3})?[ \t]*")
_TRAILING_SEPARATOR = re.compile(r"[ \t]*(?:[\u2014\u2013:|,]|-{1,3})?[ \t]*\Z")
_WORD = re.compile(r"\w+")
# A line of content that would end a `### {date}` entry Canon writes: a heading of level 1 to 3 for Canon,
# or for Squad's readers (`parseHistory` splits sections on `^##\s+`, its entries on `^###\s+`, where
# JavaScript's `\s` and line starts are wider than Canon's). A `📌` line (_PIN_AT_START) ends it too.
_ENDS_ENTRY_HEADING = re.compile(r"(?:\A|[\n\u2028\u2029])#{1,3}(?:[\s\ufeff]|\Z)")


def _find_date(text: str) -> tuple[datetime, int, int] | None:
    """The first date written in `text` (any form `parse_date` reads, not glued to a word before it),
    with where it starts and ends; None when there is none."""
    for matched in _DATE.finditer(text):
        start = matched.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue
        when, _ = _date_from(matched)
        if when is not None:
            return when, start, matched.end()
    return None


def _unpinned(heading: str) -> tuple[str, bool]:
    """The heading's text without a leading `📌`, and whether it had one."""
    stripped = heading.lstrip()
    if stripped.startswith(_PIN):
        return stripped[len(_PIN) :].lstrip("\ufe0f").lstrip(), True
    return heading, False


def _read_heading(heading: str) -> tuple[str | None, datetime | None, bool, str]:
    """(type its words name, its date, whether it is a `📌` heading, its title) of a heading's text.

    The words are those left once the date and a `📌` are taken out; they name a type when they are a
    name of SECTION_TYPES or start or end with one (other than "context", "references" and "sessions",
    which must stand alone). The title is the text without the `📌` and without a date that
    starts or ends it (with the separator or parentheses around it).
    """
    text, pinned = _unpinned(heading)
    found = _find_date(text)
    words_of = text
    title = text.strip()
    when = None
    if found is not None:
        when, start, end = found
        before, after = text[:start], text[end:]
        words_of = before + " " + after
        if not before.strip():
            title = _after_separator(after).strip()
        elif after.strip() in ("", ")"):
            kept = before.rstrip()
            if after.strip() == ")" and kept.endswith("("):
                kept = kept[:-1]
            title = _TRAILING_SEPARATOR.sub("", kept).strip()
    return _words_type(words_of), when, pinned, title


def _words_type(text: str) -> str | None:
    if len(text) > 100:
        return None
    words = _WORD.findall(text.casefold())
    named = SECTION_TYPES.get(" ".join(words))
    if named is not None:
        return named
    for name in _AFFIXES:
        if tuple(words[: len(name)]) == name or tuple(words[-len(name) :]) == name:
            return SECTION_TYPES[" ".join(name)]
    return None


def _short(heading: str) -> str:
    """A heading as a reason names it: on one line, at most 60 characters."""
    name = _one_line(heading)
    return name if len(name) <= 60 else name[:59] + "…"


def _dedent(content: str, width: int) -> str:
    """`content` without up to `width` columns of leading spaces and tabs."""
    k = 0
    column = 0
    while k < len(content) and column < width and content[k] in " \t":
        column += 1 if content[k] == " " else 4 - column % 4
        k += 1
    return content[k:]


def _indent_width(content: str) -> int:
    return len(content) - len(_dedent(content, len(content)))


def _entry_content(first: str, rest: list[str], width: int) -> str:
    kept = [first]
    for content in rest:
        kept.append("" if _is_blank(content) else _dedent(content, width))
    return "\n".join(kept).strip()


def _headed_content(title: str, body: list[str]) -> str:
    """A `###` entry's content: its title, a blank line, its body. A body whose every line is indented
    by two columns or more loses two columns (the shape `render_entry` writes when a line would otherwise
    read as a heading)."""
    width = 2 if body and all(_indent_width(line) >= 2 for line in body if not _is_blank(line)) else 0
    said = "\n".join("" if _is_blank(line) else _dedent(line, width) for line in body).strip()
    return f"{title}\n\n{said}" if title and said else title or said


def _pin_text(first: str) -> tuple[str, datetime | None]:
    """A `📌` line's text after the pin without a leading date and its separator, and the first date the
    line holds (`📌 2026-03-01 — …`, `📌 Team update (2026-11-26T14:05:11Z): …`)."""
    found = _find_date(first)
    if found is None:
        return first, None
    when, start, end = found
    if not first[:start].strip():
        first = _after_separator(first[end:])
    return first, when


_BULLET_DATE = re.compile(r"\d{4}-\d{2}-\d{2}[ \t]+\u2014(?:[ \t]+(?=\S)|[ \t]*\Z)")


def _dated_bullet(said: str) -> tuple[str, datetime | None]:
    """A bullet's text without a leading `2026-03-01 — ` (as Canon writes its memories), and that date;
    the text as it is and None when it does not start so."""
    matched = _BULLET_DATE.match(said)
    when = parse_date(said[: matched.end()]) if matched else None
    if matched is None or when is None:
        return said, None
    return said[matched.end() :], when


def _after_separator(text: str) -> str:
    """`text` without the separator it starts with (` — `, `: `, ` - `, …)."""
    matched = _LEADING_SEPARATOR.match(text)
    return text[matched.end() :] if matched else text


class _Reader:
    """One pass over a history.md, building the parts `parse_history` returns."""

    def __init__(self, text: str) -> None:
        self.lines, self.contents = _split_lines(text)
        self.n = len(self.lines)
        scan = _scan(self.contents)
        self.ends, self.mask, self.headings = scan.ends, scan.mask, scan.headings
        self.parts: list[Text | Entry] = []
        self.pending: tuple[int, int, str, str] | None = None
        self.fenced_before: list[int] = []
        self.next_close: list[int] = []
        if "<!--" in text:
            self.fenced_before = list(accumulate((int(fenced) for fenced in self.mask), initial=0))
            # first index >= i whose line closes an HTML comment
            self.next_close = [self.n] * (self.n + 1)
            for i in range(self.n - 1, -1, -1):
                self.next_close[i] = i if "-->" in self.contents[i] else self.next_close[i + 1]

    # --- output ------------------------------------------------------------------------------------

    def text(self, start: int, end: int, section: str, reason: str) -> None:
        """Lines start..end as Text, joined to the Text just before when it has the same reason."""
        if start >= end:
            return
        if self.pending and self.pending[1] == start and self.pending[2:] == (section, reason):
            self.pending = (self.pending[0], end, section, reason)
            return
        self.flush()
        self.pending = (start, end, section, reason)

    def flush(self) -> None:
        if self.pending:
            start, end, section, reason = self.pending
            self.parts.append(Text("".join(self.lines[start:end]), section, reason))
            self.pending = None

    def entry(
        self, start: int, end: int, section: str, type: str, content: str, date: datetime | None
    ) -> None:
        self.flush()
        self.parts.append(Entry("".join(self.lines[start:end]), section, type, content, date))

    # --- lines -------------------------------------------------------------------------------------

    def indented(self, k: int) -> bool:
        content = self.contents[k]
        return bool(content) and content[0] in " \t" and not content.isspace()

    def comment_end(self, i: int, end: int) -> int | None:
        """The index after an HTML comment standing alone from line i to a line before `end`, else None."""
        stripped = self.contents[i].lstrip(" \t")
        if not stripped.startswith("<!--"):
            return None
        close = i if "-->" in stripped[4:] else self.next_close[i + 1]
        if close < end and self.fenced_before[close + 1] == self.fenced_before[i]:
            return close + 1
        return None

    def continuation_end(self, k: int, end: int, *, lazy: bool = False) -> int:
        """Where the lines continuing an entry that started before line k stop: indented lines (and fenced
        code starting on one), runs of whitespace-only lines followed by an indented line and, when
        `lazy`, plain lines that start nothing of their own (no bullet, heading, `📌`, rule or comment)."""
        while k < end:
            if k in self.ends and (lazy or self.indented(k)):
                k = min(self.ends[k] + 1, end)
            elif self.indented(k):
                k += 1
            elif self.contents[k] and self.contents[k].isspace():
                following = k + 1
                while following < end and self.contents[following] and self.contents[following].isspace():
                    following += 1
                if following < end and self.indented(following):
                    k = following
                else:
                    break
            elif lazy and self.starts_nothing(k):
                k += 1
            else:
                break
        return k

    def starts_nothing(self, k: int) -> bool:
        content = self.contents[k]
        return not (
            _is_blank(content)
            or k in self.headings
            or _PIN_LINE.match(content)
            or _BULLET.match(content)
            or _THEMATIC_BREAK.match(content)
            or content.lstrip(" \t").startswith("<!--")
        )

    def paragraph_end(self, i: int, end: int) -> int:
        """Consecutive lines from i up to a blank line, a heading or a `📌` line (fenced code kept whole)."""
        k = i
        while k < end:
            if k in self.ends:
                k = min(self.ends[k] + 1, end)
                continue
            line = self.contents[k]
            if k > i and (_is_blank(line) or k in self.headings or _PIN_LINE.match(line)):
                break
            k += 1
        return k

    # --- sections ----------------------------------------------------------------------------------

    def read(self) -> list[Text | Entry]:
        starts = [i for i in self.headings if self.headings[i][0] <= 2]
        first = starts[0] if starts else self.n
        self.untyped(0, first, "", "preamble")
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else self.n
            level, heading = self.headings[start]
            type, when, pinned, _ = _read_heading(heading)
            if type is not None:
                self.typed(start, end, heading, "update" if pinned else type, when, headed=False)
            elif pinned or when is not None:
                self.typed(start, end, heading, "update", when, headed=True)
            elif k == 0 and level == 1:
                self.untyped(start, end, heading, "title")
            else:
                self.untyped(start, end, heading, f"untyped section '{_short(heading)}'")
        self.flush()
        return self.parts

    def untyped(self, start: int, end: int, section: str, reason: str) -> None:
        """A section Canon does not read into rows, but for its `📌` lines."""
        i = text_start = start
        while i < end:
            if i in self.ends:
                i = self.ends[i] + 1
                continue
            comment = self.comment_end(i, end) if self.next_close else None
            if comment is not None:
                i = comment
                continue
            if _PIN_LINE.match(self.contents[i]):
                self.text(text_start, i, section, reason)
                i = text_start = self.pin(i, end, section, None)
                continue
            i += 1
        self.text(text_start, end, section, reason)

    def typed(
        self, start: int, end: int, section: str, type: str, date: datetime | None, *, headed: bool
    ) -> None:
        """A section whose entries are rows of `type`; with `headed`, its heading opens its first entry (a
        dated or `📌` heading whose words name no type: one dated note)."""
        if not headed:
            self.text(start, start + 1, section, HEADING_OF_ROWS)
            i = start + 1
        else:
            i = start
        # (level, date) of the headings above the current line, the section's own first.
        stack: list[tuple[int, datetime | None]] = [(0, date)]

        def in_force() -> datetime | None:
            return next((when for _, when in reversed(stack) if when is not None), None)

        while i < end:
            content = self.contents[i]
            heading = self.headings.get(i)
            if heading is not None:
                level = heading[0]
                _, when, pinned, title = _read_heading(heading[1])
                while len(stack) > 1 and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, when))
                i = self.headed(i, end, level, section, "update" if pinned else type, title, in_force())
                continue
            if _is_blank(content):
                self.text(i, i + 1, section, "blank")
                i += 1
                continue
            if _THEMATIC_BREAK.match(content):
                self.text(i, i + 1, section, "separator")
                i += 1
                continue
            comment = self.comment_end(i, end) if self.next_close else None
            if comment is not None:
                self.text(i, comment, section, "comment")
                i = comment
                continue
            if _PIN_LINE.match(content):
                i = self.pin(i, end, section, in_force())
                continue
            bullet = _BULLET.match(content)
            dated: datetime | None = None
            if bullet:
                stop = self.continuation_end(i + 1, end)
                said = _entry_content(content[bullet.end() :], self.contents[i + 1 : stop], bullet.end())
                said, dated = _dated_bullet(said)
            else:
                stop = self.paragraph_end(i, end)
                if stop == i + 1 and _LABEL_ALONE.match(content):
                    stop = self.labelled_end(stop, end)
                said = _entry_content(content, self.contents[i + 1 : stop], 0)
            self.entry(i, stop, section, type, said, dated or in_force())
            i = stop

    def labelled_end(self, k: int, end: int) -> int:
        """Where a bold label standing alone (`**Key findings:**`) stops: past the blank lines after it,
        the paragraph or list it labels; right after it when nothing follows that it could label."""
        following = k
        while following < end and _is_blank(self.contents[following]):
            following += 1
        if following < end and (self.starts_nothing(following) or self.plain_bullet(following)):
            return self.paragraph_end(following, end)
        return k

    def plain_bullet(self, k: int) -> bool:
        content = self.contents[k]
        return bool(_BULLET.match(content)) and not (
            _PIN_LINE.match(content) or _THEMATIC_BREAK.match(content)
        )

    def headed(
        self, i: int, end: int, level: int, section: str, type: str, title: str, date: datetime | None
    ) -> int:
        """The entry a heading opens: up to the next heading of its level or higher, a `📌` line at the
        start of a line, or `end`, without the blank lines, rules and one-line comments that end it.
        Returns where it stopped."""
        k = i + 1
        while k < end:
            if k in self.ends:
                k = min(self.ends[k] + 1, end)
                continue
            heading = self.headings.get(k)
            content = self.contents[k]
            if (heading is not None and heading[0] <= level) or _ENTRY_OF_ITS_OWN.match(content):
                break
            k += 1
        last = self.trimmed(i + 1, k)
        self.entry(i, last, section, type, _headed_content(title, self.contents[i + 1 : last]), date)
        for j in range(last, k):
            line = self.contents[j]
            reason = "blank" if _is_blank(line) else "separator" if _RULE_AT_START.match(line) else "comment"
            self.text(j, j + 1, section, reason)
        return k

    def trimmed(self, start: int, end: int) -> int:
        """`end`, moved back over the lines that close an entry rather than belong to it: blank lines,
        `---` rules and HTML comments, each at the first column and outside fenced code."""
        while end > start and not self.mask[end - 1]:
            line = self.contents[end - 1]
            if _is_blank(line) or _RULE_AT_START.match(line):
                end -= 1
                continue
            if not line.rstrip().endswith("-->"):
                break
            opener = end - 1
            while opener > start and not self.contents[opener].startswith("<!--"):
                opener -= 1
                if "-->" in self.contents[opener] and not self.contents[opener].startswith("<!--"):
                    return end
            if (
                not self.contents[opener].startswith("<!--")
                or self.fenced_before[opener] != self.fenced_before[end]
            ):
                break
            end = opener
        return end

    def pin(self, i: int, end: int, section: str, date: datetime | None) -> int:
        """The `📌` entry starting at line i (an `update` wherever it stands); returns where it stopped."""
        content = self.contents[i]
        bullet = _BULLET.match(content)
        if bullet:
            stop = self.continuation_end(i + 1, end)
            width = bullet.end()
            first = content[bullet.end() :].lstrip(" \t")
        else:
            stop = self.continuation_end(i + 1, end, lazy=True)
            width = 2
            first = content.lstrip(" \t")
        said, when = _pin_text(first[len(_PIN) :].lstrip("\ufe0f"))
        self.entry(
            i, stop, section, "update", _entry_content(said, self.contents[i + 1 : stop], width), when or date
        )
        return stop


def parse_history(text: str) -> list[Text | Entry]:
    """Split an agent's history.md into memories and the verbatim text around them, losslessly.

    Sections are `#`/`##` headings. A section is typed when its heading's words (a date and a `📌` left
    out) name a type of SECTION_TYPES, or start or end with such a name (`## Key Learnings`,
    `## Learnings — 2026-06-08: Rate limits`, `## 2026-06-08 Learnings`); a dated heading gives its
    entries its date. A `#`/`##` heading with a date or a `📌` but no such words (`## 2026-04-15 — Sprint
    review`, `## 📌 Team update — 2026-08-20T11:59:44-07:00`) opens one `update` entry: the whole section.

    Inside a typed section an entry is:

    - a heading (`###` and deeper): the heading and everything under it up to the next heading of its
      level or higher (`### 2026-06-07`, `### 2026-06-07 — Crate audit`, `### Retries`), labels, lists
      and fenced code included; the blank lines, `---` rules and one-line comments that end it are not;
    - a `📌` line (also `- 📌 …`), with its indented continuation lines and the plain lines that follow
      it; it ends a heading's entry too: `📌` lines are `update` entries wherever they stand, in untyped
      sections and after a `## Patterns` section as well;
    - a bullet (`- `, `* `, `+ `, `1. `, `1) `) with its continuation lines: indented lines, and runs of
      whitespace-only (but not empty) lines followed by an indented line;
    - a paragraph: consecutive non-blank lines up to a blank line, a heading or a `📌` line; a bold label
      standing alone (`**Key findings:**`) keeps the paragraph or list after it.

    Fenced code is never split. Everything else is Text, with its reason: "preamble" (before any
    section), "title" (the first `#` heading when it is untyped, and its section), "untyped section
    '{heading}'", "blank", "separator" (`---`, `***`, `___`), "comment" (`<!-- … -->` standing alone),
    and HEADING_OF_ROWS for the heading of a typed section.
    """
    return _Reader(text).read()


def _open_fence(lines: list[str]) -> str:
    """The marker of fenced code these lines open and leave open, "" when they close all they open."""
    marker = ""
    for line in lines:
        if marker:
            if _closes(line, marker):
                marker = ""
        else:
            marker = _fence_opener(line)
    return marker


def render_entry(*, type: str, content: str, date: datetime) -> str:
    """One memory for a history.md section, ending with "\\n", dated on its first line so that a person
    and Squad's readers see when it was written.

    The content is stripped first (line endings made "\\n", lines of white space only made empty); when it
    leaves fenced code open, a line closing it is added, so that the entries after it stay readable.

    - An `update` is a `📌` line, `📌 {date:%Y-%m-%d} — {first line}` (Squad's Recent Updates shape).
    - Any other type is a bullet, `- {date:%Y-%m-%d} — {first line}`.

    Each further line is indented by two spaces (a blank line too, so it does not end the entry), so no
    line of the content can start a heading, a `📌` line or a bullet of its own, and an entry someone adds
    after it stays its own entry. Empty content is the marker and the date alone.

    `parse_history` of a section holding the result gives exactly one Entry with that text, that
    content and that date (the day), and Squad's `parseHistory` sees it inside that section.
    """
    said = _normalise_newlines(content).strip()
    lines = ["" if _is_blank(line) else line for line in said.split("\n")] if said else []
    marker = _open_fence(lines[1:])
    if marker:
        lines.append(marker)
    day = date.date().isoformat()
    first = f"{_PIN if type == 'update' else '-'} {day} —" + (f" {lines[0]}" if lines else "")
    rest = ["  " + line for line in lines[1:]]
    return "\n".join([first, *rest]) + "\n"


def render_section_heading(section: str) -> str:
    """The heading that opens a new section at the end of a history.md: "\\n## {section}\\n\\n"."""
    return f"\n## {_one_line(section)}\n\n"
