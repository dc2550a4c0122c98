"""The context compiler (docs/compiler.md): what an agent is told before each turn.

Four layers, in this order:

1. **Boundaries**: active `architectural` and `scope` decisions, oldest first, always whole.
2. **Memory**: the agent's own `core_context` memories (any importance) and `high` importance
   `learning` / `pattern` memories that are its own or tagged `cross-team`; active and not expired; ordered by
   importance, then newest first (id breaks ties). Taken in that order while fewer than `max_items`
   are taken and their tokens fit `max_tokens`; one that does not fit is skipped and the next is tried.
3. **Relevant past knowledge**, only for a `task`: the memories the agent may read (its own and the
   cross-team ones, and every closed session's summary), live and not already in the memory layer,
   the agent's own episodes, and the project's active decisions that are not boundaries, that best
   match the task. The full-text index gives each candidate a text score; `ledger.relevance.blend`
   weighs it with importance, recency and source; the best are taken while their tokens fit the
   layer's budget. A decision's line says what it is and who decided it, and when.
4. **Current session**: the open session's focus, active issues and summary, cut to its budget by
   leaving out the summary's oldest lines.

Budgets. Each layer but the boundaries has a token budget (`Budgets`): from the request, else the
project's `context_budgets`, else the settings. A project's value that is not valid is ignored and
logged (`budget_problems` says why; the admin refuses it). Every row stores its token count when it is
written (`ledger.tokens`): a memory the tokens of its content, an episode those of its text, a decision
those of its block as a boundary (in the relevant layer too), a session those of its block. The reported
`tokens` are the sums of those stored counts (headings and labels are not counted); nothing stored is
tokenised again here, but for a session block that had to be cut, whose cut form is counted.

Cost. A compile makes a fixed number of queries whatever the size of the ledger: one for the boundaries,
one for the memory candidates (the agent's own and the cross-team ones, each read in order a page at a
time, stopping as soon as `max_items` are taken; a second page is read only when a whole page of
candidates had to be skipped for the budget), one for the open session, and, with a task, three for the
relevant layer (memories, episodes, decisions: each the best `RELEVANT_CANDIDATES` by text score, found
through the full-text index), and on SQLite one more that counts, up to a cap, the rows holding each
task word, when this process has not counted them in the last `STATS_SECONDS`. With a `run_id`, the
audit record adds an insert and one for each non-empty list of included rows (the decisions of both
layers together). Each query is served by an index named in `ledger.models` or by the full-text index
(`ledger.search`). The relevant layer's cost follows the rows its match finds, so the match is kept
small: the index holds scope words saying who may read each row, asked for together with the task's
words (decisions are the team's: only the project's active non-boundary ones are scored), and on a large
ledger the task words that most rows hold are left out (`ledger.word_stats`). Rendered blocks are
remembered by `ledger.untrusted.block`, and a candidate's line is rendered only when it is taken.

Untrusted text. Every value an agent wrote or a file brought in is shaped by `ledger.untrusted`:
titles, agent names and active issues are one line; contents, rationales, the focus and the summary
are blocks whose further lines are indented under their item, and no line of them can start a
heading, a quote or a `**Label:**` line. Invisible and direction-changing characters are left out of
the text; the ledger keeps what was sent. A decision or session whose stored tokens were counted
before this rendering keeps that count until it is next written.

Recency depends on the time of the compile (`now`, by default the current time): the same ledger
and the same `now` give the same bytes.

Fail-open: any error is logged and the caller gets `text=None` with `error` set; a run never fails
because its context could not be compiled.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ledger import visibility, word_stats
from ledger.blocks import (
    decision_text,
    episode_line,
    memory_line,
    relevant_decision_line,
    relevant_memory_line,
    session_block,
    session_block_cut,
)
from ledger.models import Decision, Project, Session, Source
from ledger.relevance import (
    blend,
    fts5_any,
    pg_any,
    task_pieces,
    task_words,
)
from ledger.search import INDEXES
from ledger.services import compilation_record
from ledger.tokens import count_tokens
from ledger.untrusted import clean, one_line
from ledger.values import InvalidValue, agent_key

logger = logging.getLogger("canon.context")

# The source an episode is weighed as (`ledger.lifecycle.source_weight`, CANON_MEMORY_SOURCE_WEIGHTS).
EPISODE = "episode"

BOUNDARIES_HEADING = (
    "## Boundaries and Decisions\n"
    "> These are non-negotiable team boundaries. They take precedence over all other context."
)
MEMORY_HEADING = "## Memory"
RELEVANT_HEADING = "## Relevant Past Knowledge"
SESSION_HEADING = "## Current Session"
MAX_ITEMS_LIMIT = 200
MAX_TOKENS_LIMIT = 100_000
TASK_MAX_LENGTH = 2_000
# How many candidates of each kind (memories, episodes) the relevant layer reads, best text score first.
RELEVANT_CANDIDATES = 50
# The budgets a project may set in `context_budgets`, and the largest value of each.
BUDGET_LIMITS = {
    "max_items": MAX_ITEMS_LIMIT,
    "memory": MAX_TOKENS_LIMIT,
    "relevant": MAX_TOKENS_LIMIT,
    "session": MAX_TOKENS_LIMIT,
}


# ---------------------------------------------------------------------------------------------
# Budgets


@dataclass(frozen=True)
class Budgets:
    """What each layer may spend: `max_items` memories and `memory` tokens in the memory layer,
    `relevant` tokens in the relevant layer, `session` tokens in the session layer."""

    max_items: int
    memory: int
    relevant: int
    session: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def budget_problems(value: object) -> list[str]:
    """What is wrong with a project's `context_budgets`, one message per key (none: it is valid).

    It is an object whose keys are any of `BUDGET_LIMITS`, each a whole number from 0 to its limit.
    """
    if not isinstance(value, dict):
        return ['must be an object such as {"relevant": 1500}']
    problems = []
    for key, number in value.items():
        if key not in BUDGET_LIMITS:
            problems.append(f"{key!r} is not a budget; use {', '.join(BUDGET_LIMITS)}")
        elif isinstance(number, bool) or not isinstance(number, int):
            problems.append(f"{key} must be a whole number, not {number!r}")
        elif not 0 <= number <= BUDGET_LIMITS[key]:
            problems.append(f"{key} must be between 0 and {BUDGET_LIMITS[key]}")
    return problems


def budgets_for(
    project: Project,
    *,
    max_items: int | None = None,
    max_tokens: int | None = None,
    relevant_tokens: int | None = None,
    session_tokens: int | None = None,
) -> Budgets:
    """The budgets of one compile: each from the request when given, else from the project's
    `context_budgets`, else from the settings. A project's value that is not valid is left out (and
    logged): the compile goes on with the setting."""
    own = project.context_budgets if isinstance(project.context_budgets, dict) else {}
    problems = budget_problems(project.context_budgets)
    if problems:
        logger.warning(
            "project %s: context_budgets ignored where invalid: %s", project.slug, "; ".join(problems)
        )
    valid = {key: own[key] for key in BUDGET_LIMITS if key in own and not budget_problems({key: own[key]})}

    def pick(requested: int | None, key: str, default: int) -> int:
        return requested if requested is not None else valid.get(key, default)

    return Budgets(
        max_items=pick(max_items, "max_items", settings.CANON_CONTEXT_MAX_ITEMS),
        memory=pick(max_tokens, "memory", settings.CANON_CONTEXT_MAX_TOKENS),
        relevant=pick(relevant_tokens, "relevant", settings.CANON_CONTEXT_RELEVANT_TOKENS),
        session=pick(session_tokens, "session", settings.CANON_CONTEXT_SESSION_TOKENS),
    )


# ---------------------------------------------------------------------------------------------
# The compiler


@dataclass
class Layer:
    """What one layer holds: its tokens, the ids of its rows in block order, and its budget (None: the
    layer is never cut). The relevant layer's `ids` are its memories; it also lists its episodes and its
    decisions, and `order` gives all its rows in block order as (kind, id) pairs, kind one of
    `RELEVANT_KINDS` (not part of the answer: each list is in block order already). The session layer
    says how many of the summary's lines it left out."""

    tokens: int = 0
    ids: list[int] = field(default_factory=list)
    budget: int | None = None
    episodes: list[int] | None = None
    decisions: list[int] | None = None
    cut: int | None = None
    order: list[tuple[str, int]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"tokens": self.tokens, "ids": list(self.ids), "budget": self.budget}
        if self.episodes is not None:
            body["episodes"] = list(self.episodes)
        if self.decisions is not None:
            body["decisions"] = list(self.decisions)
        if self.cut is not None:
            body["cut"] = self.cut
        return body


