"""Full-text search over the ledger's text: memories, decisions, inbox entries and episodes
(docs/api.md, `q`).

The index lives in the database, built by migrations 0007, 0008, 0010 and 0016: on SQLite an FTS5 table
beside each of the four tables (porter stemming, accents folded), on PostgreSQL a generated `tsvector`
column with a GIN index (the `english` configuration, every `<` read as `< ` so that the parser never
takes text for an HTML tag and drops it). This module is the only reader; the models know the FTS5
tables only as rows Django can join (`ledger.models.MemoryTextIndex`, …).

What someone types is never read as query syntax. It is cut into words (runs of letters and digits),
English stop words are dropped, and each word is quoted before it reaches the database. A row matches
when it holds ANY of the words, stemmed (`migrations` finds `migration`), the last one typed also as a
prefix (`postg` finds `PostgreSQL`, as the dashboard searches while someone types). Text with no word
left (only punctuation or stop words) matches nothing. In a large table of memories, decisions or
inbox entries, a word most of its rows hold is matched only when it is asked alone or with no rarer
word (`ledger.word_stats`); it still counts for the row holding every word.

The query is read the way the index read the text, so that every token the index holds can be found:

- SQLite's tokenizer cuts `deploy-web-pages.sh` into `deploy`, `web`, `pages`, `sh`, and so does the
  query; each piece typed without a space that holds several words (a file name, a version, an
  address, a `snake_case` name) is also asked for as a phrase, which ranks the row that holds it as
  typed above one that holds its words apart;
- PostgreSQL's parser keeps such a piece as one token (`deploy-web-pages.sh`, `v0.13.1`,
  `user@example.com`) and splits others (`AIPLAN-04` is `aiplan` and `-04`). The query's tokens are
  taken from the same parser, read as the index reads text, and OR-ed with the words cut as above (a
  path in an episode's `files` is indexed as words); a row holding the parser's tokens ranks first,
  one holding only the words counts a tenth (`PARTS_WEIGHT`).

Matching rows come best first: BM25 on SQLite, `ts_rank` on PostgreSQL, each weighing a word in a
title or heading above one in passing; times `ALL_WORDS_BOOST` for a row that holds every word, and
`TITLE_BOOST` more for a decision or entry whose title holds them all; the newest first among equals.
PostgreSQL's `ts_rank` rather than `ts_rank_cd`: for a query of any words, cover density counts every
occurrence of every word alike, so a long row repeating one common word outranks one holding several
of them; `ts_rank` counts each word's further occurrences less and less (as BM25 does), and ranked
the relevance set's targets better (tests/relevance). The score is on each row as `search_rank`
(`SCORE`): higher is better on both databases, comparable among the rows of one table and one query.

The search narrows the queryset it is given and ranks its rows: on SQLite the row is joined to its FTS5
row, so the index's matches are read first and each is scored once, in one pass; on PostgreSQL the
row's own `tsvector` is matched and ranked where it stands. The result is still that queryset, with
its visibility rules, joins, counting and paging.

`Matcher`, `excerpt` and `highlight` read a row's text in Python the way the index does (the same
words, the engine's stemmer, accents folded on SQLite only), to say which of the query's words each
field of a row holds and to show them in a short excerpt. `tsquery_sql` gives SQL of its own the
query as PostgreSQL's index reads it.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from django.db import connection
from django.db.models import (
    BooleanField,
    Expression,
    F,
    Field,
    FloatField,
    Func,
    Lookup,
    Model,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce
from snowballstemmer import stemmer

from ledger import visibility, word_stats
from ledger.models import AgentMemory, Decision, Episode, FullTextIndex, InboxEntry

M = TypeVar("M", bound=Model)

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

# The name of the score `search` puts on each row: higher is better.
SCORE = "search_rank"
# What a row holding every word of the query (the last as a prefix) has its score multiplied by.
# Above BM25's most for one word said often (k1 + 1 = 2.2 times once), so that holding every word
# outweighs saying one of them again and again.
ALL_WORDS_BOOST = 3.0
# What a row whose title holds every word (decisions, inbox entries) has its score multiplied by.
TITLE_BOOST = 2.0
# The tables whose common words are left out of a match of rarer ones (`ledger.word_stats`): those that
# grow to thousands of rows. An agent's episodes stay few.
COUNTED: dict[type[Model], word_stats.Table] = {
    AgentMemory: word_stats.MEMORIES,
    Decision: word_stats.DECISIONS,
    InboxEntry: word_stats.ENTRIES,
}
# The most memories one search scores: when more match, the newest RANKED_MEMORIES of them (among the
# rows the caller may see). Every match must be scored before the best can be shown, and a word held by
# tens of thousands of memories would cost the whole index's worth of scoring; a word that common
# ranks its rows by little but their length, and the newest of them are the likeliest to be still
# true. Decisions, inbox entries and episodes stay far fewer.
RANKED_MEMORIES = 1_000
# PostgreSQL: what a match on the query's words cut apart counts beside a match on the parser's own
# tokens, when the two differ (`deploy-web-pages.sh` is one token to the parser, four words to SQLite).
PARTS_WEIGHT = 0.1


@dataclass(frozen=True)
class Index:
    """Where one table's text is indexed: the FTS5 table (SQLite) and BM25's weight for each of its
    columns, in order (a word in a title counts more than one in passing). A table whose index also
    holds scope words (who may read the row, migration 0010) names its text columns: what someone
    types is looked for there only. `fields` are the model's fields that text comes from, in the
    order a row's text is read for an excerpt."""

    fts_table: str
    weights: tuple[float, ...]
    text_columns: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    title_column: str = ""

    def match(self, query: str) -> str:
        """`query` limited to the text columns, where the index has other ones."""
        return f"{{{' '.join(self.text_columns)}}} : ({query})" if self.text_columns else query


