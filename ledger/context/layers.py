"""What each layer of the context block may hold, read from the database: the compiler's statements.

Every rule of what a layer holds is defined once: who reads a row in `ledger.visibility`, which
memories are live in `ledger.lifecycle`, which rows each layer takes in `ledger.selectors`, whose
querysets read by them through the ORM. The statements here are built from those same definitions
(`ledger.context.sql`): the boundaries', the memory candidates' and the open session's are the
selectors' querysets compiled; the relevant layer's, which rank by the full-text index, are written
around the selectors' WHERE clauses. Each is built once per process and engine, and then only run:
this is the hot path of every agent turn, and the ORM's building of a query on every call cost more
than the queries themselves (bench/compile.py). Each is served by an index named in `ledger.models` or
by the full-text index.

The functions below run them and give the rows each layer may take, in order, before any budget: the
compiler takes from these, and tests/ledger/test_context_rules.py checks them against the selectors
row for row.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import CharField, DateTimeField, F, IntegerField
from django.db.models.expressions import RawSQL

from ledger import selectors, word_stats
from ledger.context.sql import Statement, expression, param, query, where
from ledger.models import Decision
from ledger.relevance import fts5_any, pg_any, task_pieces
from ledger.search import INDEXES
from ledger.visibility import SCOPE_AGENT, SCOPE_SUMMARY, SCOPE_TEAM

# The values a statement is run with.
PROJECT = param("project", IntegerField())
KEY = param("key", CharField())
NOW = param("now", DateTimeField())
# The agent the block is for, by its key (0 when the project has no such agent); in the relevant
# layer's statements, as the CTE `me` they open with holds it.
ME = selectors.agent_id_with_key(PROJECT, KEY)
ME_IN_CTE = RawSQL("SELECT id FROM me", ())


def _vendor(cursor: Any) -> str:
    """The engine `cursor` reads (its connection's, read there: cheaper than through the
    `django.db.connection` proxy on every statement of every turn). Each statement is built once for
    it, and kept by its builder's cache."""
    return "postgresql" if cursor.db.vendor == "postgresql" else "sqlite"


@contextmanager
def prepared() -> Iterator[None]:
    """On PostgreSQL with the parameters bound by the server (`DATABASE_PREPARED_STATEMENTS`), the
    compiler's statements are prepared on their connection the first time they run there, so they are
    not parsed and planned again on every turn (psycopg keeps them while the connection lives). Only
    the compiler's: a search on a dashboard page is planned for its own words each time, since a plan
    made for any words would not know how common they are."""
    raw = connection.connection
    if raw is None or connection.settings_dict["OPTIONS"].get("server_side_binding") is not True:
        yield
        return
    before = raw.prepare_threshold
    raw.prepare_threshold = 0
    try:
        yield
    finally:
        raw.prepare_threshold = before


# ---------------------------------------------------------------------------------------------
# Boundaries, memory candidates, the open session: the selectors' querysets, compiled.


@functools.cache
def _boundaries(vendor: str) -> Statement:
    columns = ("id", "title", "type", "agent__name", "content", "rationale", "tokens")
    return Statement.of(query(selectors.boundaries(PROJECT).values_list(*columns)))


def boundary_rows(cursor: Any, project_id: int) -> list[tuple[Any, ...]]:
    """The boundaries, oldest first: (id, title, type, agent's name, content, rationale, tokens)."""
    statement = _boundaries(_vendor(cursor))
    cursor.execute(statement.sql, statement.params(project=project_id))
    return list(cursor.fetchall())


# The columns of each part of the memory candidates: those of a memory's line, and those the parts
# are merged by (`selectors.MEMORY_LAYER_ORDER`).
_MEMORY_COLUMNS = ("id", "importance_rank", "created_at", "type", "content", "tokens")


@functools.cache
def _memory_parts(vendor: str) -> tuple[str, str]:
    own, shared = selectors.memory_layer_parts(PROJECT, ME, NOW)
    named = {"agent_key": F("agent__key"), "agent_name": F("agent__name")}
    return query(own.values(*_MEMORY_COLUMNS, **named)), query(shared.values(*_MEMORY_COLUMNS, **named))