@dataclass
class CompiledContext:
    text: str | None
    tokens: int = 0
    sha256: str | None = None
    boundaries: Layer = field(default_factory=Layer)
    memory: Layer = field(default_factory=Layer)
    relevant: Layer = field(default_factory=lambda: Layer(episodes=[], decisions=[]))
    session: Layer = field(default_factory=lambda: Layer(cut=0))
    skipped: list[int] = field(default_factory=list)
    error: str | None = None
    compilation_id: int | None = None

    def layers(self) -> dict[str, dict[str, Any]]:
        return {
            "boundaries": self.boundaries.as_dict(),
            "memory": self.memory.as_dict(),
            "relevant": self.relevant.as_dict(),
            "session": self.session.as_dict(),
        }

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "text": self.text,
            "tokens": self.tokens,
            "sha256": self.sha256,
            "layers": self.layers(),
            "skipped": list(self.skipped),
        }
        if self.error is not None:
            body["error"] = self.error
        return body


def compile(
    project: Project,
    agent: str,
    child: bool = False,
    max_items: int | None = None,
    max_tokens: int | None = None,
    run_id: str | None = None,
    *,
    task: str | None = None,
    relevant_tokens: int | None = None,
    session_tokens: int | None = None,
    now: datetime | None = None,
) -> CompiledContext:
    """The context block for `agent` (any case), or `text=None` when every layer is empty.

    `child=True` (a child worker) gets the boundaries layer only. A `task` (not blank) adds the
    relevant-knowledge layer; without one the block is exactly what it was before that layer existed.
    Budgets left None come from the project, then the settings (`budgets_for`). `now` is the time
    recency is measured at (default: the current time). Never raises: errors come back as
    `text=None` with `error` set, and are logged.
    """
    try:
        budgets = budgets_for(
            project,
            max_items=max_items,
            max_tokens=max_tokens,
            relevant_tokens=relevant_tokens,
            session_tokens=session_tokens,
        )
        task = (task or "").strip()
        result = _compile(
            project, agent_key(agent), child=child, budgets=budgets, task=task, now=now or timezone.now()
        )
        if run_id:
            result.compilation_id = compilation_record(
                project=project,
                agent_name=agent,
                run_id=run_id,
                child=child,
                text=result.text or "",
                sha256=result.sha256 or "",
                tokens=result.tokens,
                layers=result.layers(),
                decision_ids=result.boundaries.ids + (result.relevant.decisions or []),
                memory_ids=result.memory.ids + result.relevant.ids,
                episode_ids=result.relevant.episodes or [],
                skipped_ids=result.skipped,
                max_items=budgets.max_items,
                max_tokens=budgets.memory,
                task=task,
                budgets=budgets.as_dict(),
            ).pk
        return result
    except Exception as exc:
        logger.exception("context compile failed for %s/%s (run %s)", project.slug, agent, run_id)
        message = (
            str(exc)
            if isinstance(exc, InvalidValue)
            else f"context could not be compiled ({type(exc).__name__})"
        )
        return CompiledContext(text=None, error=message)


