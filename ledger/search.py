"""Full-text search over the ledger's text: memories, decisions, inbox entries and episodes
(docs/api.md, `q`).

The index lives in the database, built by migrations 0007 and 0008: on SQLite an FTS5 table beside
each of the four tables (porter stemming, accents folded), on PostgreSQL a generated `tsvector` column
with a GIN index (the `english` configuration). The models do not know about either; this module is
the only reader.

What someone types is never read as query syntax: it is cut into words (runs of letters and digits),
English stop words are dropped, and each word is quoted before it reaches the database. Every word must
match (AND), the words stemmed (`migrations` finds `migration`) and the last one also as a prefix
(`postg` finds `PostgreSQL`), so a list narrows as the words are typed. Text with no word left (only
punctuation or stop words) matches nothing. Matching rows come best first: BM25 on SQLite,
`ts_rank_cd` on PostgreSQL, newest first among equals.

The search narrows the queryset it is given and ranks its rows (SQLite: an uncorrelated `id IN (…)`
over the FTS5 table, and a score read from the matches; PostgreSQL: the row's own `tsvector`, matched
and ranked where it stands): the result is still that queryset, with its visibility rules, joins,
counting and paging.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import connection
from django.db.models import BooleanField, Expression, F, Field, FloatField, Func, Model, QuerySet, Subquery
from django.db.models.expressions import RawSQL

from ledger.models import AgentMemory, Decision, Episode, InboxEntry

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


@dataclass(frozen=True)
class Index:
    """Where one table's text is indexed: the FTS5 table (SQLite) and BM25's weight for each of its
    columns, in order (a word in a title counts more than one in passing). A table whose index also
    holds scope words (who may read the row, migration 0010) names its text columns: what someone
    types is looked for there only."""

    fts_table: str
    weights: tuple[float, ...]
    text_columns: tuple[str, ...] = ()

    def match(self, query: str) -> str:
        """`query` limited to the text columns, where the index has other ones."""
        return f"{{{' '.join(self.text_columns)}}} : ({query})" if self.text_columns else query


INDEXES: dict[type[Model], Index] = {
    AgentMemory: Index("ledger_memory_fts", (1.0, 0.5, 0.0), ("content", "tag_index")),  # + scope
    Decision: Index("ledger_decision_fts", (4.0, 1.0, 0.5)),  # title, content, rationale
    InboxEntry: Index("ledger_entry_fts", (1.0, 4.0, 1.0, 0.5)),  # slug, title, content, rationale
    Episode: Index(  # + scope
        "ledger_episode_fts", (1.0, 1.0, 1.0, 0.5, 0.0), ("tried", "difficulties", "feedback", "files")
    ),
}
# The generated column PostgreSQL keeps on each table, and its configuration.
PG_COLUMN = "search_vector"
PG_CONFIG = "english"
# The weights text is indexed under; the scope words that say who may read a row (migration 0010) are
# weight D, so a query limited to these never matches them.
TEXT_WEIGHTS = "ABC"


def terms(text: str) -> list[str]:
    """The words of `text` that a search matches: lower-cased, NFKC-normalised, stop words dropped,
    each once, in the order typed."""
    found: dict[str, None] = {}
    for word in WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if word not in STOP_WORDS:
            found[word] = None
    return list(found)


def fts5_query(words: list[str]) -> str:
    """An FTS5 query with every word quoted (a word holds no quote): all of them, the last as a prefix."""
    quoted = [f'"{word}"' for word in words]
    quoted[-1] += "*"
    return " AND ".join(quoted)


def tsquery(words: list[str]) -> str:
    """A `to_tsquery` text with every word quoted as one lexeme: all of them, the last as a prefix.

    A word is letters and digits only, so it holds none of tsquery's operators or quotes.
    """
    quoted = [f"'{word}':{TEXT_WEIGHTS}" for word in words]
    quoted[-1] = f"'{words[-1]}':*{TEXT_WEIGHTS}"
    return " & ".join(quoted)


class Rank(Func):
    """A row's relevance to the query, higher is better: a subquery tied to the row's own id.

    The id is compiled by Django (`F("pk")`), so the subquery follows the row's table under whatever
    alias the query gives it, inside another query's subquery too. `among`, when given, is a queryset
    whose ids the subquery may limit its work to (`{among}` in its SQL).
    """

    output_field = FloatField()

    def __init__(self, sql: str, params: list[Any], among: QuerySet[Any] | None = None) -> None:
        super().__init__(F("pk"), *([Subquery(among.order_by().values("pk"))] if among is not None else []))
        self.sql, self.params = sql, params

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        pk, pk_params = compiler.compile(self.source_expressions[0])
        sql, params = self.sql, list(self.params)
        if len(self.source_expressions) > 1:
            among, among_params = compiler.compile(self.source_expressions[1])
            sql, params = sql.replace("{among}", among), [*params, *among_params]
        return sql.replace("{pk}", pk), [*params, *pk_params]


def _sqlite(rows: QuerySet[M], words: list[str]) -> tuple[RawSQL, Rank]:
    index = INDEXES[rows.model]
    table = connection.ops.quote_name(index.fts_table)
    match = index.match(fts5_query(words))
    weights = ", ".join(str(weight) for weight in index.weights)
    matching = RawSQL(f"SELECT rowid FROM {table} WHERE {table} MATCH %s", [match])
    # bm25() is lower for a better match; negated, so that higher is better on both databases. The
    # scores are computed in one pass over the matches and materialised once per statement: bm25()
    # reads the whole index to weigh each word, so a MATCH per row would cost as much as all of them.
    # Only the rows the list holds so far (its project, status, type…) are scored: a common word
    # matches most of the index, and scoring every match took most of a filtered search's time. The
    # unary `+` keeps FTS5 from taking `rowid IN` as a list of lookups, each a MATCH of its own.
    rank = Rank(
        f"(WITH scores AS MATERIALIZED (SELECT rowid AS id, -bm25({table}, {weights}) AS score FROM {table}"
        f" WHERE {table} MATCH %s AND +rowid IN {{among}})"
        " SELECT score FROM scores WHERE scores.id = {pk})",
        [match],
        among=rows,
    )
    return matching, rank


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


def _postgresql(rows: QuerySet[M], words: list[str]) -> tuple[Expression, Expression]:
    # The match and the rank read the row's own column: the planner can then read the page's other
    # conditions first and check the few rows they leave, rather than gather every row a common word
    # matches through the index.
    query = f"to_tsquery('{PG_CONFIG}', %s)"
    text = tsquery(words)
    matching = _OwnColumn(f"{{column}} @@ {query}", [text], BooleanField())
    rank = _OwnColumn(f"ts_rank_cd({{column}}, {query})", [text], FloatField())
    return matching, rank


def search(rows: QuerySet[M], q: str) -> QuerySet[M]:
    """The rows of `rows` whose text matches `q`, best first, newest first among equals.

    `rows` is a queryset of memories, decisions, inbox entries or episodes the caller may already see;
    the search only narrows it. Text with no word to search for matches nothing.
    """
    words = terms(q)
    if not words:
        return rows.none()
    if connection.vendor == "postgresql":
        matching, rank = _postgresql(rows, words)
        rows = rows.filter(matching)
    else:
        found, rank = _sqlite(rows, words)
        rows = rows.filter(pk__in=found)
    return rows.alias(search_rank=rank).order_by("-search_rank", "-created_at", "-id")