@functools.cache
def _memory(vendor: str, limit: int) -> Statement:
    """The memory candidates in the layer's order: the agent's own and the other agents' shared ones,
    each part at most `limit` rows read along its index, merged."""
    own, shared = _memory_parts(vendor)
    order = ", ".join(
        f"{field[1:]} DESC" if field.startswith("-") else field for field in selectors.MEMORY_LAYER_ORDER
    )
    return Statement.of(
        "SELECT id, type, content, tokens, agent_key, agent_name FROM ("
        f"SELECT * FROM ({own} LIMIT {int(limit)}) own"
        " UNION ALL "
        f"SELECT * FROM ({shared} LIMIT {int(limit)}) shared"
        f") candidates ORDER BY {order}"
    )


def memory_rows(cursor: Any, project_id: int, key: str, now: datetime, limit: int) -> list[tuple[Any, ...]]:
    """The memory candidates, in the order the layer takes them: (id, type, content, tokens, agent's
    key, agent's name). At most `limit` of each part: only the first `limit` rows are surely all the
    candidates that come first."""
    statement = _memory(_vendor(cursor), limit)
    expiry = cursor.db.ops.adapt_datetimefield_value(now)
    cursor.execute(statement.sql, statement.params(project=project_id, key=key, now=expiry))
    return list(cursor.fetchall())


@functools.cache
def _session(vendor: str) -> Statement:
    columns = (
        "id",
        "focus_area",
        "active_issues",
        "summary",
        "tokens",
        "focus_by",
        "issues_by",
        "summary_by",
    )
    return Statement.of(query(selectors.open_sessions(PROJECT).order_by().values_list(*columns)))


def session_row(cursor: Any, project_id: int) -> tuple[Any, ...] | None:
    """The open session: (id, focus, active issues, summary, tokens, and who wrote each), or None."""
    statement = _session(_vendor(cursor))
    cursor.execute(statement.sql, statement.params(project=project_id))
    row = cursor.fetchone()
    return None if row is None else tuple(row)


# ---------------------------------------------------------------------------------------------
# The relevant layer: the best candidates of each kind by text score, among the rows the selectors'
# rules allow.
#
# Memories: the project's live ones the agent may read; episodes: the agent's own; decisions: the
# project's active ones that are not boundaries nor held. The index holds, beside each memory's and
# episode's words, scope words saying who may read it (migration 0010; `ledger.visibility`), and the
# match asks for the agent's scope words AND any of the task's words: only the rows the agent may read
# are scored. Decisions are read by every agent of the project, so no scope words are asked for; on
# SQLite their match scores only the rows `selectors.relevant_decisions` gives (read along
# `ledger_decision_boundaries`), whatever else the index holds. The rules are checked again on the
# rows themselves. The text score is BM25 on SQLite (the FTS5 tables; for decisions with the search's
# weights, a word in a title counts more) and ts_rank_cd times `_PG_COVERAGE` on PostgreSQL (the GIN
# index of `search_vector`), each over the task's words alone; higher is better on both.

# PostgreSQL: the task read by the index's own parser and the `english` dictionaries (`to_tsvector`, which
# built the index), so that a token the parser keeps whole (`deploy-web-pages.sh`, `v0.13.1`) is found as
# it was indexed; its value is the text `ledger.relevance.pg_any` gives. `query` matches a row holding
# any of the task's lexemes: a tsvector's text quotes each lexeme as a tsquery's text does, and a lexeme
# holds no space, so the space between two quoted lexemes is where `|` goes. It asks for no weights: a
# weighted query makes PostgreSQL read every matching row's vector again to check the weights, and the
# compiler asks for the agent's scope words as a condition of its own. `lexemes` are the task's
# lexemes, for `_PG_COVERAGE`. It ends the `q` CTE: its last two columns, and the FROM that reads the task.
_PG_QUERY = (
    "replace(strip(task.v)::text, ''' ''', ''' | ''')::tsquery AS query,"
    " tsvector_to_array(task.v) AS lexemes"
    " FROM (SELECT to_tsvector('english', replace(%(query)s, '<', '< ')) AS v) task)"
)
# PostgreSQL: the share of the task's lexemes a candidate (`c.v`, its vector) holds. ts_rank_cd counts
# where a row holds the task's words, not how rare each word is (BM25 on SQLite weighs that), so a row
# that says one common word of the task often would outrank one that holds most of the task; its text
# score is therefore ts_rank_cd times this share, worked out for the best candidates only.
_PG_COVERAGE = (
    "(length(c.v) - length(ts_delete(c.v, q.lexemes)))::float / greatest(cardinality(q.lexemes), 1)"
)
_DECISION_WEIGHTS = ", ".join(str(weight) for weight in INDEXES[Decision].weights)