# The compiler's reads, written once by hand: this is the hot path of every agent turn, and the
# ORM's per-call query building cost more than the queries themselves (bench/compile.py). Each is
# served by an index named in `ledger.models`; placeholders are Django's portable `%s`.

BOUNDARIES_SQL = """
SELECT d.id, d.title, d.type, a.name, d.content, d.rationale, d.tokens
FROM ledger_decision d JOIN ledger_agent a ON a.id = d.agent_id
WHERE d.project_id = %s AND d.status = 'active' AND d.type IN ('architectural', 'scope') AND NOT d.held
ORDER BY d.created_at, d.id
"""

# Memory candidates in compile order: the agent's own (core_context at any importance, high
# learning/pattern) merged with other agents' high cross-team learnings/patterns. Each branch reads
# at most %(limit)s rows along its index (ledger_memory_agent_compile, ledger_memory_crossteam).
MEMORY_SQL = """
SELECT id, type, content, tokens, agent_key, agent_name FROM (
  SELECT * FROM (
    SELECT m.id, m.importance_rank, m.created_at, m.type, m.content, m.tokens,
           a.key AS agent_key, a.name AS agent_name
    FROM ledger_agentmemory m JOIN ledger_agent a ON a.id = m.agent_id
    WHERE m.agent_id = (SELECT id FROM ledger_agent WHERE project_id = %%s AND key = %%s)
      AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > %%s)
      AND (m.type = 'core_context' OR (m.type IN ('learning', 'pattern') AND m.importance_rank = 0))
    ORDER BY m.importance_rank, m.created_at DESC, m.id DESC
    LIMIT %(limit)s
  ) own
  UNION ALL
  SELECT * FROM (
    SELECT m.id, m.importance_rank, m.created_at, m.type, m.content, m.tokens,
           a.key AS agent_key, a.name AS agent_name
    FROM ledger_agentmemory m JOIN ledger_agent a ON a.id = m.agent_id
    WHERE m.project_id = %%s AND m.status = 'active' AND m.cross_team AND m.importance_rank = 0
      AND (m.expires_at IS NULL OR m.expires_at > %%s)
      AND m.type IN ('learning', 'pattern') AND a.key <> %%s
    ORDER BY m.importance_rank, m.created_at DESC, m.id DESC
    LIMIT %(limit)s
  ) shared
) candidates
ORDER BY importance_rank, created_at DESC, id DESC
"""

