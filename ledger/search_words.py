"""What someone typed, read for a search (`ledger.search`): its words, and the pieces they were typed in.

What someone types is never read as query syntax. It is cut into words (runs of letters and digits),
English stop words are dropped, and each word is quoted before it reaches the database
(`ledger.search_sql`). A row matches when it holds ANY of the words, stemmed (`migrations` finds
`migration`), the last one typed also as a prefix (`postg` finds `PostgreSQL`, as the dashboard
searches while someone types). Text with no word left (only punctuation or stop words) matches
nothing. The pieces typed without a space (a file name, a version, an address) are kept too: each
database's index reads such a piece in its own way (`ledger.search_sql`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

# A word: a run of letters and digits (underscore and every other character separate words), the way
# both databases' tokenizers cut text.
WORD = re.compile(r"[^\W_]+")

# PostgreSQL's English stop words (the `english` text search configuration drops them from the index
# and from queries). Dropped on both databases, so that the same query means the same on each.
_STOP_WORDS = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can did do does doing don down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own s same she
    should so some such t than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())

# Punctuation that ends or opens a word in a sentence (`payment,`, `(webhook)`), not part of a token.
_SENTENCE_MARKS = "\"'.,;:!?()[]{}"


def terms(text: str) -> list[str]:
    """The words of `text` that a search matches: lower-cased, NFKC-normalised, stop words dropped,
    each once, in the order typed."""
    found: dict[str, None] = {}
    for word in WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if word not in STOP_WORDS:
            found[word] = None
    return list(found)


@dataclass(frozen=True)
class Query:
    """What someone typed, read for a search.

    `words`: the content words (`terms`), each once. `prefix`: the last content word typed, which also
    matches as a prefix. `pieces`: each run of text between spaces that holds a content word, as all
    its words (stop words too: the SQLite index holds them), in order; `text`: what was typed,
    NFKC-normalised; `last_piece`: the text of the last piece holding a content word.
    """

    text: str
    words: tuple[str, ...]
    prefix: str
    pieces: tuple[tuple[str, ...], ...]
    last_piece: str

    @classmethod
    def read(cls, q: str) -> Query:
        text = unicodedata.normalize("NFKC", q)
        pieces: list[tuple[str, ...]] = []
        last_piece = ""
        prefix = ""
        for piece in text.split():
            words = tuple(WORD.findall(piece.casefold()))
            content = [word for word in words if word not in STOP_WORDS]
            if content:
                pieces.append(words)
                last_piece, prefix = piece, content[-1]
        return cls(
            text=text, words=tuple(terms(text)), prefix=prefix, pieces=tuple(pieces), last_piece=last_piece
        )

    def keeping(self, words: list[str]) -> Query:
        """The query without the pieces that hold none of `words` (the words worth matching by: a piece
        holding one keeps its other words too); the last word typed stays a prefix only if it is kept."""
        kept = set(words)
        if kept >= set(self.words):
            return self
        text = " ".join(piece for piece in self.text.split() if kept & set(terms(piece)))
        found = Query.read(text)
        return found if self.prefix in kept else replace(found, prefix="")

    @property
    def plain(self) -> bool:
        """Whether every piece is one word and nothing else (`payment,` is; `v0.13.1`, `AIPLAN-04`,
        `-04` are not): PostgreSQL's parser then reads the query as the words do."""
        return all(
            len(words) == 1 and piece.strip(_SENTENCE_MARKS).casefold() == words[0]
            for piece in self.text.split()
            if (words := tuple(WORD.findall(piece.casefold()))) and any(w not in STOP_WORDS for w in words)
        )