def _me() -> str:
    """The CTE `me` that the relevant layer's statements open with: the agent's id as `ME` gives it."""
    return "WITH me AS (SELECT " + expression(ME) + " AS id)"


# The columns each kind of candidate is read with (and its text score after them).
_MEMORY_ROW = (
    "m.id", "m.type", "m.content", "m.tokens", "m.source", "m.pinned", "m.importance_rank", "m.created_at",
    "a.key", "a.name", "m.injected_by",
)  # fmt: skip
_EPISODE_ROW = ("e.id", "e.outcome", "e.tried", "e.difficulties", "e.feedback", "e.tokens", "e.created_at")
_DECISION_ROW = (
    "d.id", "d.type", "d.title", "d.content", "d.rationale", "d.tokens", "d.source", "d.created_at", "a.name",
)  # fmt: skip


def _pg_best(row: tuple[str, ...], tables: str, match: str, rule: str) -> str:
    """PostgreSQL, after the CTE `q`: the best `%(limit)s` rows of `tables` (the first one's alias is
    the one `row` starts with) that `match` finds and `rule` keeps, by ts_rank_cd, best first: their
    `row` and text score (ts_rank_cd times `_PG_COVERAGE`, worked out for those rows only)."""
    table = row[0].split(".")[0]
    found = ", ".join(f"c.{column.split('.')[1]}" for column in row)
    return f"""
SELECT {found}, c.score * {_PG_COVERAGE} AS score
FROM (SELECT {", ".join(row)},
             {table}.search_vector AS v, ts_rank_cd({table}.search_vector, q.query) AS score
      FROM {tables}
      CROSS JOIN q
      WHERE {match} AND {rule}
      ORDER BY score DESC, {table}.id DESC
      LIMIT %(limit)s) c
CROSS JOIN q
ORDER BY c.score DESC, c.id DESC
"""


@functools.cache
def _relevant_memory(vendor: str) -> Statement:
    rule = where(selectors.relevant_memories(PROJECT, ME_IN_CTE, NOW), "m")
    if vendor == "sqlite":
        return Statement.of(
            _me()
            + f"""
SELECT {", ".join(_MEMORY_ROW)}, s.score
FROM (SELECT rowid AS id, -bm25(ledger_memory_fts, 1.0, 0.5, 0.0) AS score
      FROM ledger_memory_fts
      WHERE ledger_memory_fts MATCH 'scope : ({SCOPE_AGENT}' || (SELECT id FROM me)
            || ' OR {SCOPE_TEAM}' || %(project)s || ' OR {SCOPE_SUMMARY}' || %(project)s
            || ') AND {{content tag_index}} : (' || %(query)s || ')') s
JOIN ledger_agentmemory m ON m.id = s.id
JOIN ledger_agent a ON a.id = m.agent_id
WHERE {rule}
ORDER BY s.score DESC, m.id DESC
LIMIT %(limit)s
"""
        )
    scope = (
        f"'{SCOPE_AGENT}' || (SELECT id FROM me) || ' | {SCOPE_TEAM}' || %(project)s::text"
        f" || ' | {SCOPE_SUMMARY}' || %(project)s::text"
    )
    tables = "ledger_agentmemory m JOIN ledger_agent a ON a.id = m.agent_id"
    return Statement.of(
        _me()
        + f",\nq AS (SELECT to_tsquery('simple', {scope}) AS scope, {_PG_QUERY}"
        + _pg_best(_MEMORY_ROW, tables, "m.search_vector @@ (q.scope && q.query)", rule)
    )