SESSION_SQL = """
SELECT id, focus_area, active_issues, summary, tokens, focus_by, issues_by, summary_by FROM ledger_session
WHERE project_id = %s AND ended_at IS NULL
"""

# PostgreSQL: the task read by the index's own parser and the `english` dictionaries (`to_tsvector`, which
# built the index), so that a token the parser keeps whole (`deploy-web-pages.sh`, `v0.13.1`) is found as
# it was indexed; its parameter is the text `ledger.relevance.pg_any` gives. `query` matches a row
# holding any of the task's lexemes: a tsvector's text quotes each lexeme as a tsquery's text does, and
# a lexeme holds no space, so the space between two quoted lexemes is where `|` goes. It asks for no
# weights: a weighted query makes PostgreSQL read every matching row's vector again to check the
# weights, and the compiler asks for the agent's scope words as a condition of its own. `lexemes` are
# the task's lexemes, for `_PG_COVERAGE`. It ends the `q` CTE: its last two columns, and the FROM that
# reads the task.
_PG_QUERY = (
    "replace(strip(task.v)::text, ''' ''', ''' | ''')::tsquery AS query,"
    " tsvector_to_array(task.v) AS lexemes"
    " FROM (SELECT to_tsvector('english', replace(%s, '<', '< ')) AS v) task)"
)
# PostgreSQL: the share of the task's lexemes a candidate (`c.v`, its vector) holds. ts_rank_cd counts
# where a row holds the task's words, not how rare each word is (BM25 on SQLite weighs that), so a row
# that says one common word of the task often would outrank one that holds most of the task; its text
# score is therefore ts_rank_cd times this share, worked out for the best candidates only.
_PG_COVERAGE = (
    "(length(c.v) - length(ts_delete(c.v, q.lexemes)))::float / greatest(cardinality(q.lexemes), 1)"
)

