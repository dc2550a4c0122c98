"""Untrusted text shaped for rendering (docs/compiler.md, "Untrusted text").

Every value an agent wrote or a file brought in passes through here before Canon renders it among its
own headings and labels. Pure functions, no database; the stored text is never changed, only what is
shown.

- `clean` removes what a reader cannot see or that reorders what they see, and makes every line break
  a newline.
- `one_line` is for titles, names and list items: one line, runs of white space as one space.
- `block` is for contents, rationales and summaries: no line of it can start a heading, a blockquote,
  a `**Label:**` line or a setext underline, and every line after the first is indented under its item.
- `flags` names what `clean` removes, the lines that imitate Canon's own structure and the phrases
  that give orders to the model, for a reviewer. It is the one detector: the dashboard uses it too.
  Imitations and orders are compared on the text as it looks (`readable`), so a Cyrillic `i` (U+0456), a
  fullwidth letter or a zero-width space inside a word does not hide them. It runs in linear time.

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

import functools
import re
import unicodedata

from ledger.values import text_skeleton

# Canon's own headings (`ledger.context`); a line of untrusted text naming one is flagged.
COMPILER_HEADINGS = ("Boundaries and Decisions", "Memory", "Relevant Past Knowledge", "Current Session")
# Canon's own labels; a line of untrusted text starting with one is flagged.
COMPILER_LABELS = (
    "Type:",
    "Decided by:",
    "Rationale:",
    "Focus:",
    "Active issues:",
    "Summary:",
    "Difficulties:",
    "Feedback:",
)

INVISIBLE = "invisible characters"
BIDI = "bidi controls"
TAGS = "tag characters"
CONTROL = "control characters"
LINE_SEPARATORS = "line separators"
IMITATED_HEADING = "imitated heading"
IMITATED_LABEL = "imitated label"
INSTRUCTION = "instruction-like"

# ASCII's control characters but the line feed (the others that break lines are line feeds by now).
_ASCII_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f]")
_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x85\u2028\u2029]")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_HANGUL_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")
# Markers that open a line's structure, compared after compatibility normalisation (fullwidth U+FF03 is `#`).
_MARKERS = ("#", ">", "**", "__")
_SETEXT_UNDERLINE = re.compile(r"(=+|-+)\s*")


def _is_tag(ch: str) -> bool:
    return "\U000e0000" <= ch <= "\U000e0fff" and not "\U000e0100" <= ch <= "\U000e01ef"


@functools.lru_cache(maxsize=4096)
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
    if text.isascii():
        # The only characters of ASCII to remove are its controls: the common case, in one pass.
        return _ASCII_CONTROLS.sub("", text)
    # Each different character is judged once, then the text is translated in one pass.
    removed: dict[int, None] = {ord(ch): None for ch in set(text) if _removed(ch)}
    return text.translate(removed) if removed else text


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


# `block` remembers what it rendered for this many texts of at most BLOCK_CACHED_LENGTH characters: a
# compile renders the same boundaries and memories turn after turn.
BLOCK_CACHE_SIZE = 2048
BLOCK_CACHED_LENGTH = 4096


def block(text: str, indent: str = "  ") -> str:
    """A multi-line value under its item: cleaned, blank lines at either end left out, every line
    after the first indented. A line that would start a heading (`#` or its fullwidth form, after any
    indentation), a quote (`>`), a `**Label:**` or a setext underline gets a backslash before its
    marker, the first line too."""
    if len(text) <= BLOCK_CACHED_LENGTH:
        return _block_cached(text, indent)
    return _block(text, indent)


def _block(text: str, indent: str) -> str:
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


_block_cached = functools.lru_cache(maxsize=BLOCK_CACHE_SIZE)(_block)


def readable(text: str) -> str:
    """`text` as a reader sees it, for comparisons: cleaned, NFKC (fullwidth U+FF49 is `i`), case-folded,
    and each character as its UTS #39 prototype (Cyrillic U+0456 is `i`; zero-width characters vanish).

    The skeleton spells some ASCII letters oddly (`m` is `rn`): compare only with `readable` text.
    """
    return text_skeleton(unicodedata.normalize("NFKC", clean(text)).casefold()).casefold()


def _any(*words: str) -> str:
    """A regex group matching any of `words` in their `readable` form, as whole words."""
    return r"\b(?:" + "|".join(re.escape(readable(word)) for word in words) + r")\b"


def _phrase(*groups: tuple[str, ...]) -> str:
    return r"\s+".join(_any(*group) for group in groups)


_HEADINGS = frozenset(readable(heading) for heading in COMPILER_HEADINGS)
_LABELS = tuple(readable(label) for label in COMPILER_LABELS)
# A line that could imitate a heading or a label: its first visible character is a marker.
_MARKED_LINE = re.compile(r"^[^\S\n]*[#>*_].*", re.MULTILINE)
# The compiler's decision line (`**Type:** … | **Decided by:** …`) anywhere in a line.
_DECIDED_BY = re.compile(re.escape(readable("**Decided by:**")))
# Orders to the model reading the compiled context. Bounded gaps keep the search linear.
_INSTRUCTION = re.compile(
    "|".join(
        [
            _any("ignore", "disregard", "forget", "override")
            + r".{0,40}?"
            + _any("instruction", "instructions", "rule", "rules", "prompt", "prompts", "context"),
            _phrase(("system", "developer"), ("prompt", "message")),
            _phrase(("you",), ("must", "should"), ("always", "never")),
            _phrase(("always",), ("approve", "merge", "accept")),
            _phrase(("new", "updated"), ("instruction", "instructions")),
            _phrase(("as",), ("an",), ("ai",)),
            _phrase(("do",), ("not",), ("tell",)),
        ]
    ),
    re.DOTALL,
)


def _imitation(line: str) -> str | None:
    """What a `readable` line imitates: one of Canon's headings, or one of its labels."""
    start = line.strip()
    bare = start.lstrip("#>\\ *_").strip()
    if start.startswith(("#", ">")) and bare in _HEADINGS:
        return IMITATED_HEADING
    if bare.startswith(_LABELS) and start[:1] in "*_>":
        return IMITATED_LABEL
    return None


def flags(text: str) -> list[str]:
    """What in `text` a reviewer should know: what `clean` removes, lines imitating Canon's structure,
    phrases giving orders to the model. Linear in the length of `text`."""
    found: set[str] = set()
    for ch in set(text):
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
    seen = readable(text)
    for line in set(_MARKED_LINE.findall(seen)):
        imitation = _imitation(line)
        if imitation:
            found.add(imitation)
    if _DECIDED_BY.search(seen):
        found.add(IMITATED_LABEL)
    if _INSTRUCTION.search(seen):
        found.add(INSTRUCTION)
    order = (INVISIBLE, BIDI, TAGS, CONTROL, LINE_SEPARATORS, IMITATED_HEADING, IMITATED_LABEL, INSTRUCTION)
    return [name for name in order if name in found]
