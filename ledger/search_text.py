"""Which words of a query a row's text holds, and where: read in Python the way the index reads text.

`Matcher`, `excerpt` and `highlight` read a row's text the way the index does (the same words, the
engine's stemmer, accents folded on SQLite only), to say which of the query's words each field of a
row holds and to show them in a short excerpt.
"""

from __future__ import annotations

import functools
import threading
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Model
from snowballstemmer import stemmer

from ledger.search_sql import INDEXES
from ledger.search_words import WORD, Query

# The stemmer each database's index uses: FTS5's `porter` tokenizer, PostgreSQL's `english` (Snowball).
_STEMMERS = {"sqlite": "porter", "postgresql": "english"}
_stem_lock = threading.Lock()


@functools.lru_cache(maxsize=16384)
def _folded(word: str, vendor: str) -> str:
    """`word` lower-cased, NFKC-normalised, without accents on SQLite (`remove_diacritics`), stemmed as
    that database's index stems it (a stemmer object is not thread-safe)."""
    word = unicodedata.normalize("NFKC", word).casefold()
    if vendor != "postgresql":
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    with _stem_lock:
        return str(_stemmer(_STEMMERS.get(vendor, "porter")).stemWord(word))


@functools.cache
def _stemmer(name: str) -> Any:
    return stemmer(name)