# The relevant layer's candidates, best text score first (higher is better on both engines), at most
# RELEVANT_CANDIDATES of each kind. Memories: the project's live ones the agent may read (its own, the
# cross-team ones, every closed session's summary); episodes: the agent's own. The index holds, beside
# each row's words, scope words saying who may read it (migration 0010), and the match asks for the
# agent's scope words AND any of the task's words: only the agent's own rows are scored. The text score
# is BM25 on SQLite (the FTS5 tables) and ts_rank_cd times `_PG_COVERAGE` on PostgreSQL (the GIN index
# of `search_vector`), each over the task's words alone. The visibility rule is checked again on the
# rows themselves. Parameters, on both engines: the project and the agent's key (who `me` is), the
# project twice (memories: the team's and the summaries' scope), the task's query (SQLite: `fts5_any`;
# PostgreSQL: the text its parser reads, `pg_any`), the project, `now` (memories' expiry), the limit.
_READABLE = visibility.MEMORY_READABLE_SQL.format(me="(SELECT id FROM me)")
_ME = (
    "WITH me AS (SELECT coalesce((SELECT id FROM ledger_agent WHERE project_id = %s AND key = %s), 0) AS id)"
)
RELEVANT_MEMORY_SQL = {
    "sqlite": _ME
    + """
SELECT m.id, m.type, m.content, m.tokens, m.source, m.pinned, m.importance_rank, m.created_at,
       a.key, a.name, m.injected_by, s.score
FROM (SELECT rowid AS id, -bm25(ledger_memory_fts, 1.0, 0.5, 0.0) AS score
      FROM ledger_memory_fts
      WHERE ledger_memory_fts MATCH 'scope : (canonagent' || (SELECT id FROM me) || ' OR canonteam' || %s
            || ' OR canonsummary' || %s || ') AND {content tag_index} : (' || %s || ')') s
JOIN ledger_agentmemory m ON m.id = s.id
JOIN ledger_agent a ON a.id = m.agent_id
WHERE m.project_id = %s
  AND """
    + _READABLE
    + """
  AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > %s)
ORDER BY s.score DESC, m.id DESC
LIMIT %s
""",
    "postgresql": _ME
    + """,
q AS (SELECT to_tsquery('simple', 'canonagent' || (SELECT id FROM me) || ' | canonteam' || %s::text
                        || ' | canonsummary' || %s::text) AS scope,
             """
    + _PG_QUERY
    + """
SELECT c.id, c.type, c.content, c.tokens, c.source, c.pinned, c.importance_rank, c.created_at,
       c.key, c.name, c.injected_by, c.score * """
    + _PG_COVERAGE
    + """ AS score
FROM (SELECT m.id, m.type, m.content, m.tokens, m.source, m.pinned, m.importance_rank, m.created_at,
             a.key, a.name, m.injected_by, m.search_vector AS v, ts_rank_cd(m.search_vector, q.query) AS score
      FROM ledger_agentmemory m
      JOIN ledger_agent a ON a.id = m.agent_id
      CROSS JOIN q
      WHERE m.search_vector @@ (q.scope && q.query)
        AND m.project_id = %s
        AND """
    + _READABLE
    + """
        AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > %s)
      ORDER BY score DESC, m.id DESC
      LIMIT %s) c
CROSS JOIN q
ORDER BY c.score DESC, c.id DESC
""",
}
# Parameters: the project and the agent's key, the task's query, the project, the limit.
RELEVANT_EPISODE_SQL = {
    "sqlite": _ME
    + """
SELECT e.id, e.outcome, e.tried, e.difficulties, e.feedback, e.tokens, e.created_at, s.score
FROM (SELECT rowid AS id, -bm25(ledger_episode_fts, 1.0, 1.0, 1.0, 0.5, 0.0) AS score
      FROM ledger_episode_fts
      WHERE ledger_episode_fts MATCH 'scope : canonagent' || (SELECT id FROM me)
            || ' AND {tried difficulties feedback files} : (' || %s || ')') s
JOIN ledger_episode e ON e.id = s.id
WHERE e.project_id = %s AND e.agent_id = (SELECT id FROM me)
ORDER BY s.score DESC, e.id DESC
LIMIT %s
""",
    "postgresql": _ME
    + """,
q AS (SELECT to_tsquery('simple', 'canonagent' || (SELECT id FROM me)) AS scope,
             """
    + _PG_QUERY
    + """
SELECT c.id, c.outcome, c.tried, c.difficulties, c.feedback, c.tokens, c.created_at, c.score * """
    + _PG_COVERAGE
    + """ AS score
FROM (SELECT e.id, e.outcome, e.tried, e.difficulties, e.feedback, e.tokens, e.created_at,
             e.search_vector AS v, ts_rank_cd(e.search_vector, q.query) AS score
      FROM ledger_episode e
      CROSS JOIN q
      WHERE e.search_vector @@ (q.scope && q.query)
        AND e.project_id = %s AND e.agent_id = (SELECT id FROM me)
      ORDER BY score DESC, e.id DESC
      LIMIT %s) c
CROSS JOIN q
ORDER BY c.score DESC, c.id DESC
""",
}

