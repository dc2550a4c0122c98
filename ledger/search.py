"""Full-text search over the ledger's text: memories, decisions, inbox entries and episodes
(docs/api.md, `q`).

A row matches when its text holds ANY word of what someone typed (`ledger.search_words`: stemmed, the
last word typed also as a prefix, never read as query syntax), found by the index each database keeps
beside the row (`ledger.search_sql`, the only reader of those indexes). In a large table of memories,
decisions or inbox entries, a word most of its rows hold is matched only when it is asked alone or with
no rarer word (`ledger.word_stats`); it still counts for the row holding every word.

Matching rows come best first (BM25 on SQLite, `ts_rank` on PostgreSQL, boosted for holding every
word, or every word in a title: `ledger.search_sql`), the newest first among equals. The score is on
each row as `search_rank` (`SCORE`): higher is better on both databases, comparable among the rows of
one table and one query.

`search` narrows the queryset it is given and ranks its rows: the result is still that queryset, with
its visibility rules, joins, counting and paging. `best` reads the best few rows of a queryset once, as
values, for a list that weighs them against other tables' rows (`ledger.finder`).

Which of the query's words each field of a row holds, and a short excerpt showing them, are read in
Python the way the index reads text (`ledger.search_text`). The names callers use are importable from
here.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import connection
from django.db.models import Expression, F, Model, QuerySet, Subquery
from django.db.models.functions import Coalesce

from ledger import visibility, word_stats
from ledger.models import AgentMemory, Decision, InboxEntry
from ledger.search_sql import (
    INDEXES,
    TEXT_INDEX,
    AnyId,
    fts5_all,
    fts5_any,
    fts5_ranked,
    postgresql_match,
    sqlite_matches,
    tsquery_sql,
)
from ledger.search_text import EXCERPT_LENGTH, EXCERPT_SCAN, Highlight, Matcher, excerpt, highlight
from ledger.search_words import STOP_WORDS, WORD, Query, terms

__all__ = [
    "EXCERPT_LENGTH",
    "EXCERPT_SCAN",
    "INDEXES",
    "SCORE",
    "STOP_WORDS",
    "WORD",
    "Highlight",
    "Matcher",
    "Query",
    "best",
    "excerpt",
    "fts5_all",
    "fts5_any",
    "fts5_ranked",
    "highlight",
    "search",
    "terms",
    "tsquery_sql",
]

M = TypeVar("M", bound=Model)

# The name of the score `search` puts on each row: higher is better.
SCORE = "search_rank"
# The order of the rows found: best first, the newest first among equals.
BEST_FIRST = (f"-{SCORE}", "-created_at", "-id")
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


def search(rows: QuerySet[M], q: str, *, paged: bool = False) -> QuerySet[M]:
    """The rows of `rows` whose text holds any word of `q`, best first, newest first among equals,
    each with its score as `search_rank` (`SCORE`, higher is better).

    `rows` is a queryset of memories, decisions, inbox entries or episodes the caller may already see;
    the search only narrows it. Text with no word to search for matches nothing.

    `paged`: the result is read by two statements, a list's count and then its page. Which memories
    are the newest `RANKED_MEMORIES` matches is then read here, once, rather than by each of them.
    """
    found = _matches(rows, q)
    if found is None:
        return rows.none()
    matches, rank = found
    if rows.model is AgentMemory:
        matches = _newest(rows, matches, RANKED_MEMORIES, now=paged)
    return matches.annotate(**{SCORE: rank}).order_by(*BEST_FIRST)


def best(rows: QuerySet[Any], q: str, count: int, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """The `count` rows of `rows` that best match `q`, as `search` finds and orders them, read once as
    the values of `fields` and their score (`SCORE`), by one statement.

    On PostgreSQL the best rows' ids are chosen first, and then only those rows are read whole: carrying
    the text of every match through the join and the sort costs more than ranking it. SQLite reads a
    row's text beside its index entry at no such cost, and reads the newest memories' matches (and
    scores them) in the one pass over its index that finds them (`_newest_best`)."""
    found = _matches(rows, q)
    if found is None:
        return []
    matches, rank = found
    newest = rows.model is AgentMemory
    if connection.vendor == "sqlite":
        if newest:
            return _newest_best(matches.annotate(**{SCORE: rank}), count, fields)
        return list(matches.annotate(**{SCORE: rank}).order_by(*BEST_FIRST).values(*fields, SCORE)[:count])
    if newest:
        matches = _newest(rows, matches, RANKED_MEMORIES, now=False)
    chosen = matches.annotate(**{SCORE: rank}).order_by(*BEST_FIRST).values("pk")[:count]
    ranked = rows.filter(pk__in=Subquery(chosen)).annotate(**{SCORE: rank})
    return list(ranked.order_by(*BEST_FIRST).values(*fields, SCORE))


def _matches(rows: QuerySet[M], q: str) -> tuple[QuerySet[M], Expression] | None:
    """The rows of `rows` that `q` matches and the expression of their score, or None when `q` holds no
    word to search for."""
    query = Query.read(q)
    if not query.words:
        return None
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
        matching, rank = postgresql_match(rows.model, query, matched, scope)
        return rows.filter(matching), rank
    return sqlite_matches(rows, query, matched, scope)


def _newest(rows: QuerySet[M], found: QuerySet[M], count: int, *, now: bool) -> QuerySet[M]:
    """`found` (the matches among `rows`) without the rows older (lower ids) than its `count` newest.

    On SQLite the ids are the index's own, which gives its matches newest first without a sort: the
    `count`th newest match's id is read there, stopping at it, and only the matches from it on are
    searched. On PostgreSQL the newest matches' ids are read (walking the ids backwards, or sorting
    what the text index found, whichever the planner finds cheaper) and the rows fetched by id. Which
    rows those are is read `now`, in a statement of its own, or inside each statement that reads the
    result."""
    if connection.vendor == "postgresql":
        newest = found.order_by("-pk").values_list("pk", flat=True)[:count]
        return rows.filter(AnyId(list(newest))) if now else rows.filter(pk__in=Subquery(newest))
    key = f"{TEXT_INDEX}__pk"
    nth = found.order_by(f"-{key}").values_list(key, flat=True)[count - 1 : count]
    if not now:
        return found.filter(**{f"{key}__gte": Coalesce(Subquery(nth), 0)})
    threshold = list(nth)
    return found.filter(**{f"{key}__gte": threshold[0]}) if threshold else found


def _newest_best(ranked: QuerySet[Any], count: int, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """SQLite: the best `count` of the newest `RANKED_MEMORIES` rows of `ranked` (memories joined to
    their index and scored), as `best` reads them.

    The index gives its matches newest first: they are read, and scored, until there are enough of
    them, and the best are kept from those. Django selects from no subquery, so the statement it
    compiles for the newest rows is wrapped in the one that orders them, and its values converted as
    Django would have."""
    names = tuple(dict.fromkeys([*fields, "created_at", "id"]))
    # The index's own ids, as an expression: a relation's name would order by its model's order.
    newest = ranked.order_by(F(f"{TEXT_INDEX}__pk").desc()).values(*names, SCORE)[:RANKED_MEMORIES]
    compiler = newest.query.get_compiler(connection=connection)
    sql, params = compiler.as_sql()
    order = ", ".join(f"{connection.ops.quote_name(name)} DESC" for name in (SCORE, "created_at", "id"))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM ({sql}) ORDER BY {order} LIMIT %s", [*params, count])
        found: Any = cursor.fetchall()
    converters = compiler.get_converters([column for column, _, _ in compiler.select[: compiler.col_count]])
    if converters:
        found = compiler.apply_converters(found, converters)
    columns = [*newest.query.values_select, *newest.query.annotation_select]
    wanted = {*fields, SCORE}
    return [
        {name: value for name, value in zip(columns, row, strict=True) if name in wanted} for row in found
    ]
