"""`agents/{name}/history.md`: an agent's memory, split into entries and written in the team's style."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate

from ledger.mirror.squad.lines import Text, _is_blank, _normalise_newlines, _one_line, _scan, _split_lines

SECTION_TYPES = {"core context": "core_context", "learnings": "learning", "recent updates": "update"}
SECTION_FOR_TYPE = {
    "core_context": "Core Context",
    "learning": "Learnings",
    "update": "Recent Updates",
    "pattern": "Patterns",
}
# SECTION_TYPES plus the "Patterns" section, which holds `pattern` entries.
_HISTORY_SECTION_TYPES = {**SECTION_TYPES, "patterns": "pattern"}
_PIN = "📌"


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