# The relevant layer's decision candidates, best text score first, at most RELEVANT_CANDIDATES: the
# project's active decisions that are not boundaries (those are in every block already) and not held
# for review (a block added to an adopted log, which no person has read: `Decision.held`). Decisions are
# read by every agent of the project, so no scope words are asked for; on SQLite the match scores only
# the project's active non-boundary decisions (read along `ledger_decision_boundaries`), whatever else
# the decision index holds. The text score is BM25 with the search's weights on SQLite (a word in a
# title counts more) and ts_rank_cd times `_PG_COVERAGE` on PostgreSQL (the title is weight A).
# Parameters, on both engines: the task's query, the project, the limit.
_DECISION_WEIGHTS = ", ".join(str(weight) for weight in INDEXES[Decision].weights)
_NOT_BOUNDARY = "d.status = 'active' AND d.type NOT IN ('architectural', 'scope') AND NOT d.held"
RELEVANT_DECISION_SQL = {
    "sqlite": f"""
SELECT d.id, d.type, d.title, d.content, d.rationale, d.tokens, d.source, d.created_at, a.name, s.score
FROM (SELECT rowid AS id, -bm25(ledger_decision_fts, {_DECISION_WEIGHTS}) AS score
      FROM ledger_decision_fts
      WHERE ledger_decision_fts MATCH %s
        AND +rowid IN (SELECT d.id FROM ledger_decision d WHERE d.project_id = %s AND {_NOT_BOUNDARY})) s
JOIN ledger_decision d ON d.id = s.id
JOIN ledger_agent a ON a.id = d.agent_id
ORDER BY s.score DESC, d.id DESC
LIMIT %s
""",
    "postgresql": f"""
WITH q AS (SELECT {_PG_QUERY}
SELECT c.id, c.type, c.title, c.content, c.rationale, c.tokens, c.source, c.created_at, c.name,
       c.score * {_PG_COVERAGE} AS score
FROM (SELECT d.id, d.type, d.title, d.content, d.rationale, d.tokens, d.source, d.created_at, a.name,
             d.search_vector AS v, ts_rank_cd(d.search_vector, q.query) AS score
      FROM ledger_decision d
      JOIN ledger_agent a ON a.id = d.agent_id
      CROSS JOIN q
      WHERE d.search_vector @@ q.query AND d.project_id = %s AND {_NOT_BOUNDARY}
      ORDER BY score DESC, d.id DESC
      LIMIT %s) c
CROSS JOIN q
ORDER BY c.score DESC, c.id DESC
""",
}


@contextmanager
def _statements_prepared() -> Iterator[None]:
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


def _compile(
    project: Project, key: str, *, child: bool, budgets: Budgets, task: str, now: datetime
) -> CompiledContext:
    result = CompiledContext(text=None)
    result.memory.budget = budgets.memory
    result.relevant.budget = budgets.relevant
    result.session.budget = budgets.session
    sections: list[str] = []
    with connection.cursor() as cursor, _statements_prepared():
        cursor.execute(BOUNDARIES_SQL, [project.pk])
        blocks = []
        for pk, title, type_, agent_name, content, rationale, tokens in cursor.fetchall():
            blocks.append(decision_text(title, type_, agent_name, content, rationale))
            result.boundaries.ids.append(pk)
            result.boundaries.tokens += tokens
        if blocks:
            sections.append(BOUNDARIES_HEADING + "\n\n" + "\n\n".join(blocks))

        if not child:
            lines = _select_memories(
                cursor, project, key, result, max_items=budgets.max_items, max_tokens=budgets.memory, now=now
            )
            if lines:
                sections.append(MEMORY_HEADING + "\n" + "\n".join(lines))
            words = task_words(task) if task else []
            if words and budgets.relevant > 0:
                lines = _select_relevant(
                    cursor, project, key, result, task=task, words=words, budget=budgets.relevant, now=now
                )
                if lines:
                    sections.append(RELEVANT_HEADING + "\n" + "\n".join(lines))
            cursor.execute(SESSION_SQL, [project.pk])
            row = cursor.fetchone()
            if row is not None and budgets.session > 0:
                body = _session(row, result, budget=budgets.session)
                if body:
                    sections.append(SESSION_HEADING + "\n" + body)

    if sections:
        result.text = "\n\n".join(sections) + "\n"
        result.sha256 = hashlib.sha256(result.text.encode("utf-8")).hexdigest()
        result.tokens = (
            result.boundaries.tokens + result.memory.tokens + result.relevant.tokens + result.session.tokens
        )
    return result


