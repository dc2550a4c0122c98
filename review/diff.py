"""What an edit changed, as `<del>`/`<ins>` markup: the revisions of an entry or a decision, each against
the version that replaced it (docs/dashboard.md "Entry and decision pages").

Text is compared line by line (`difflib`), and lines that were rewritten are compared again word by
word, so a fixed typo shows as one word, not as a paragraph removed and another added. Every piece of
text is escaped before it is wrapped: what agents write is untrusted and must never become markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# The compared fields, in the order the page shows them.
FIELDS = ("title", "content", "rationale")
# Rewritten lines longer than this (in characters, both sides) are shown removed and added whole:
# comparing word by word costs the product of the two lengths.
WORD_DIFF_LIMIT = 4000
# Rewritten lines sharing less than this share of their words are shown removed and added whole: a
# word diff of a rewrite is a scatter of small changes, harder to read than the two texts.
KEPT_AT_LEAST = 0.5
# A word, a run of spaces, or one other character: joined again, the pieces give the text back.
_PIECES = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class FieldChange:
    """One field's change: its name and the marked-up text (the old one, with what changed marked)."""

    field: str
    markup: SafeString


@dataclass(frozen=True)
class RevisionDiff:
    """A revision, and what the next version changed of it (no change: an empty list)."""

    revision: Any
    changes: list[FieldChange]


def _mark(tag: str, text: str) -> str:
    if not text:
        return ""
    escaped = escape(text)
    return f"<{tag}>{escaped}</{tag}>" if tag else escaped


def _ops(
    matcher: SequenceMatcher[str], old: Sequence[str], new: Sequence[str]
) -> Iterable[tuple[str, str, str]]:
    """(opcode, old text, new text) for each run of pieces `matcher` compared, joined back into text."""
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        yield op, "".join(old[i1:i2]), "".join(new[j1:j2])


def _words(old: str, new: str) -> str:
    """Rewritten text compared word by word; rewritten mostly (or too long to compare), shown whole."""
    whole = _mark("del", old) + _mark("ins", new)
    if len(old) + len(new) > WORD_DIFF_LIMIT:
        return whole
    old_words, new_words = _PIECES.findall(old), _PIECES.findall(new)
    matcher = SequenceMatcher(None, old_words, new_words, autojunk=False)
    if matcher.ratio() < KEPT_AT_LEAST:
        return whole
    parts = []
    for op, before, after in _ops(matcher, old_words, new_words):
        parts.append(_mark("", before) if op == "equal" else _mark("del", before) + _mark("ins", after))
    return "".join(parts)


def diff_markup(old: str, new: str) -> SafeString:
    """`old` with what `new` removed in `<del>` and what it added in `<ins>`, every piece escaped."""
    parts = []
    before_lines, after_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    lines = SequenceMatcher(None, before_lines, after_lines, autojunk=False)
    for op, before, after in _ops(lines, before_lines, after_lines):
        if op == "equal":
            parts.append(_mark("", before))
        elif op == "replace":
            parts.append(_words(before, after))
        else:
            parts.append(_mark("del", before) + _mark("ins", after))
    return mark_safe("".join(parts))  # every piece is escaped by `_mark`


def changes(old: Any, new: Any) -> list[FieldChange]:
    """The fields whose text differs between two versions (objects with `FIELDS`), marked up."""
    found = []
    for field in FIELDS:
        before, after = getattr(old, field) or "", getattr(new, field) or ""
        if before != after:
            found.append(FieldChange(field, diff_markup(before, after)))
    return found


def revision_diffs(revisions: Sequence[Any], current: Any) -> list[RevisionDiff]:
    """Each revision (oldest first) against the version that replaced it: the next one, or `current`."""
    if not revisions:
        return []
    following = [*revisions[1:], current]
    return [RevisionDiff(r, changes(r, after)) for r, after in zip(revisions, following, strict=True)]
