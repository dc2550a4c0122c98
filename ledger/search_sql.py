"""How each database's full-text index is asked for a search (`ledger.search`), and how it scores a row.

The index lives in the database, built by migrations 0007, 0008, 0010 and 0016: on SQLite an FTS5 table
beside each of the four tables (porter stemming, accents folded), on PostgreSQL a generated `tsvector`
column with a GIN index (the `english` configuration, every `<` read as `< ` so that the parser never
takes text for an HTML tag and drops it). The models know the FTS5 tables only as rows Django can join
(`ledger.models.MemoryTextIndex`, …).

The query (`ledger.search_words.Query`) is read the way the index read the text, so that every token the
index holds can be found:

- SQLite's tokenizer cuts `deploy-web-pages.sh` into `deploy`, `web`, `pages`, `sh`, and so does the
  query; each piece typed without a space that holds several words (a file name, a version, an
  address, a `snake_case` name) is also asked for as a phrase, which ranks the row that holds it as
  typed above one that holds its words apart;
- PostgreSQL's parser keeps such a piece as one token (`deploy-web-pages.sh`, `v0.13.1`,
  `user@example.com`) and splits others (`AIPLAN-04` is `aiplan` and `-04`). The query's tokens are
  taken from the same parser, read as the index reads text, and OR-ed with the words cut as above (a
  path in an episode's `files` is indexed as words); a row holding the parser's tokens ranks first,
  one holding only the words counts a tenth (`PARTS_WEIGHT`).

Matching rows are scored by BM25 on SQLite, `ts_rank` on PostgreSQL, each weighing a word in a title or
heading above one in passing; times `ALL_WORDS_BOOST` for a row that holds every word, and
`TITLE_BOOST` more for a decision or entry whose title holds them all. PostgreSQL's `ts_rank` rather
than `ts_rank_cd`: for a query of any words, cover density counts every occurrence of every word alike,
so a long row repeating one common word outranks one holding several of them; `ts_rank` counts each
word's further occurrences less and less (as BM25 does), and ranked the relevance set's targets better
(tests/relevance). Higher is better on both databases, comparable among the rows of one table and one
query.

On SQLite the row is joined to its FTS5 row, so the index's matches are read first and each is scored
once, in one pass; on PostgreSQL the row's own `tsvector` is matched and ranked where it stands.
`tsquery_sql` gives SQL of its own the query as PostgreSQL's index reads it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
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
)

from ledger.models import AgentMemory, Decision, Episode, FullTextIndex, InboxEntry
from ledger.search_words import Query

M = TypeVar("M", bound=Model)

# What a row holding every word of the query (the last as a prefix) has its score multiplied by.
# Above BM25's most for one word said often (k1 + 1 = 2.2 times once), so that holding every word
# outweighs saying one of them again and again.
ALL_WORDS_BOOST = 3.0
# What a row whose title holds every word (decisions, inbox entries) has its score multiplied by.
TITLE_BOOST = 2.0
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


def sqlite_matches(
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


class AnyId(Func):
    """PostgreSQL: the row's id is one of `ids`, sent as one array's text: a thousand ids as a thousand
    parameters (or as a list the driver converts at each statement) cost more to build than the
    statement takes to run."""

    output_field = BooleanField()

    def __init__(self, ids: list[int]) -> None:
        super().__init__(F("pk"))
        self.ids = "{" + ",".join(str(int(pk)) for pk in ids) + "}"

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        pk, params = compiler.compile(self.source_expressions[0])
        return f"{pk} = ANY(%s::bigint[])", [*params, self.ids]


def postgresql_match(
    model: type[Model], query: Query, matched: Query, scope: list[str]
) -> tuple[Expression, Expression]:
    """The match of `matched` (the query, or its rarer words) and the rank of what it matched, boosted
    for holding every word of `query`; with `scope` (scope words, migration 0010), only the rows
    holding one of them, asked in the same match so that the index answers both at once.

    The match and the rank read the row's own column: the planner can then read the page's other
    conditions first and check the few rows they leave, rather than gather every row a common word
    matches through the index. The queries are given as constants, read once (`_tsqueries`)."""
    tokens, parts = _pg_readings(matched, "|")
    anything = tokens if parts is None else _either(tokens, parts, "||")
    if scope:
        anything = _Sql(
            f"({anything.sql}) && to_tsquery('simple', %s)", [*anything.params, " | ".join(scope)]
        )
    factors: list[float] = []
    everies: list[_Sql] = []
    if len(query.words) > 1:
        factors.append(ALL_WORDS_BOOST)
        everies.append(_pg_every(query))
    if INDEXES[model].title_column:
        factors.append(TITLE_BOOST)
        everies.append(_pg_every(query, TITLE_WEIGHT))
    # Each as its text, in this order: the match, the tokens, the parts, each boost's.
    texts = iter(_tsqueries(anything, tokens, *([] if parts is None else [parts]), *everies))
    match = next(texts)
    rank = _Sql("coalesce(ts_rank({column}, %s::tsquery), 0)", [next(texts)])
    if parts is not None:
        rank = _Sql(
            f"({rank.sql} + {PARTS_WEIGHT} * coalesce(ts_rank({{column}}, %s::tsquery), 0))",
            [*rank.params, next(texts)],
        )
    for factor in factors:
        rank = _Sql(
            f"{rank.sql} * (CASE WHEN {{column}} @@ %s::tsquery THEN {factor} ELSE 1.0 END)",
            [*rank.params, next(texts)],
        )
    # No lexeme at all makes the query NULL, and the match NULL: no row.
    matching = _OwnColumn("{column} @@ %s::tsquery", [match], BooleanField())
    return matching, _OwnColumn(rank.sql, rank.params, FloatField())


def _tsqueries(*queries: _Sql) -> list[str | None]:
    """The text of each tsquery (None for NULL). A query's SQL is a function of what was typed alone
    (`_lexemes`), so each is read once per process and then given to a statement as a constant: the
    planner need not compute it again in every statement, nor the statement carry its SQL."""
    return list(_read_tsqueries(tuple((query.sql, tuple(query.params)) for query in queries)))


@functools.lru_cache(maxsize=512)
def _read_tsqueries(queries: tuple[tuple[str, tuple[Any, ...]], ...]) -> tuple[str | None, ...]:
    columns = ", ".join(f"({sql})::text" for sql, _ in queries)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns}", [param for _, params in queries for param in params])
        return tuple(cursor.fetchone())