INDEXES: dict[type[Model], Index] = {
    AgentMemory: Index(  # + scope
        "ledger_memory_fts", (1.0, 0.5, 0.0), ("content", "tag_index"), ("content", "tags")
    ),
    Decision: Index(
        "ledger_decision_fts", (4.0, 1.0, 0.5), fields=("title", "content", "rationale"), title_column="title"
    ),
    InboxEntry: Index(
        "ledger_entry_fts",
        (1.0, 4.0, 1.0, 0.5),
        fields=("title", "slug", "content", "rationale"),
        title_column="title",
    ),
    Episode: Index(  # + scope
        "ledger_episode_fts",
        (1.0, 1.0, 1.0, 0.5, 0.0),
        ("tried", "difficulties", "feedback", "files"),
        ("tried", "difficulties", "feedback", "files"),
    ),
}
# The generated column PostgreSQL keeps on each table, and its configuration.
PG_COLUMN = "search_vector"
PG_CONFIG = "english"
# The weights text is indexed under; the scope words that say who may read a row (migration 0010) are
# weight D, so a query limited to these never matches them.
TEXT_WEIGHTS = "ABC"
# The weight of a title (decisions, inbox entries; migration 0007).
TITLE_WEIGHT = "A"

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


def _fts5_word(word: str, prefix: str) -> str:
    return f'"{word}"*' if word == prefix else f'"{word}"'


def fts5_any(query: Query) -> str:
    """An FTS5 query matching a row with any of the query's words, each quoted (a word holds no quote),
    the last typed as a prefix."""
    return " OR ".join(_fts5_word(word, query.prefix) for word in query.words)


def fts5_all(query: Query) -> str:
    """An FTS5 query matching a row with every word of the query, the last typed as a prefix."""
    return " AND ".join(_fts5_word(word, query.prefix) for word in query.words)


def fts5_ranked(query: Query) -> str:
    """The FTS5 query BM25 weighs: any word, and each piece of several words as a phrase (as the
    tokenizer read it in the text), the last piece's last word as a prefix. It matches the rows
    `fts5_any` matches."""
    phrases = []
    for index, words in enumerate(query.pieces):
        if len(words) > 1:
            last = index == len(query.pieces) - 1
            phrases.append(f'"{" ".join(words)}"' + ("*" if last else ""))
    return " OR ".join([fts5_any(query), *phrases])