def _select_memories(
    cursor: Any,
    project: Project,
    key: str,
    result: CompiledContext,
    *,
    max_items: int,
    max_tokens: int,
    now: datetime,
) -> list[str]:
    """Take candidates in order while fewer than `max_items` are taken; skip what does not fit.

    Each branch reads a page of `limit` rows. Only when a page ran out before `max_items` were taken,
    because candidates were skipped for the budget, is the read repeated with a page twice as long.
    """
    if max_items <= 0:
        return []
    limit = max(2 * max_items, 50)
    while True:
        cursor.execute(MEMORY_SQL % {"limit": limit}, [project.pk, key, now, project.pk, now, key])
        rows = cursor.fetchall()
        lines: list[str] = []
        taken: list[int] = []
        skipped: list[int] = []
        spent = 0
        # Only the first `limit` merged rows are certainly in order: a branch may have been cut there.
        for pk, type_, content, tokens, row_key, name in rows[:limit]:
            if len(lines) >= max_items:
                break
            if spent + tokens > max_tokens:
                skipped.append(pk)
                continue
            spent += tokens
            taken.append(pk)
            lines.append(memory_line(type_=type_, content=content, own=row_key == key, agent_name=name))
        # A short page means every candidate was seen; a full one is enough when max_items were taken.
        if len(lines) >= max_items or len(rows) < limit:
            break
        limit *= 4
    result.memory.ids, result.memory.tokens, result.skipped = taken, spent, skipped
    return lines


# The kinds of row the relevant layer holds, in the order equal scores take them.
DECISION, MEMORY = "decision", "memory"
RELEVANT_KINDS = (DECISION, MEMORY, EPISODE)


@dataclass(frozen=True)
class _Candidate:
    """One row the relevant layer may take: its blended score, its kind (one of `RELEVANT_KINDS`) and
    id, how to render its line (only the rows taken are rendered) and its tokens."""

    score: float
    kind: str
    pk: int
    line: Callable[[], str]
    tokens: int


def _aware(value: Any) -> datetime:
    """A timestamp as the cursor gives it (SQLite: text, or a naive UTC datetime), made aware."""
    moment = parse_datetime(value) if isinstance(value, str) else value
    if moment is None:
        raise ValueError(f"not a timestamp: {value!r}")
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def _select_relevant(
    cursor: Any,
    project: Project,
    key: str,
    result: CompiledContext,
    *,
    task: str,
    words: list[str],
    budget: int,
    now: datetime,
) -> list[str]:
    """The relevant layer's lines, best blended score first, taken while their tokens fit `budget` (one
    that does not fit is passed over). Three queries: the memory, episode and decision candidates, each
    matched by any of the task's `words` but those most memories hold (`ledger.word_stats`); on
    PostgreSQL also by the pieces of the task its parser may have indexed whole (`task_pieces`)."""
    vendor = "postgresql" if connection.vendor == "postgresql" else "sqlite"
    kept = word_stats.kept_words(cursor, vendor, words)
    query = pg_any(kept, task_pieces(task)) if vendor == "postgresql" else fts5_any(kept)
    in_memory_layer = set(result.memory.ids)
    limit = RELEVANT_CANDIDATES + len(in_memory_layer)
    expiry = connection.ops.adapt_datetimefield_value(now)
    me = [project.pk, key]
    cursor.execute(
        RELEVANT_MEMORY_SQL[vendor], [*me, project.pk, project.pk, query, project.pk, expiry, limit]
    )
    memories = [row for row in cursor.fetchall() if row[0] not in in_memory_layer][:RELEVANT_CANDIDATES]
    cursor.execute(RELEVANT_EPISODE_SQL[vendor], [*me, query, project.pk, RELEVANT_CANDIDATES])
    episodes = cursor.fetchall()
    cursor.execute(RELEVANT_DECISION_SQL[vendor], [query, project.pk, RELEVANT_CANDIDATES])
    decisions = cursor.fetchall()

    best = max([float(row[-1]) for row in (*memories, *episodes, *decisions)], default=0.0)
    candidates: list[_Candidate] = []
    for pk, type_, content, tokens, source, pinned, rank, created_at, row_key, name, by, text in memories:
        age = (now - _aware(created_at)).total_seconds()
        score = blend(
            float(text), best, importance_rank=rank, source=source, age_seconds=age, pinned=bool(pinned)
        )
        line = functools.partial(
            relevant_memory_line,
            type_=type_,
            content=content,
            own=row_key == key,
            agent_name=name,
            source=source,
            written_by=by,
        )
        candidates.append(_Candidate(score, MEMORY, pk, line, tokens))
    for pk, outcome, tried, difficulties, feedback, tokens, created_at, text in episodes:
        age = (now - _aware(created_at)).total_seconds()
        # An episode has no importance (it counts as high) and ages as an agent's own memory does.
        score = blend(
            float(text), best, importance_rank=0, source=EPISODE, age_seconds=age, decays_as=Source.AGENT
        )
        line = functools.partial(
            episode_line, outcome=outcome, tried=tried, difficulties=difficulties, feedback=feedback
        )
        candidates.append(_Candidate(score, EPISODE, pk, line, tokens))
    for pk, type_, title, content, rationale, tokens, source, created_at, name, text in decisions:
        decided = _aware(created_at)
        # A decision has no importance (it counts as high); it is weighed and ages as its source does.
        score = blend(
            float(text), best, importance_rank=0, source=source, age_seconds=(now - decided).total_seconds()
        )
        line = functools.partial(
            relevant_decision_line,
            type_=type_,
            agent_name=name,
            decided=decided.date(),
            title=title,
            content=content,
            rationale=rationale,
        )
        candidates.append(_Candidate(score, DECISION, pk, line, tokens))
    # Best first; equal scores: decisions, then memories, then episodes, each the newer row (higher id) first.
    candidates.sort(key=lambda c: (-c.score, RELEVANT_KINDS.index(c.kind), -c.pk))

    lines: list[str] = []
    layer = result.relevant
    taken: dict[str, list[int]] = {kind: [] for kind in RELEVANT_KINDS}
    for candidate in candidates:
        if layer.tokens + candidate.tokens > budget:
            continue
        layer.tokens += candidate.tokens
        lines.append(candidate.line())
        taken[candidate.kind].append(candidate.pk)
        layer.order.append((candidate.kind, candidate.pk))
    layer.ids, layer.episodes, layer.decisions = taken[MEMORY], taken[EPISODE], taken[DECISION]
    return lines


