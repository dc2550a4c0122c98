"""The context compiler (docs/compiler.md): what an agent is told before each turn.

Four layers, in this order:

1. **Boundaries**: active `architectural` and `scope` decisions, oldest first, always whole.
2. **Memory**: the agent's own `core_context` memories (any importance) and `high` importance
   `learning` / `pattern` memories that are its own or tagged `cross-team`; active and not expired; ordered by
   importance, then newest first (id breaks ties). Taken in that order while fewer than `max_items`
   are taken and their tokens fit `max_tokens`; one that does not fit is skipped and the next is tried.
3. **Relevant past knowledge**, only for a `task`: the memories the agent may read (its own and the
   cross-team ones, and every closed session's summary), live and not already in the memory layer, and
   the agent's own episodes, that best match the task. The full-text index gives each candidate a text
   score; `ledger.relevance.blend` weighs it with importance, recency and source; the best are taken
   while their tokens fit the layer's budget.
4. **Current session**: the open session's focus, active issues and summary, cut to its budget by
   leaving out the summary's oldest lines.

Budgets. Each layer but the boundaries has a token budget (`Budgets`): from the request, else the
project's `context_budgets`, else the settings. A project's value that is not valid is ignored and
logged (`budget_problems` says why; the admin refuses it). Every row stores its token count when it
is written (`ledger.tokens`): a memory the tokens of its content, an episode those of its text, a
decision those of its block, a session those of its block. The reported `tokens` are the sums of
those stored counts (headings and labels are not counted); nothing stored is tokenised again here,
but for a session block that had to be cut, whose cut form is counted.

Cost. A compile makes a fixed number of queries whatever the size of the ledger: one for the boundaries,
one for the memory candidates (the agent's own and the cross-team ones, each read in order a page at a
time, stopping as soon as `max_items` are taken; a second page is read only when a whole page of
candidates had to be skipped for the budget), one for the open session, and, with a task, two for the
relevant layer (memories, episodes: each the best `RELEVANT_CANDIDATES` by text score, found through the
full-text index), and on SQLite one more that counts, up to a cap, the rows holding each task word, when
this process has not counted them in the last `STATS_SECONDS`. With a `run_id`, the audit record adds an
insert and one for each non-empty list of included rows. Each query is served by an index named in
`ledger.models` or by the full-text index (`ledger.search`). The relevant layer's cost follows the rows
its match finds, so the match is kept small: the index holds scope words saying who may read each row,
asked for together with the task's words, and on a large ledger the task words that most rows hold are
left out (`kept_task_words`). Rendered blocks are remembered by `ledger.untrusted.block`, and a
candidate's line is rendered only when it is taken.

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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from snowballstemmer import stemmer

from ledger import visibility
from ledger.blocks import (
    decision_text,
    episode_line,
    memory_line,
    relevant_memory_line,
    session_block,
    session_block_cut,
)
from ledger.models import Project, Session, Source
from ledger.relevance import COMMON_SHARE, blend, fts5_any, rare_words, task_words, tsquery_any
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
    layer is never cut). The relevant layer also lists its episodes; the session layer says how many of
    the summary's lines it left out."""

    tokens: int = 0
    ids: list[int] = field(default_factory=list)
    budget: int | None = None
    episodes: list[int] | None = None
    cut: int | None = None

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"tokens": self.tokens, "ids": list(self.ids), "budget": self.budget}
        if self.episodes is not None:
            body["episodes"] = list(self.episodes)
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
    relevant: Layer = field(default_factory=lambda: Layer(episodes=[]))
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
                decision_ids=result.boundaries.ids,
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
WHERE d.project_id = %s AND d.status = 'active' AND d.type IN ('architectural', 'scope')
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