@dataclass
class _Sql:
    """A piece of SQL and its parameters, in order."""

    sql: str
    params: list[Any] = field(default_factory=list)


def _lexemes(text: str, weights: str, operator: str) -> _Sql:
    """A tsquery over the lexemes PostgreSQL's parser and dictionaries make of `text` (as they made the
    index), each weighted `weights` (`*ABC` for a prefix), joined by `operator`; NULL when there are
    none. Only immutable functions of the text: the planner computes it once, as a constant.

    A `tsvector`'s text quotes each lexeme the way a `tsquery`'s text does (a quote doubled, a
    backslash escaped), and a lexeme holds no space, so the space between two quoted lexemes is where
    the operator goes."""
    vector = f"to_tsvector('{PG_CONFIG}', replace(%s, '<', '< '))"
    suffix = f":{weights}" if weights else ""
    sql = (
        f"CASE WHEN {vector} = ''::tsvector THEN NULL ELSE (replace(strip({vector})::text, ''' ''',"
        f" '''{suffix} {operator} ''') || '{suffix}')::tsquery END"
    )
    return _Sql(sql, [text, text])


def _either(a: _Sql, b: _Sql, operator: str) -> _Sql:
    """`a operator b` (tsquery's `||` or `&&`), or whichever is not NULL."""
    return _Sql(
        f"coalesce(({a.sql}) {operator} ({b.sql}), {a.sql}, {b.sql})",
        [*a.params, *b.params, *a.params, *b.params],
    )


def _reading(head: str, tail: str, combine: str, weights: str, prefix: bool) -> _Sql:
    """A tsquery over the lexemes of `head` and of `tail` (as prefixes, with `prefix`), in the columns
    of `weights`: any of them (`combine` `|`) or all of them (`&`)."""
    both = "||" if combine == "|" else "&&"
    last = f"*{weights}" if prefix else weights
    return _either(_lexemes(head, weights, combine), _lexemes(tail, last, combine), both)


def _pg_readings(
    query: Query, combine: str, weights: str = TEXT_WEIGHTS, prefix: bool = True
) -> tuple[_Sql, _Sql | None]:
    """The query as PostgreSQL's parser reads what was typed, and as the words cut apart (None when
    both read it the same), any or all of their lexemes (`combine`), in the columns of `weights`."""
    others = " ".join(word for word in query.words if word != query.prefix)
    prefix = prefix and bool(query.prefix)
    words = _reading(others, query.prefix, combine, weights, prefix)
    if query.plain:
        return words, None
    head = " ".join(piece for piece in query.text.split() if piece != query.last_piece)
    return _reading(head, query.last_piece, combine, weights, prefix), words


def tsquery_sql(q: str, *, weights: str = TEXT_WEIGHTS, prefix: bool = True) -> tuple[str, list[Any]]:
    """PostgreSQL: an SQL expression of type `tsquery` matching a row that holds any word of `q` as the
    index holds it (the parser's tokens and the words cut apart, as `search` reads `q`), each in the
    columns of `weights` (`""`: any column, scope words too), the last word typed also as a prefix
    with `prefix`; and its parameters. NULL when `q` has no word. For SQL of its own that searches the
    index: `to_tsquery` over words cut in Python never finds `deploy-web-pages.sh` there."""
    tokens, parts = _pg_readings(Query.read(q), "|", weights, prefix)
    found = tokens if parts is None else _either(tokens, parts, "||")
    return found.sql, found.params


def _pg_every(query: Query, weights: str = TEXT_WEIGHTS) -> _Sql:
    """A tsquery matching a row that holds every word of the query in the columns of `weights`, in
    either reading."""
    tokens, parts = _pg_readings(query, "&", weights)
    return tokens if parts is None else _either(tokens, parts, "||")


@FullTextIndex.register_lookup
class Match(Lookup):
    """`index MATCH query`: SQLite's FTS5 table asked for the rows its query matches."""

    lookup_name = "match"

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} MATCH {rhs}", [*lhs_params, *rhs_params]


# The relation from each model to its row of SQLite's FTS5 table (`ledger.models.MemoryTextIndex`, …).
TEXT_INDEX = "text_index"


