"""Untrusted text shaped for rendering (docs/compiler.md, "Untrusted text").

Every value an agent wrote or a file brought in passes through here before Canon renders it among its
own headings and labels. Pure functions, no database; the stored text is never changed, only what is
shown.

- `clean` removes what a reader cannot see or that reorders what they see, and makes every line break
  a newline.
- `one_line` is for titles, names and list items: one line, runs of white space as one space.
  `heading` is `one_line` for a heading's text: a closing run of `#` stays part of the text.
- `block` is for contents, rationales and summaries: every line after the first is indented under its
  item, and no line of it can open a block of CommonMark's but a list item: not a heading, a code
  block (fenced or indented), an HTML block, a thematic break, a blockquote or a link reference
  definition, nor a `**Label:**` line. Canon's block is then structured by Canon alone.
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
# CommonMark's other block starts, as its parser reads them (ASCII only): an ATX heading, a code fence
# of backticks or tildes (of any length), the start of an HTML block (each of its seven kinds opens with
# `<` and a letter, `/`, `!` or `?`), and a list item's marker with the spaces after it.
_ATX_HEADING = re.compile(r"#{1,6}(?: |$)")
_FENCES = ("```", "~~~")
_HTML_BLOCK = re.compile(r"<[A-Za-z/!?]")
_LIST_MARKER = re.compile(r"([-+*]|[0-9]{1,9}[.)])( *)")
# A list item's content this many spaces past its marker is an indented code block.
_CODE_AFTER_MARKER = 5
# Canon indents a block's further lines by two spaces at the top level (a content, the focus) and by
# four under an episode's item, whose content starts at two: a line with this many spaces of its own
# is indented four or more past Canon's own column, the indentation of a code block. (Under a memory's
# item, whose content starts where the further lines do, it would take four; `block` does not know
# where it is put, so two count everywhere.)
_CODE_INDENT = 2
# ... and this many past the content of a list item of the text's own.
_CODE_INDENT_IN_ITEM = 4


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


_CLOSING_SEQUENCE = re.compile(r"(?:^| )(#+)$")


def heading(text: str) -> str:
    """`one_line(text)` for the text of an ATX heading: a closing run of `#` (`Use queues ##`), which
    CommonMark would leave out of the heading, gets a backslash before it."""
    line = one_line(text)
    closing = _CLOSING_SEQUENCE.search(line)
    return line if closing is None else line[: closing.start(1)] + "\\" + line[closing.start(1) :]


def _opens_structure(start: str) -> bool:
    """Whether `start` (a line past its leading white space) starts a heading, a quote, a label or an
    underline, as a reader sees it."""
    start = unicodedata.normalize("NFKC", start)
    return start.startswith(_MARKERS) or _SETEXT_UNDERLINE.fullmatch(start) is not None


def _opens_definition(line: str, at: int, label_ends_below: bool) -> bool:
    """Whether the `[` at `at` could open a link reference definition: its label, which ends at the
    first `]` no backslash escapes, ends in `]:` on this line, or does not end on it and could end
    below (`label_ends_below`)."""
    end = line.find("]", at)
    while end != -1:
        escapes = end
        while line[escapes - 1] == "\\":
            escapes -= 1
        if (end - escapes) % 2 == 0:
            return line.startswith(":", end + 1)
        end = line.find("]", end + 1)
    return label_ends_below


def _opens_block(line: str, at: int, label_ends_below: bool) -> int | None:
    """Where a backslash keeps `line`, read from `at`, from opening a CommonMark block that is not a
    paragraph or a list item; None when it opens none. `label_ends_below`: a link label opened here
    could end on a later line (`_opens_definition`).

    A list item is left to open, since it stays under Canon's item, but what its content opens is
    looked for past its marker (`- # x`, `1. ~~~`), an item of nothing but its marker loses it (what
    follows would be the item's first block), and so does a marker followed by an indented code block.
    Each marker is read once and every look past it is bounded or done once per line: linear.
    """
    rule_ends: dict[str, int] = {}
    while True:
        ch = line[at]
        if ch in "*-_":
            # A thematic break: three or more of one of `*-_` and spaces, to the end of the line.
            if ch not in rule_ends:
                rule_ends[ch] = len(line.rstrip(" " + ch))
            if at >= rule_ends[ch] and line.count(ch, at) >= 3:
                return at
        if (
            ch == ">"
            or line.startswith(_FENCES, at)
            or _ATX_HEADING.match(line, at)
            or _HTML_BLOCK.match(line, at)
            or (ch == "[" and _opens_definition(line, at, label_ends_below))
        ):
            return at
        marker = _LIST_MARKER.match(line, at)
        if marker is None:
            return None
        spaces = len(marker.group(2))
        if marker.end() < len(line) and 0 < spaces < _CODE_AFTER_MARKER:
            at = marker.end()
            continue
        if marker.end() < len(line) and spaces == 0:
            return None  # `-x`, `1.5`: no marker
        # An empty item, or one whose content is indented code: the marker (`\\-`, `1\\.`) is escaped.
        return marker.end(1) - 1


def _escaped(line: str, label_ends_below: bool = False) -> str:
    """`line` with a backslash before what would open a block of its own (docs/compiler.md, "Untrusted
    text"), or as it is."""
    start = line.lstrip()
    if not start:
        return line
    at = len(line) - len(start)
    found = at if _opens_structure(start) else _opens_block(line, at, label_ends_below)
    return line if found is None else line[:found] + "\\" + line[found:]


def _item_columns(line: str, at: int, *, interrupting: bool) -> list[int]:
    """The columns where the content of each list item `line` opens at `at` starts (`- 1. x`: two).
    `interrupting`: the line follows a line of text, which only a bullet or `1.` interrupts."""
    columns: list[int] = []
    while (marker := _LIST_MARKER.match(line, at)) and marker.group(2) and marker.end() < len(line):
        if interrupting and not columns and marker.group(1)[:-1] not in ("", "1"):
            break
        at = marker.end()
        columns.append(at)
    return columns


def _rendered(lines: list[str], indent: str, own_line: bool) -> list[str]:
    """`lines` escaped (`_escaped`), those after the first indented by `indent` (with `own_line`, the
    first one too), blank ones empty.

    A line that could start a block by its indentation alone, one after a blank line or one opening a
    list item, starts with a no-break space instead of its first space when its own indentation is
    deep enough for an indented code block: past Canon's column when no list item of the text takes
    it, past the content of the innermost one that does (`items`, the columns where the content of
    each list item the text has opened and not left starts). CommonMark counts only spaces as
    indentation, so the line is text, and it reads the same.
    """
    # For each line, whether a link label opened there could end on a later line: one of its paragraph
    # holds `]:`, or its paragraph runs to the end of the block, where Canon's next line may go on with it.
    labels_below = [False] * len(lines)
    below = True
    for number in range(len(lines) - 1, -1, -1):
        labels_below[number] = below
        below = (below or "]:" in lines[number]) if lines[number].strip() else False
    rendered: list[str] = []
    items: list[int] = []
    after_blank = False
    for number, (line, label_ends_below) in enumerate(zip(lines, labels_below, strict=True)):
        if number == 0 and not own_line:
            # It follows Canon's label, or a line of Canon's paragraph: it opens no list item.
            rendered.append(_escaped(line, label_ends_below))
            continue
        if not line.strip():
            rendered.append("")
            after_blank = True
            continue
        line = _escaped(line, label_ends_below)
        own = len(line) - len(line.lstrip(" "))
        while items and items[-1] > own:
            items.pop()
        # A list item's marker, whether or not it opens one here: some parsers read it as the end of
        # the innermost item's text even where it does not.
        marker = _LIST_MARKER.match(line, own)
        deep = own - items[-1] >= _CODE_INDENT_IN_ITEM if items else own >= _CODE_INDENT
        if deep and (after_blank or (marker is not None and marker.group(2))):
            line = "\u00a0" + line[1:]
            items = []
        else:
            items += _item_columns(line, own, interrupting=not after_blank)
        rendered.append(indent + line)
        after_blank = False
    return rendered


# `block` remembers what it rendered for this many texts of at most BLOCK_CACHED_LENGTH characters: a
# compile renders the same boundaries and memories turn after turn.
BLOCK_CACHE_SIZE = 2048
BLOCK_CACHED_LENGTH = 4096


def block(text: str, indent: str = "  ", *, own_line: bool = False) -> str:
    """A multi-line value under its item: cleaned, blank lines at either end left out, every line
    after the first indented; with `own_line`, for a value Canon puts on a line of its own below a
    line of its text, the first line too.

    No line opens a block of CommonMark's but a list item. A line that would start a heading (`#` or
    its fullwidth form, after any indentation), a quote (`>`), a `**Label:**` or a setext underline
    gets a backslash before its marker, the first line too; so does one that would open a code fence,
    an HTML block, a thematic break or a link reference definition, there or past a list item's
    marker. A line that its own indentation would make indented code starts with a no-break space
    (`_rendered`)."""
    if len(text) <= BLOCK_CACHED_LENGTH:
        return _block_cached(text, indent, own_line)
    return _block(text, indent, own_line)


def _block(text: str, indent: str, own_line: bool) -> str:
    lines = clean(text).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ""
    return "\n".join(_rendered(lines, indent, own_line))


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