def _session(row: tuple[Any, ...], result: CompiledContext, *, budget: int) -> str:
    """The open session's block within `budget` tokens, cut like every other layer: whole when its
    stored count fits; else the summary's oldest lines are left out, as few as needed, then the last
    active issues; a block whose focus alone does not fit is left out. Each cut is noted in the block
    and in `result.session.cut` (summary lines left out)."""
    pk, focus_area, active_issues, summary, tokens, focus_by, issues_by, summary_by = row
    if isinstance(active_issues, str):
        active_issues = json.loads(active_issues)
    if isinstance(summary_by, str):
        summary_by = json.loads(summary_by)
    session = Session(
        focus_area=focus_area,
        active_issues=active_issues,
        summary=summary,
        focus_by=focus_by,
        issues_by=issues_by,
        summary_by=summary_by,
    )
    body = session_block(session)
    if not body:
        return ""
    if tokens <= budget:
        result.session.ids.append(pk)
        result.session.tokens = tokens
        return body
    lines = sum(1 for line in clean(summary).split("\n") if line.strip())
    fitted = _fewest_left_out(lines, lambda n: session_block_cut(session, n), budget)
    result.session.cut = fitted[0] if fitted is not None else lines
    if fitted is None:
        issues = sum(1 for issue in active_issues if one_line(issue))
        fitted = _fewest_left_out(
            issues, lambda n: session_block_cut(session, lines, issues_left_out=n), budget
        )
    if fitted is None:
        return ""  # the focus alone is over the budget: the layer is left out
    _, best_body, result.session.tokens = fitted
    result.session.ids.append(pk)
    return best_body


def _fewest_left_out(most: int, render: Callable[[int], str], budget: int) -> tuple[int, str, int] | None:
    """The fewest of `most` parts to leave out so that `render(n)` fits `budget` tokens, found by
    halving (leaving out more never costs more), with that block and its tokens; None when even
    leaving out all `most` does not fit."""
    if most <= 0:
        return None
    best_body = render(most)
    best_tokens = count_tokens(best_body)
    if best_tokens > budget:
        return None
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        candidate = render(middle)
        counted = count_tokens(candidate)
        if counted <= budget:
            high, best_body, best_tokens = middle, candidate, counted
        else:
            low = middle + 1
    return high, best_body, best_tokens