# The relevant layer's candidates, best text score first (higher is better on both engines), at most
# RELEVANT_CANDIDATES of each kind. Memories: the project's live ones the agent may read (its own, the
# cross-team ones, every closed session's summary); episodes: the agent's own. The index holds, beside
# each row's words, scope words saying who may read it (migration 0010), and the match asks for the
# agent's scope words AND any of the task's words: only the agent's own rows are scored. The text score
# is BM25 on SQLite (the FTS5 tables) and ts_rank_cd on PostgreSQL (the GIN index of `search_vector`),
# each over the task's words alone. The visibility rule is checked again on the rows themselves.
# Parameters, on both engines: the project and the agent's key (who `me` is), the project twice
# (memories: the team's and the summaries' scope), the task's query, the project, `now` (memories'
# expiry), the limit.
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
             to_tsquery('english', %s) AS query)
SELECT m.id, m.type, m.content, m.tokens, m.source, m.pinned, m.importance_rank, m.created_at,
       a.key, a.name, m.injected_by, ts_rank_cd(m.search_vector, q.query) AS score
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
LIMIT %s
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
             to_tsquery('english', %s) AS query)
SELECT e.id, e.outcome, e.tried, e.difficulties, e.feedback, e.tokens, e.created_at,
       ts_rank_cd(e.search_vector, q.query) AS score
FROM ledger_episode e
CROSS JOIN q
WHERE e.search_vector @@ (q.scope && q.query)
  AND e.project_id = %s AND e.agent_id = (SELECT id FROM me)
ORDER BY score DESC, e.id DESC
LIMIT %s
""",
}


# How common each task word is, for `rare_words`: the share of the memory index's rows holding it.
# SQLite: counted in the FTS5 index for each word, each count stopping at COMMON_SHARE of the rows (so
# a common word costs no more than a rare one), and remembered per process for STATS_SECONDS (at most
# COUNTED_WORDS words; more forgets them all). PostgreSQL: the most common lexemes and their shares
# that ANALYZE keeps for `search_vector` (pg_stats), read at most every STATS_SECONDS per process, the
# words stemmed as the `english` configuration stems them; no statistics yet means nothing is left out.
# Either way a word's share is at most STATS_SECONDS old: how common a word is changes slowly.
SHARES_SQLITE_WORD = (
    "(SELECT count(*) FROM (SELECT 1 FROM ledger_memory_fts WHERE ledger_memory_fts MATCH %s"
    " LIMIT (SELECT CAST(coalesce(max(id), 0) * {share} AS INTEGER) + 1 FROM ledger_agentmemory)))"
)
SHARES_POSTGRESQL_SQL = """
SELECT e.elem, e.freq, (SELECT reltuples FROM pg_class WHERE oid = 'ledger_agentmemory'::regclass)
FROM pg_stats p, unnest(p.most_common_elems::text::text[], p.most_common_elem_freqs) AS e(elem, freq)
WHERE p.schemaname = current_schema() AND p.tablename = 'ledger_agentmemory'
  AND p.attname = 'search_vector' AND e.elem IS NOT NULL
"""
STATS_SECONDS = 600.0
COUNTED_WORDS = 10_000


@dataclass
class _LexemeStats:
    """PostgreSQL: every common lexeme's share, read together."""

    rows: int = 0
    shares: dict[str, float] = field(default_factory=dict)
    read_at: float = -STATS_SECONDS


@dataclass
class _WordCounts:
    """SQLite: the share of each word counted so far, with when it was counted, and the index's size
    at the last count."""

    rows: int = 0
    shares: dict[str, tuple[float, float]] = field(default_factory=dict)


_pg_stats = _LexemeStats()
_pg_stats_lock = threading.Lock()
_sqlite_counts = _WordCounts()
_sqlite_counts_lock = threading.Lock()
_english = stemmer("english")
_english_lock = threading.Lock()


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    """`word` as PostgreSQL's `english` configuration stems it (a stemmer object is not thread-safe)."""
    with _english_lock:
        return str(_english.stemWord(word))


def forget_word_stats() -> None:
    """Read how common words are afresh at the next compile, on either engine."""
    global _pg_stats, _sqlite_counts
    with _pg_stats_lock, _sqlite_counts_lock:
        _pg_stats, _sqlite_counts = _LexemeStats(), _WordCounts()