class _Bm25(Func):
    """SQLite: the BM25 score of a row joined to its FTS5 row by `search`, negated so that higher is
    better, times each boost (an FTS5 query and a factor) whose query the row matches."""

    output_field = FloatField()

    def __init__(self, index: Index, boosts: list[tuple[str, float]]) -> None:
        super().__init__(F(f"{TEXT_INDEX}__index"), F("pk"))
        self.index, self.boosts = index, boosts

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        column, _ = compiler.compile(self.source_expressions[0])
        pk, _ = compiler.compile(self.source_expressions[1])
        table = connection.ops.quote_name(self.index.fts_table)
        weights = ", ".join(str(weight) for weight in self.index.weights)
        sql = f"-bm25({column}, {weights})"
        for _, factor in self.boosts:
            holds = f"{pk} IN (SELECT rowid FROM {table} WHERE {table} MATCH %s)"
            sql += f" * (CASE WHEN {holds} THEN {factor} ELSE 1.0 END)"
        return f"({sql})", [match for match, _ in self.boosts]


def _sqlite(
    rows: QuerySet[M], query: Query, matched: Query, scope: list[str]
) -> tuple[QuerySet[M], Expression]:
    """The rows of `rows` that `matched` (the query, or its rarer words: `ledger.word_stats`) matches,
    each scored by BM25 over what it matched, boosted for holding every word of `query`; with `scope`
    (scope words, migration 0010), only the rows holding one of them.

    The row is joined to its FTS5 row (`ledger.models.MemoryTextIndex`, …): SQLite reads the index's
    matches first, then each match's row by its id, and BM25 is computed once for each, in the one pass
    over the matches. Each boost's rows are read once per statement (a list subquery)."""
    index = INDEXES[rows.model]
    boosts: list[tuple[str, float]] = []
    if len(query.words) > 1:
        boosts.append((index.match(fts5_all(query)), ALL_WORDS_BOOST))
    if index.title_column:
        boosts.append((f"{{{index.title_column}}} : ({fts5_all(query)})", TITLE_BOOST))
    match = index.match(fts5_ranked(matched))
    if scope:
        readers = " OR ".join(f'"{word}"' for word in scope)
        match = f"({match}) AND ({{scope}} : ({readers}))"
    found = rows.filter(**{f"{TEXT_INDEX}__index__match": match})
    return found, _Bm25(index, boosts)


class _OwnColumn(Func):
    """SQL over a column the models do not declare (PostgreSQL's `search_vector`), on the row's own
    table under whatever alias the query gives it: `{column}` in `sql` becomes that aliased column."""

    def __init__(self, sql: str, params: list[Any], output_field: Field[Any, Any]) -> None:
        super().__init__(F("pk"), output_field=output_field)
        self.sql, self.params = sql, params

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        pk, _ = compiler.compile(self.source_expressions[0])
        alias = pk.rsplit(".", 1)[0]  # `"U0"."id"` → `"U0"`
        return self.sql.replace("{column}", f"{alias}.{connection.ops.quote_name(PG_COLUMN)}"), self.params


def _postgresql(
    model: type[Model], query: Query, matched: Query, scope: list[str]
) -> tuple[Expression, Expression]:
    """The match of `matched` (the query, or its rarer words) and the rank of what it matched, boosted
    for holding every word of `query`; with `scope` (scope words, migration 0010), only the rows
    holding one of them, asked in the same match so that the index answers both at once.

    The match and the rank read the row's own column: the planner can then read the page's other
    conditions first and check the few rows they leave, rather than gather every row a common word
    matches through the index. The queries are constants to the planner (`_lexemes`)."""
    tokens, parts = _pg_readings(matched, "|")
    rank = _Sql(f"coalesce(ts_rank({{column}}, {tokens.sql}), 0)", tokens.params)
    anything = tokens
    if parts is not None:
        anything = _either(tokens, parts, "||")
        rank = _Sql(
            f"({rank.sql} + {PARTS_WEIGHT} * coalesce(ts_rank({{column}}, {parts.sql}), 0))",
            [*rank.params, *parts.params],
        )
    boosts: list[tuple[_Sql, float]] = []
    if len(query.words) > 1:
        boosts.append((_pg_every(query), ALL_WORDS_BOOST))
    if INDEXES[model].title_column:
        boosts.append((_pg_every(query, TITLE_WEIGHT), TITLE_BOOST))
    for every, factor in boosts:
        rank = _Sql(
            f"{rank.sql} * (CASE WHEN {{column}} @@ ({every.sql}) THEN {factor} ELSE 1.0 END)",
            [*rank.params, *every.params],
        )
    if scope:
        anything = _Sql(
            f"({anything.sql}) && to_tsquery('simple', %s)", [*anything.params, " | ".join(scope)]
        )
    # No lexeme at all makes the query NULL, and the match NULL: no row.
    matching = _OwnColumn(f"{{column}} @@ ({anything.sql})", anything.params, BooleanField())
    return matching, _OwnColumn(rank.sql, rank.params, FloatField())


