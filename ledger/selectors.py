"""Reusable reads of the ledger. Writes live in `ledger.services`."""

from __future__ import annotations

from datetime import datetime
from typing import TypeAlias

from django.db import connection
from django.db.models import Expression, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from ledger.lifecycle import live
from ledger.models import (
    BOUNDARY_TYPES,
    Agent,
    AgentMemory,
    ApiToken,
    Compilation,
    Decision,
    DecisionStatus,
    Episode,
    MemoryType,
    Project,
    Session,
)
from ledger.values import InvalidValue, agent_key
from ledger.visibility import Viewer, episode_readable, memory_readable

# A project, its id, or an expression giving its id when the query runs.
ProjectRef: TypeAlias = Project | int | Expression


def of_project(project: ProjectRef) -> Q:
    """The rows of `project` (a Q, which takes an expression as well as a project)."""
    return Q(project=project)


def agent_find(project: Project, name: str) -> Agent | None:
    """The project's agent with this name in any case, or None (an unknown or invalid name)."""
    try:
        key = agent_key(name)
    except InvalidValue:
        return None
    return Agent.objects.filter(project=project, key=key).first()


def agent_filter_key(name: str) -> str:
    """The key to filter rows by agent name; an invalid name matches nothing.

    For an invalid name this is the empty key, which no agent has (a check constraint forbids it).
    A NUL character would do too on SQLite, but PostgreSQL refuses it in a query.
    """
    try:
        return agent_key(name)
    except InvalidValue:
        return ""


def token_for_secret(secret: str) -> ApiToken | None:
    """The live token with this secret, its project and agent joined; None for an unknown or revoked one.

    `get()` rather than `first()`: the hash is unique, and a query without ORDER BY costs less to build
    on the path every API request takes.
    """
    try:
        return ApiToken.objects.select_related("project", "agent").get(
            token_hash=ApiToken.hash_secret(secret), revoked_at__isnull=True
        )
    except ApiToken.DoesNotExist:
        return None


# Every decision linked to one by `superseded_by`, in either direction, however long or branching the
# chain: one recursive query that follows the foreign key's index, so it reads the chain's rows only.
# UNION (not UNION ALL) drops an id already reached, so a cycle ends the walk instead of looping.
_CHAIN_SQL = """
WITH RECURSIVE
  earlier(id) AS (
    SELECT id FROM {table} WHERE {parent} = %s
    UNION
    SELECT d.id FROM {table} d JOIN earlier e ON d.{parent} = e.id
  ),
  later(id) AS (
    SELECT {parent} FROM {table} WHERE id = %s AND {parent} IS NOT NULL
    UNION
    SELECT d.{parent} FROM {table} d JOIN later l ON d.id = l.id WHERE d.{parent} IS NOT NULL
  )
SELECT id FROM earlier UNION SELECT id FROM later
"""


def decision_chain(decision: Decision) -> tuple[list[Decision], list[Decision]]:
    """What this decision replaced (oldest first) and what replaced it (in order): the chain both ways.

    One query, however long or branching the chain (`_CHAIN_SQL`); the rows are sorted out here. A row
    reached both ways (a cycle, which the services never make) is listed once, among the replaced.
    """
    quote = connection.ops.quote_name
    sql = _CHAIN_SQL.format(
        table=quote(Decision._meta.db_table), parent=quote(Decision._meta.get_field("superseded_by").column)
    )
    rows = {
        row.pk: row
        for row in Decision.objects.filter(
            project_id=decision.project_id, pk__in=RawSQL(sql, [decision.pk, decision.pk])
        )
        .exclude(pk=decision.pk)
        .select_related("agent")
        .order_by()
    }
    replacing: dict[int, list[Decision]] = {}
    for row in rows.values():
        if row.superseded_by_id is not None:
            replacing.setdefault(row.superseded_by_id, []).append(row)
    replaced: list[Decision] = []
    frontier = [decision.pk]
    seen = {decision.pk}
    while frontier:
        found = [row for pk in frontier for row in replacing.get(pk, []) if row.pk not in seen]
        seen.update(row.pk for row in found)
        replaced.extend(found)
        frontier = [row.pk for row in found]
    replaced.sort(key=lambda d: (d.created_at, d.pk))
    successors: list[Decision] = []
    cursor = decision
    while cursor.superseded_by_id in rows and cursor.superseded_by_id not in seen:
        cursor = rows[cursor.superseded_by_id]
        seen.add(cursor.pk)
        successors.append(cursor)
    return replaced, successors


def open_sessions(project: ProjectRef) -> QuerySet[Session]:
    """The project's open session (one at most: `ledger_session_one_open`)."""
    return Session.objects.filter(of_project(project), ended_at__isnull=True)


def open_session(project: Project) -> Session | None:
    return open_sessions(project).first()


def what_was_told(project: Project, agent: str, run_id: str) -> list[Compilation]:
    """What agent X was told in run R: every compilation recorded for it, oldest first."""
    try:
        key = agent_key(agent)
    except InvalidValue:
        return []
    return list(
        Compilation.objects.filter(project=project, agent__key=key, run_id=run_id)
        .select_related("agent", "session")
        .prefetch_related("decisions", "memories")
        .order_by("created_at", "id")
    )


