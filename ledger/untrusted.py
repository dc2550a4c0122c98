"""Untrusted text shaped for rendering (SPEC §4, "Untrusted text cannot change the shape of the block").

Every value an agent wrote or a file brought in passes through here before Canon renders it among its
own headings and labels. Pure functions, no database; the stored text is never changed, only what is
shown.

- `clean` removes what a reader cannot see or that reorders what they see, and makes every line break
  a newline.
- `one_line` is for titles, names and list items: one line, runs of white space as one space.
- `block` is for contents, rationales and summaries: no line of it can start a heading, a blockquote,
  a `**Label:**` line or a setext underline, and every line after the first is indented under its item.
- `flags` names what `clean` removes and the lines that imitate Canon's own structure, for a reviewer.

What `clean` removes:

- control characters (category Cc), but the newline; a tab becomes a space so words stay apart;
- every format character (category Cf): bidi embeddings, overrides, isolates and marks, zero-width
  spaces and joiners, the byte order mark, the soft hyphen, Unicode tag characters, interlinear
  annotation marks. Zero-width joiners go too, so an emoji sequence shows as its parts and a script
  that uses joiners for shaping may render less joined: a small cost for text in which nothing hides;
- the code points Unicode reserves as invisible that are not yet assigned (U+2065, U+FFF0-FFF8, the
  rest of the tag block) and the Hangul fillers, letters that render as blank space.

Variation selectors (U+FE00-FE0F, U+E0100-E01EF) are kept: they choose a glyph's form and cannot move
or hide text. U+2028, U+2029, U+0085, a carriage return, a vertical tab and a form feed are line breaks
(`\\r\\n` is one).
"""

from __future__ import annotations

import re
import unicodedata

# Canon's own headings (`ledger.context`); a line of untrusted text naming one is flagged.
COMPILER_HEADINGS = ("Boundaries and Decisions", "Memory", "Current Session")
# Canon's own labels; a line of untrusted text starting with one is flagged.
COMPILER_LABELS = ("Type:", "Decided by:", "Rationale:", "Focus:", "Active issues:", "Summary:")

INVISIBLE = "invisible characters"
BIDI = "bidi controls"
TAGS = "tag characters"
CONTROL = "control characters"
LINE_SEPARATORS = "line separators"
IMITATED_HEADING = "imitated heading"
IMITATED_LABEL = "imitated label"

_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x85\u2028\u2029]")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_HANGUL_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")
# Markers that open a line's structure, compared after compatibility normalisation (fullwidth U+FF03 is `#`).
_MARKERS = ("#", ">", "**", "__")
_SETEXT_UNDERLINE = re.compile(r"(=+|-+)\s*")


def _is_tag(ch: str) -> bool:
    return "\U000e0000" <= ch <= "\U000e0fff" and not "\U000e0100" <= ch <= "\U000e01ef"


def _removed(ch: str) -> bool:
    if ch == "\n":
        return False
    category = unicodedata.category(ch)
    return (
        category in ("Cc", "Cf", "Cs")
        or ch in _HANGUL_FILLERS
        or ch == "\u2065"
        or "\ufff0" <= ch <= "\ufff8"
        or _is_tag(ch)
    )


def clean(text: str) -> str:
    """`text` without invisible, direction-changing and control characters; line breaks as `\\n`."""
    text = _LINE_BREAKS.sub("\n", text).replace("\t", " ")
    return "".join(ch for ch in text if not _removed(ch))


def one_line(text: str) -> str:
    """`text` cleaned, every run of white space (line breaks included) one space, trimmed."""
    return " ".join(clean(text).split())


def _opens_structure(line: str) -> bool:
    """Whether `line`, past its leading white space, starts a heading, a quote, a label or an underline."""
    start = unicodedata.normalize("NFKC", line.lstrip())
    return start.startswith(_MARKERS) or _SETEXT_UNDERLINE.fullmatch(start) is not None


def _escaped(line: str) -> str:
    if not _opens_structure(line):
        return line
    rest = line.lstrip()
    return line[: len(line) - len(rest)] + "\\" + rest


def block(text: str, indent: str = "  ") -> str:
    """A multi-line value under its item: cleaned, blank lines at either end left out, every line
    after the first indented. A line that would start a heading (`#` or its fullwidth form, after any
    indentation), a quote (`>`), a `**Label:**` or a setext underline gets a backslash before its
    marker, the first line too."""
    lines = clean(text).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ""
    rendered = [_escaped(lines[0])]
    rendered += [indent + _escaped(line) if line.strip() else "" for line in lines[1:]]
    return "\n".join(rendered)


def _imitates(line: str) -> str | None:
    start = unicodedata.normalize("NFKC", clean(line)).strip()
    bare = start.lstrip("#>\\ *_").strip().casefold()
    if start.startswith(("#", ">")) and bare in {h.casefold() for h in COMPILER_HEADINGS}:
        return IMITATED_HEADING
    if any(bare.startswith(label.casefold()) for label in COMPILER_LABELS) and start[:1] in "*_>":
        return IMITATED_LABEL
    return None


def flags(text: str) -> list[str]:
    """What in `text` a reviewer should know: what `clean` removes, lines imitating Canon's structure."""
    found: set[str] = set()
    for ch in text:
        if ch in _BIDI:
            found.add(BIDI)
        elif _is_tag(ch):
            found.add(TAGS)
        elif ch in "\x0b\x0c\x85\u2028\u2029":
            found.add(LINE_SEPARATORS)
        elif ch in "\t\n\r":
            continue
        elif unicodedata.category(ch) == "Cc":
            found.add(CONTROL)
        elif _removed(ch):
            found.add(INVISIBLE)
    if re.search("\r(?!\n)", text):
        found.add(LINE_SEPARATORS)
    for line in clean(text).split("\n"):
        imitation = _imitates(line)
        if imitation:
            found.add(imitation)
    order = (INVISIBLE, BIDI, TAGS, CONTROL, LINE_SEPARATORS, IMITATED_HEADING, IMITATED_LABEL)
    return [name for name in order if name in found]
