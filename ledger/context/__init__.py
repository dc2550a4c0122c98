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

Where each part lives: the rows each layer may take, and the statements that read them, built from
the rules `ledger.selectors`, `ledger.visibility` and `ledger.lifecycle` define, in
`ledger.context.layers` (`ledger.context.sql` makes SQL of the ORM's querysets); the budgets in
`ledger.context.budgets`; the relevant layer's scoring in `ledger.context.relevant`; the session's cut
in `ledger.context.session`; the answer in `ledger.context.answer`. Here: the compile itself, the
memory layer, and the block's headings.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime
from typing import Any

from django.db import connection
from django.utils import timezone

from ledger.blocks import decision_text, memory_line
from ledger.context import layers
from ledger.context.answer import CompiledContext, Layer
from ledger.context.budgets import (
    BUDGET_LIMITS,
    MAX_ITEMS_LIMIT,
    MAX_TOKENS_LIMIT,
    TASK_MAX_LENGTH,
    Budgets,
    budget_problems,
    budgets_for,
)
from ledger.context.relevant import (
    DECISION,
    EPISODE,
    MEMORY,
    RELEVANT_CANDIDATES,
    RELEVANT_KINDS,
    select_relevant,
)
from ledger.context.session import session_body
from ledger.models import Project
from ledger.relevance import task_words
from ledger.services import compilation_record
from ledger.values import InvalidValue, agent_key

__all__ = [
    "BOUNDARIES_HEADING",
    "BUDGET_LIMITS",
    "DECISION",
    "EPISODE",
    "MAX_ITEMS_LIMIT",
    "MAX_TOKENS_LIMIT",
    "MEMORY",
    "MEMORY_HEADING",
    "RELEVANT_CANDIDATES",
    "RELEVANT_HEADING",
    "RELEVANT_KINDS",
    "SESSION_HEADING",
    "TASK_MAX_LENGTH",
    "Budgets",
    "CompiledContext",
    "Layer",
    "budget_problems",
    "budgets_for",
    "compile",
]

logger = logging.getLogger("canon.context")

BOUNDARIES_HEADING = (
    "## Boundaries and Decisions\n"
    "> These are non-negotiable team boundaries. They take precedence over all other context."
)
MEMORY_HEADING = "## Memory"
RELEVANT_HEADING = "## Relevant Past Knowledge"
SESSION_HEADING = "## Current Session"


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


def _compile(
    project: Project, key: str, *, child: bool, budgets: Budgets, task: str, now: datetime
) -> CompiledContext:
    result = CompiledContext(text=None)
    result.memory.budget = budgets.memory
    result.relevant.budget = budgets.relevant
    result.session.budget = budgets.session
    sections: list[str] = []
    with connection.cursor() as cursor, layers.prepared():
        blocks = []
        for pk, title, type_, agent_name, content, rationale, tokens in layers.boundary_rows(
            cursor, project.pk
        ):
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
                lines = select_relevant(
                    cursor,
                    project.pk,
                    key,
                    result.relevant,
                    in_memory_layer=result.memory.ids,
                    task=task,
                    words=words,
                    budget=budgets.relevant,
                    now=now,
                )
                if lines:
                    sections.append(RELEVANT_HEADING + "\n" + "\n".join(lines))
            row = layers.session_row(cursor, project.pk)
            if row is not None and budgets.session > 0:
                body = session_body(row, result.session, budget=budgets.session)
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

    Each part of the candidates is read a page of `limit` rows long. Only when a page ran out before
    `max_items` were taken, because candidates were skipped for the budget, is the read repeated with a
    longer page.
    """
    if max_items <= 0:
        return []
    limit = max(2 * max_items, 50)
    while True:
        rows = layers.memory_rows(cursor, project.pk, key, now, limit)
        lines: list[str] = []
        taken: list[int] = []
        skipped: list[int] = []
        spent = 0
        # Only the first `limit` merged rows are certainly in order: a part may have been cut there.
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


# The relevant layer's statements as SQL by engine, for the database in use: bench/compile.py runs
# them raw through the driver as the floor the compiler is measured against.
_RELEVANT_SQL = {
    "RELEVANT_MEMORY_SQL": "memory",
    "RELEVANT_EPISODE_SQL": "episode",
    "RELEVANT_DECISION_SQL": "decision",
}


def __getattr__(name: str) -> dict[str, str]:
    if name not in _RELEVANT_SQL:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    vendor = "postgresql" if connection.vendor == "postgresql" else "sqlite"
    return {vendor: layers.relevant_statements()[_RELEVANT_SQL[name]].sql}