def runs_told_decision(decision: Decision, limit: int | None = None) -> list[tuple[str, str]]:
    """Which runs were told decision D: distinct (agent name, run id) pairs, oldest compile first.

    Every compile records the boundaries it told, so a long-lived one is in thousands of compilations:
    with `limit`, they are read a batch at a time until that many pairs are found (usually one batch).
    """
    rows = (
        Compilation.objects.filter(decisions=decision)
        .order_by("created_at", "id")
        .values_list("agent__name", "run_id")
    )
    seen: dict[tuple[str, str], None] = {}
    if limit is None:
        for pair in rows:
            seen.setdefault(pair, None)
        return list(seen)
    batch, start = 2 * limit, 0
    while len(seen) < limit:
        chunk = list(rows[start : start + batch])
        for pair in chunk:
            seen.setdefault(pair, None)
        if len(chunk) < batch:
            break
        start += batch
    return list(seen)[:limit]


# ---------------------------------------------------------------------------------------------
# What each layer of the context block may hold (docs/compiler.md, "Layers"), before any budget. Each
# rule is defined once, here and in `ledger.visibility` and `ledger.lifecycle`: these selectors read
# with it through the ORM, and the compiler's statements are built from the same definitions
# (`ledger.context.layers`). A viewer or a project may be an expression: the compiler's are.

# The memory layer's order: importance (high first), then newest first, the higher id first.
MEMORY_LAYER_ORDER = ("importance_rank", "-created_at", "-id")
# The types of the memory layer's high-importance memories beside `core_context`, and high's rank
# (`ledger_agentmemory_importance_rank`): the layer's indexes hold the rank, not the importance.
MEMORY_LAYER_TYPES = (MemoryType.LEARNING, MemoryType.PATTERN)
HIGH_RANK = 0


def decision_told() -> Q:
    """The decisions an agent may be told: active, and not held for review (`Decision.held`)."""
    return Q(status=DecisionStatus.ACTIVE, held=False)


def decision_boundary() -> Q:
    """The boundaries: the decisions told that are `architectural` or `scope`."""
    return decision_told() & Q(type__in=BOUNDARY_TYPES)


def decision_relevant() -> Q:
    """The decisions a task may bring into the relevant layer: those told that are not boundaries
    (every block has the boundaries already)."""
    return decision_told() & ~Q(type__in=BOUNDARY_TYPES)


def memory_layer_own(viewer: Viewer) -> Q:
    """The memory layer's candidates among `viewer`'s own memories: `core_context` ones at any
    importance, and high-importance learnings and patterns."""
    kinds = Q(type=MemoryType.CORE_CONTEXT) | Q(type__in=MEMORY_LAYER_TYPES, importance_rank=HIGH_RANK)
    return Q(agent=viewer) & kinds


def memory_layer_shared(viewer: Viewer) -> Q:
    """The memory layer's candidates among other agents' memories: high-importance learnings and
    patterns tagged `cross-team`."""
    return Q(cross_team=True, type__in=MEMORY_LAYER_TYPES, importance_rank=HIGH_RANK) & ~Q(agent=viewer)


def agents_with_key(project: ProjectRef, key: str | Expression) -> QuerySet[Agent]:
    """The project's agent with this key (one at most), unordered. The project is asked for first: the
    compiler's statements take the values in that order (bench/compile.py gives them so)."""
    return Agent.objects.filter(of_project(project)).filter(key=key).order_by()


def agent_id_with_key(project: ProjectRef, key: str | Expression) -> Coalesce:
    """The id of the project's agent with this key, worked out when the query runs: 0, which no agent
    has, when there is none (an agent the project does not know yet reads what every agent reads)."""
    return Coalesce(Subquery(agents_with_key(project, key).values("id")), 0)


def boundaries(project: ProjectRef) -> QuerySet[Decision]:
    """The boundaries layer: the project's boundaries, oldest first."""
    return Decision.objects.filter(of_project(project), decision_boundary()).order_by("created_at", "id")


def memory_layer_parts(
    project: ProjectRef, viewer: Viewer, now: datetime | Expression
) -> tuple[QuerySet[AgentMemory], QuerySet[AgentMemory]]:
    """The memory layer's candidates that are live at `now`, in the layer's order, as two parts each
    read along its own index: `viewer`'s own (`ledger_memory_agent_compile`) and the shared ones of the
    project's other agents (`ledger_memory_crossteam`)."""
    rows = AgentMemory.objects.filter(live(now)).order_by(*MEMORY_LAYER_ORDER)
    own = rows.filter(memory_layer_own(viewer))
    return own, rows.filter(of_project(project), memory_layer_shared(viewer))


def memory_layer(project: ProjectRef, viewer: Viewer, now: datetime | Expression) -> QuerySet[AgentMemory]:
    """The memory layer's candidates, in the order the layer takes them."""
    own, shared = memory_layer_parts(project, viewer, now)
    return own | shared


def relevant_memories(
    project: ProjectRef, viewer: Viewer, now: datetime | Expression
) -> QuerySet[AgentMemory]:
    """The memories a task may bring into the relevant layer: the project's that `viewer` may read and
    that are live at `now`, of any type and importance (those already in the memory layer are left
    out by the compiler)."""
    return AgentMemory.objects.filter(of_project(project), memory_readable(viewer), live(now))


def relevant_episodes(project: ProjectRef, viewer: Viewer) -> QuerySet[Episode]:
    """The episodes a task may bring into the relevant layer: the project's that `viewer` may read."""
    return Episode.objects.filter(of_project(project), episode_readable(viewer))


def relevant_decisions(project: ProjectRef) -> QuerySet[Decision]:
    """The decisions a task may bring into the relevant layer, whoever decided them: the team's."""
    return Decision.objects.filter(of_project(project), decision_relevant())