@functools.cache
def _relevant_episode(vendor: str) -> Statement:
    rule = where(selectors.relevant_episodes(PROJECT, ME_IN_CTE), "e")
    if vendor == "sqlite":
        return Statement.of(
            _me()
            + f"""
SELECT {", ".join(_EPISODE_ROW)}, s.score
FROM (SELECT rowid AS id, -bm25(ledger_episode_fts, 1.0, 1.0, 1.0, 0.5, 0.0) AS score
      FROM ledger_episode_fts
      WHERE ledger_episode_fts MATCH 'scope : {SCOPE_AGENT}' || (SELECT id FROM me)
            || ' AND {{tried difficulties feedback files}} : (' || %(query)s || ')') s
JOIN ledger_episode e ON e.id = s.id
WHERE {rule}
ORDER BY s.score DESC, e.id DESC
LIMIT %(limit)s
"""
        )
    scope = f"'{SCOPE_AGENT}' || (SELECT id FROM me)"
    return Statement.of(
        _me()
        + f",\nq AS (SELECT to_tsquery('simple', {scope}) AS scope, {_PG_QUERY}"
        + _pg_best(_EPISODE_ROW, "ledger_episode e", "e.search_vector @@ (q.scope && q.query)", rule)
    )


@functools.cache
def _relevant_decision(vendor: str) -> Statement:
    if vendor == "sqlite":
        rows = query(selectors.relevant_decisions(PROJECT).order_by().values("id"))
        return Statement.of(f"""
SELECT {", ".join(_DECISION_ROW)}, s.score
FROM (SELECT rowid AS id, -bm25(ledger_decision_fts, {_DECISION_WEIGHTS}) AS score
      FROM ledger_decision_fts
      WHERE ledger_decision_fts MATCH %(query)s AND +rowid IN ({rows})) s
JOIN ledger_decision d ON d.id = s.id
JOIN ledger_agent a ON a.id = d.agent_id
ORDER BY s.score DESC, d.id DESC
LIMIT %(limit)s
""")
    rule = where(selectors.relevant_decisions(PROJECT), "d")
    tables = "ledger_decision d JOIN ledger_agent a ON a.id = d.agent_id"
    return Statement.of(
        f"WITH q AS (SELECT {_PG_QUERY}" + _pg_best(_DECISION_ROW, tables, "d.search_vector @@ q.query", rule)
    )


def relevant_statements() -> dict[str, Statement]:
    """The relevant layer's statements for the database in use, by the kind of row they read."""
    vendor = "postgresql" if connection.vendor == "postgresql" else "sqlite"
    return {
        "memory": _relevant_memory(vendor),
        "episode": _relevant_episode(vendor),
        "decision": _relevant_decision(vendor),
    }


def task_match(cursor: Any, task: str, words: list[str]) -> str:
    """What the relevant layer's statements match: any of the task's `words` but those most memories
    hold (`ledger.word_stats`); on PostgreSQL also the pieces of the task its parser may have indexed
    whole (`task_pieces`)."""
    vendor = _vendor(cursor)
    kept = word_stats.kept_words(cursor, vendor, words)
    return pg_any(kept, task_pieces(task)) if vendor == "postgresql" else fts5_any(kept)


def relevant_memory_rows(
    cursor: Any, project_id: int, key: str, match: str, now: datetime, limit: int
) -> list[tuple[Any, ...]]:
    """The best `limit` memories matching `match` (`task_match`), best text score first: (id, type,
    content, tokens, source, pinned, importance rank, created at, agent's key, agent's name, injected
    by, text score)."""
    statement = _relevant_memory(_vendor(cursor))
    expiry = cursor.db.ops.adapt_datetimefield_value(now)
    values = {"project": project_id, "key": key, "query": match, "now": expiry, "limit": limit}
    cursor.execute(statement.sql, statement.params(**values))
    return list(cursor.fetchall())


def relevant_episode_rows(
    cursor: Any, project_id: int, key: str, match: str, limit: int
) -> list[tuple[Any, ...]]:
    """The best `limit` episodes matching `match`: (id, outcome, tried, difficulties, feedback,
    tokens, created at, text score)."""
    statement = _relevant_episode(_vendor(cursor))
    values = {"project": project_id, "key": key, "query": match, "limit": limit}
    cursor.execute(statement.sql, statement.params(**values))
    return list(cursor.fetchall())


def relevant_decision_rows(cursor: Any, project_id: int, match: str, limit: int) -> list[tuple[Any, ...]]:
    """The best `limit` decisions matching `match`: (id, type, title, content, rationale, tokens,
    source, created at, agent's name, text score)."""
    statement = _relevant_decision(_vendor(cursor))
    cursor.execute(statement.sql, statement.params(project=project_id, query=match, limit=limit))
    return list(cursor.fetchall())