@dataclass(frozen=True)
class Matcher:
    """The words of a query, and how a word of a row's text is matched to one of them: the same stem,
    or, for the last word typed, a stem that begins with its stem (`postg` matches `PostgreSQL`)."""

    words: tuple[str, ...]
    stems: dict[str, int]
    prefix: str
    prefix_index: int
    vendor: str
    # What `which` said of each word of a text read so far: a search reads the same words again and
    # again, row after row.
    _seen: dict[str, int | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def read(cls, q: str, vendor: str | None = None) -> Matcher:
        """The query `q` as the index of `vendor` (default: the database in use) reads it."""
        vendor = vendor or connection.vendor
        query = Query.read(q)
        stems: dict[str, int] = {}
        for index, word in enumerate(query.words):
            stems.setdefault(_folded(word, vendor), index)
        if not query.words:
            return cls(words=(), stems={}, prefix="", prefix_index=-1, vendor=vendor)
        return cls(
            words=query.words,
            stems=stems,
            prefix=_folded(query.prefix, vendor),
            prefix_index=query.words.index(query.prefix),
            vendor=vendor,
        )

    def which(self, word: str) -> int | None:
        """The index (in `words`) of the query word that `word`, a word of a text, matches, or None."""
        try:
            return self._seen[word]
        except KeyError:
            pass
        stem = _folded(word, self.vendor)
        found = self.stems.get(stem)
        if found is None and self.prefix and stem.startswith(self.prefix):
            found = self.prefix_index
        self._seen[word] = found
        return found

    def found(self, text: str) -> tuple[str, ...]:
        """The query words `text` holds, in the query's order."""
        seen, which = self._seen, self.which
        held = {seen[word] if word in seen else which(word) for word in set(WORD.findall(text))}
        return tuple(self.words[index] for index in sorted(index for index in held if index is not None))

    def marks(self, text: str) -> list[tuple[int, int, frozenset[int]]]:
        """Where the query's words are in `text`: (start, end, the query words there), in order. Words
        joined by nothing but `_JOINERS` (`deploy-web-pages.sh`, `user@example.com`) are one mark."""
        marks: list[tuple[int, int, frozenset[int]]] = []
        seen, which = self._seen, self.which
        for match in WORD.finditer(text):
            word = match.group()
            index = seen[word] if word in seen else which(word)
            if index is None:
                continue
            gap = text[marks[-1][1] : match.start()] if marks else " "
            if gap and all(c in _JOINERS for c in gap):
                marks[-1] = (marks[-1][0], match.end(), marks[-1][2] | {index})
            else:
                marks.append((match.start(), match.end(), frozenset({index})))
        return marks


# What joins the words of one token (a file name, a version, an address, an identifier).
_JOINERS = frozenset("-_./@:+#")
# The longest excerpt, in characters.
EXCERPT_LENGTH = 240
# How much of a text is read for an excerpt: a decision adopted from a long log can hold 100,000
# characters.
EXCERPT_SCAN = 20_000


def excerpt(matcher: Matcher, text: str, length: int = EXCERPT_LENGTH) -> tuple[tuple[str, bool], ...]:
    """At most `length` characters of `text` (of its first `EXCERPT_SCAN`), flattened to one line,
    around the place that holds the most different query words (the first such place; the beginning
    when none), cut at spaces, with `…` where text was left out: as pieces, each a matched word (True)
    or not. The caller marks them (`[` `]`, or `<mark>` after escaping the rest)."""
    flat = " ".join(text[:EXCERPT_SCAN].split())
    marks = matcher.marks(flat)
    start = _window(marks, len(flat), length)
    end = min(len(flat), start + length)
    if start > 0:  # begin on a whole word, before the first mark
        space = flat.find(" ", start, start + length // 5)
        start = space + 1 if space >= 0 else start
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start else end
    parts: list[tuple[str, bool]] = [("…", False)] if start > 0 else []
    at = start
    for first, last, _ in marks:
        if first < start or last > end:
            continue
        if first > at:
            parts.append((flat[at:first], False))
        parts.append((flat[first:last], True))
        at = last
    if end > at:
        parts.append((flat[at:end], False))
    if end < len(flat):
        parts.append(("…", False))
    return tuple(parts)


def _window(marks: list[tuple[int, int, frozenset[int]]], size: int, length: int) -> int:
    """Where an excerpt of `length` characters of a text of `size` begins: a fifth of `length` before
    the mark that opens the window holding the most different query words (the first such window).
    One pass: the window's marks are counted as it slides."""
    if not marks or size <= length:
        return 0
    best, start = 0, 0
    counts: dict[int, int] = {}
    low = high = 0
    for first, _, _ in marks:
        begin = max(0, first - length // 5)
        while high < len(marks) and marks[high][1] <= begin + length:
            for index in marks[high][2]:
                counts[index] = counts.get(index, 0) + 1
            high += 1
        while low < high and marks[low][0] < begin:
            for index in marks[low][2]:
                counts[index] -= 1
                if not counts[index]:
                    del counts[index]
            low += 1
        if len(counts) > best:
            best, start = len(counts), begin
    return start


@dataclass(frozen=True)
class Highlight:
    """Why a row was found and what to show of it: `why` maps each of its fields (`Index.fields`) to
    the query words it holds, in the query's order (fields holding none are left out); `field` is the
    field the `excerpt` (as `excerpt` gives it) is taken from."""

    why: dict[str, tuple[str, ...]]
    field: str
    excerpt: tuple[tuple[str, bool], ...]

    def marked(self, open_mark: str = "[", close_mark: str = "]") -> str:
        """The excerpt as one text, each matched word between the marks."""
        return "".join(f"{open_mark}{text}{close_mark}" if hit else text for text, hit in self.excerpt)


def text_fields(row: Model) -> dict[str, str]:
    """The text of `row` that its index holds, by field (`Index.fields`): tags and paths as words
    separated by spaces."""
    found: dict[str, str] = {}
    for name in INDEXES[type(row)].fields:
        value = getattr(row, name)
        found[name] = " ".join(value) if isinstance(value, list) else str(value or "")
    return found


# Fields too short or too listy to make an excerpt from when the row has other text.
_HEADINGS = frozenset({"title", "slug", "tags", "files"})


def highlight(row: Model, q: str, length: int = EXCERPT_LENGTH) -> Highlight:
    """Which words of `q` each field of `row` (a memory, decision, inbox entry or episode) holds, and an
    excerpt of the field holding the most of them, its title or slug aside (their text shows as the
    row's title); a row holding none shows the beginning of its first such field."""
    matcher = Matcher.read(q)
    fields = text_fields(row)
    why = {name: held for name, text in fields.items() if (held := matcher.found(text))}
    body = [name for name in fields if name not in _HEADINGS and fields[name].strip()]
    shown = max(body or list(fields), key=lambda name: len(why.get(name, ())))
    return Highlight(why=why, field=shown, excerpt=excerpt(matcher, fields[shown], length))