def search(rows: QuerySet[M], q: str) -> QuerySet[M]:
    """The rows of `rows` whose text holds any word of `q`, best first, newest first among equals,
    each with its score as `search_rank` (`SCORE`, higher is better).

    `rows` is a queryset of memories, decisions, inbox entries or episodes the caller may already see;
    the search only narrows it. Text with no word to search for matches nothing.
    """
    query = Query.read(q)
    if not query.words:
        return rows.none()
    matched = query
    counted = COUNTED.get(rows.model)
    if counted is not None and len(query.words) > 1:
        with connection.cursor() as cursor:
            kept = word_stats.kept_words(cursor, connection.vendor, list(query.words), counted)
        matched = query.keeping(kept)
    # A memory queryset that knows its reader (`MemoryQuerySet`) asks the index for the reader's rows
    # alone, by the scope words the index holds beside each memory's text.
    reader = getattr(rows, "reader", None)
    scope = visibility.memory_scope_words(reader) if reader is not None else []
    if connection.vendor == "postgresql":
        matching, rank = _postgresql(rows.model, query, matched, scope)
        found = rows.filter(matching)
    else:
        found, rank = _sqlite(rows, query, matched, scope)
    if rows.model is AgentMemory:
        found = _newest(rows, found, RANKED_MEMORIES)
    return found.annotate(**{SCORE: rank}).order_by(f"-{SCORE}", "-created_at", "-id")


def _newest(rows: QuerySet[M], found: QuerySet[M], count: int) -> QuerySet[M]:
    """`found` (the matches among `rows`) without the rows older (lower ids) than its `count` newest.

    On SQLite the ids are the index's own, which gives its matches newest first without a sort: the
    threshold is read there, stopping at it, and then only the matches from it on are read. On
    PostgreSQL the newest matches' ids are read once (walking the ids backwards, or sorting what the
    text index found, whichever the planner finds cheaper) and the rows fetched by id."""
    if connection.vendor == "postgresql":
        return rows.filter(pk__in=Subquery(found.order_by("-pk").values("pk")[:count]))
    key = f"{TEXT_INDEX}__pk"
    threshold = Coalesce(Subquery(found.order_by(f"-{key}").values(key)[count - 1 : count]), 0)
    return found.filter(**{f"{key}__gte": threshold})


# --- Which words a row holds, and where: read in Python the way the index reads text ---

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
        stem = _folded(word, self.vendor)
        found = self.stems.get(stem)
        if found is None and self.prefix and stem.startswith(self.prefix):
            return self.prefix_index
        return found

    def found(self, text: str) -> tuple[str, ...]:
        """The query words `text` holds, in the query's order."""
        held = {index for word in set(WORD.findall(text)) if (index := self.which(word)) is not None}
        return tuple(self.words[index] for index in sorted(held))

    def marks(self, text: str) -> list[tuple[int, int, frozenset[int]]]:
        """Where the query's words are in `text`: (start, end, the query words there), in order. Words
        joined by nothing but `_JOINERS` (`deploy-web-pages.sh`, `user@example.com`) are one mark."""
        marks: list[tuple[int, int, frozenset[int]]] = []
        for match in WORD.finditer(text):
            index = self.which(match.group())
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
