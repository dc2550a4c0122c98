"""The context compiler (docs/compiler.md): what an agent is told before each turn.

Three layers, in this order:

1. **Boundaries**: active `architectural` and `scope` decisions, oldest first, always whole.
2. **Memory**: the agent's own `core_context` memories (any importance) and `high` importance
   `learning` / `pattern` memories that are its own or tagged `cross-team`; active only; ordered by
   importance, then newest first (id breaks ties). Taken in that order while fewer than `max_items`
   are taken and their tokens fit `max_tokens`; one that does not fit is skipped and the next is tried.
3. **Current session**: the open session's focus, active issues and summary.

Token budget. Every row stores its token count when it is written (`ledger.tokens`): a memory the
tokens of its content, a decision those of its block, a session those of its block. The memory
budget (`max_tokens`) is spent on memory contents; boundaries are never cut. The reported `tokens`
are the sums of those stored counts (headings and labels are not counted); nothing stored is
tokenised again here.

Cost. A compile makes a fixed number of queries whatever the size of the ledger: one for the
boundaries, one each for the agent's own and the cross-team memory candidates (read in order, a page
at a time, stopping as soon as `max_items` are taken; a second page is read only when a whole page of
candidates had to be skipped for the budget), one for the open session, and, with a `run_id`, the
audit record (an insert and one for each non-empty list of included rows). Each query is served by
an index named in `ledger.models`.

Untrusted text. Every value an agent wrote or a file brought in is shaped by `ledger.untrusted`:
titles, agent names and active issues are one line; contents, rationales, the focus and the summary
are blocks whose further lines are indented under their item, and no line of them can start a
heading, a quote or a `**Label:**` line. Invisible and direction-changing characters are left out of
the text; the ledger keeps what was sent. A decision or session whose stored tokens were counted
before this rendering keeps that count until it is next written.

Fail-open: any error is logged and the caller gets `text=None` with `error` set; a run never fails
because its context could not be compiled.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection

from ledger.blocks import decision_text, memory_line, session_block
from ledger.models import (
    Project,
    Session,
)
from ledger.services import compilation_record
from ledger.values import InvalidValue, agent_key

logger = logging.getLogger("canon.context")

BOUNDARIES_HEADING = (
    "## Boundaries and Decisions\n"
    "> These are non-negotiable team boundaries. They take precedence over all other context."
)
MEMORY_HEADING = "## Memory"
SESSION_HEADING = "## Current Session"
MAX_ITEMS_LIMIT = 200
MAX_TOKENS_LIMIT = 100_000


# ---------------------------------------------------------------------------------------------
# The compiler


@dataclass
class Layer:
    tokens: int = 0
    ids: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "ids": list(self.ids)}


@dataclass
class CompiledContext:
    text: str | None
    tokens: int = 0
    sha256: str | None = None
    boundaries: Layer = field(default_factory=Layer)
    memory: Layer = field(default_factory=Layer)
    session: Layer = field(default_factory=Layer)
    skipped: list[int] = field(default_factory=list)
    error: str | None = None
    compilation_id: int | None = None

    def layers(self) -> dict[str, dict[str, Any]]:
        return {
            "boundaries": self.boundaries.as_dict(),
            "memory": self.memory.as_dict(),
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
) -> CompiledContext:
    """The context block for `agent` (any case), or `text=None` when every layer is empty.

    `child=True` (a child worker) gets the boundaries layer only. Never raises: errors come back
    as `text=None` with `error` set, and are logged.
    """
    try:
        items = settings.CANON_CONTEXT_MAX_ITEMS if max_items is None else max_items
        budget = settings.CANON_CONTEXT_MAX_TOKENS if max_tokens is None else max_tokens
        result = _compile(project, agent_key(agent), child=child, max_items=items, max_tokens=budget)
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
                memory_ids=result.memory.ids,
                skipped_ids=result.skipped,
                max_items=items,
                max_tokens=budget,
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
      AND m.status = 'active'
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
      AND m.type IN ('learning', 'pattern') AND a.key <> %%s
    ORDER BY m.importance_rank, m.created_at DESC, m.id DESC
    LIMIT %(limit)s
  ) shared
) candidates
ORDER BY importance_rank, created_at DESC, id DESC
"""

SESSION_SQL = """
SELECT id, focus_area, active_issues, summary, tokens FROM ledger_session
WHERE project_id = %s AND ended_at IS NULL
"""


def _compile(project: Project, key: str, *, child: bool, max_items: int, max_tokens: int) -> CompiledContext:
    result = CompiledContext(text=None)
    sections: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute(BOUNDARIES_SQL, [project.pk])
        blocks = []
        for pk, title, type_, agent_name, content, rationale, tokens in cursor.fetchall():
            blocks.append(decision_text(title, type_, agent_name, content, rationale))
            result.boundaries.ids.append(pk)
            result.boundaries.tokens += tokens
        if blocks:
            sections.append(BOUNDARIES_HEADING + "\n\n" + "\n\n".join(blocks))

        if not child:
            lines = _select_memories(cursor, project, key, result, max_items=max_items, max_tokens=max_tokens)
            if lines:
                sections.append(MEMORY_HEADING + "\n" + "\n".join(lines))
            cursor.execute(SESSION_SQL, [project.pk])
            row = cursor.fetchone()
            if row is not None:
                pk, focus_area, active_issues, summary, tokens = row
                if isinstance(active_issues, str):
                    active_issues = json.loads(active_issues)
                body = session_block(
                    Session(focus_area=focus_area, active_issues=active_issues, summary=summary)
                )
                if body:
                    sections.append(SESSION_HEADING + "\n" + body)
                    result.session.ids.append(pk)
                    result.session.tokens = tokens

    if sections:
        result.text = "\n\n".join(sections) + "\n"
        result.sha256 = hashlib.sha256(result.text.encode("utf-8")).hexdigest()
        result.tokens = result.boundaries.tokens + result.memory.tokens + result.session.tokens
    return result


def _select_memories(
    cursor: Any, project: Project, key: str, result: CompiledContext, *, max_items: int, max_tokens: int
) -> list[str]:
    """Take candidates in order while fewer than `max_items` are taken; skip what does not fit.

    Each branch reads a page of `limit` rows. Only when a page ran out before `max_items` were taken,
    because candidates were skipped for the budget, is the read repeated with a page twice as long.
    """
    if max_items <= 0:
        return []
    limit = max(2 * max_items, 50)
    while True:
        cursor.execute(MEMORY_SQL % {"limit": limit}, [project.pk, key, project.pk, key])
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
