"""The line machinery every Squad format shares: lines with their endings, fenced code, headings, fields,
and the body of a block Canon writes (`_body_lines`, `_without_trailing_rules`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_BOM = "\ufeff"


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
# An ATX heading as Markdown reads it: up to three spaces, then 1-6 '#' and a space, a tab or the line end.
_MARKDOWN_HEADING = re.compile(r"( {0,3})(#{1,6})(?=[ \t]|\Z)")
_PLAIN_FIELD = re.compile(r"[ \t]*(?:[-*+][ \t]+)?(owner|date)[ \t]*:[ \t]*(.*)\Z", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Text:
    """Verbatim text Canon does not interpret: a preamble, `---` lines, blank lines, anything unparsed.

    `section` is used by history.md only: the heading text of the section the text stands in, "" before
    any (a section's heading line stands in the section it opens).

    `reason` says why the text is not a row, in words a person can act on ("preamble", "untyped section
    'Team'", "separator"); "" when the parser gave none. A heading whose section's entries became rows
    has the reason `HEADING_OF_ROWS`: its words are the rows' type, so it counts as read.
    """

    text: str
    section: str = ""
    reason: str = ""


HEADING_OF_ROWS = "heading of the rows below it"


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


def _demoted(contents: list[str], mask: list[bool]) -> list[str]:
    """`contents` with its headings moved down as Squad's `prepareInboxBodyForMerge` moves an inbox body
    it puts under a `###` entry: the shallowest becomes `####`, the others keep their distance from it
    (at most `######`); nothing moves when the shallowest is `####` or deeper.

    A heading here is an ATX heading as Markdown reads it (up to three spaces before the '#'s); lines
    inside fenced code (`mask`) are never changed.
    """
    found = [
        (i, matched)
        for i, content in enumerate(contents)
        if not mask[i] and "#" in content[:4] and (matched := _MARKDOWN_HEADING.match(content))
    ]
    shift = 4 - min((len(matched.group(2)) for _, matched in found), default=4)
    if shift <= 0:
        return contents
    out = list(contents)
    for i, matched in found:
        level = min(6, len(matched.group(2)) + shift)
        out[i] = matched.group(1) + "#" * level + contents[i][matched.end() :]
    return out


def _body_lines(text: str) -> list[str]:
    """`text` as the lines of a body Canon writes under a `###` heading of its own.

    Line endings become "\\n" and surrounding blank lines go; headings outside fenced code are demoted
    (`_demoted`) so that neither Canon's nor Squad's readers see a new block in them; fenced code the
    text leaves open is closed by a line of the backticks or tildes that opened it, so it cannot run on
    into what follows. Nothing else changes.
    """
    contents = _strip_blank_lines(_normalise_newlines(text).split("\n"))
    if not contents:
        return []
    scan = _scan(contents)
    contents = _demoted(contents, scan.mask)
    last = len(contents) - 1
    for start, end in scan.ends.items():
        marker = _fence_opener(contents[start])
        if end == last and (end == start or not _closes(contents[end], marker)):
            contents.append(marker)
    return contents


def _without_trailing_rules(contents: list[str], keep: int) -> list[str]:
    """`contents` without the blank and `---` lines (outside fenced code) that end it, never shorter than
    `keep` lines: what `parse_decisions` would read as a separator after the block."""
    mask = _scan(contents).mask
    end = len(contents)
    while (
        end > keep
        and not mask[end - 1]
        and (_is_blank(contents[end - 1]) or _SEPARATOR.match(contents[end - 1]))
    ):
        end -= 1
    return contents[:end]


# Control characters a team file may hold by accident (a NUL an editor left, a terminal's escape code).
# They are dropped from what the ledger stores and reported; the file itself keeps them. Tab, line feed and
# carriage return are text.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def without_controls(text: str) -> str:
    """`text` without the control characters `CONTROL` matches (the same object when it has none)."""
    return CONTROL.sub("", text) if CONTROL.search(text) else text