def _sqlite_shares(cursor: Any, words: list[str]) -> tuple[dict[str, float], int]:
    """Each word's share of the memory index's rows, counting only the words not counted lately."""
    with _sqlite_counts_lock:
        now = time.monotonic()
        known = _sqlite_counts.shares
        stale = [word for word in words if now - known.get(word, (0.0, -STATS_SECONDS))[1] >= STATS_SECONDS]
        if len(known) + len(stale) > COUNTED_WORDS:
            known.clear()
            stale = words
        if stale:
            share = f"{COMMON_SHARE:.6f}"
            counts = ", ".join([SHARES_SQLITE_WORD.format(share=share)] * len(stale))
            cursor.execute(
                f"SELECT (SELECT coalesce(max(id), 0) FROM ledger_agentmemory), {counts}",
                [f'{{content tag_index}} : "{word}"' for word in stale],
            )
            rows, *found = cursor.fetchone()
            for word, count in zip(stale, found, strict=True):
                known[word] = (count / rows if rows else 0.0, now)
            _sqlite_counts.rows = rows
        return {word: known[word][0] for word in words}, _sqlite_counts.rows


def kept_task_words(cursor: Any, vendor: str, words: list[str]) -> list[str]:
    """`words` without those too common to rank by (`ledger.relevance.rare_words`)."""
    if vendor == "sqlite":
        return rare_words(words, *_sqlite_shares(cursor, words))
    global _pg_stats
    with _pg_stats_lock:
        if time.monotonic() - _pg_stats.read_at >= STATS_SECONDS:
            cursor.execute(SHARES_POSTGRESQL_SQL)
            found = cursor.fetchall()
            _pg_stats = _LexemeStats(
                rows=int(found[0][2]) if found else 0,
                shares={elem: float(freq) for elem, freq, _ in found},
                read_at=time.monotonic(),
            )
        stats = _pg_stats
    shares = {word: stats.shares.get(_stem(word), 0.0) for word in words}
    return rare_words(words, shares, stats.rows)


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
                    cursor, project, key, result, words=words, budget=budgets.relevant, now=now
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


@dataclass(frozen=True)
class _Candidate:
    """One row the relevant layer may take: its blended score, how to render its line (only the rows
    taken are rendered), its tokens, and its id as a memory or as an episode."""

    score: float
    line: Callable[[], str]
    tokens: int
    memory_id: int | None = None
    episode_id: int | None = None


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
    words: list[str],
    budget: int,
    now: datetime,
) -> list[str]:
    """The relevant layer's lines, best blended score first, taken while their tokens fit `budget` (one
    that does not fit is passed over). Two queries: the memory candidates and the episode candidates."""
    vendor = "postgresql" if connection.vendor == "postgresql" else "sqlite"
    words = kept_task_words(cursor, vendor, words)
    query = tsquery_any(words) if vendor == "postgresql" else fts5_any(words)
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

    best = max([float(row[-1]) for row in memories] + [float(row[-1]) for row in episodes], default=0.0)
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
        candidates.append(_Candidate(score, line, tokens, memory_id=pk))
    for pk, outcome, tried, difficulties, feedback, tokens, created_at, text in episodes:
        age = (now - _aware(created_at)).total_seconds()
        # An episode has no importance (it counts as high) and ages as an agent's own memory does.
        score = blend(
            float(text), best, importance_rank=0, source=EPISODE, age_seconds=age, decays_as=Source.AGENT
        )
        line = functools.partial(
            episode_line, outcome=outcome, tried=tried, difficulties=difficulties, feedback=feedback
        )
        candidates.append(_Candidate(score, line, tokens, episode_id=pk))
    # Best first; equal scores: memories before episodes, then the newer row (the higher id).
    candidates.sort(key=lambda c: (-c.score, c.memory_id is None, -(c.memory_id or c.episode_id or 0)))

    lines: list[str] = []
    layer = result.relevant
    layer.episodes = []
    for candidate in candidates:
        if layer.tokens + candidate.tokens > budget:
            continue
        layer.tokens += candidate.tokens
        lines.append(candidate.line())
        if candidate.memory_id is not None:
            layer.ids.append(candidate.memory_id)
        else:
            layer.episodes.append(candidate.episode_id or 0)
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
