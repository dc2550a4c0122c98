"""Reusable reads of the ledger. Writes live in `ledger.services`."""

from __future__ import annotations

from django.db import connection
from django.db.models.expressions import RawSQL

from ledger.models import (
    Agent,
    ApiToken,
    Compilation,
    Decision,
    Project,
    Session,
)
from ledger.values import InvalidValue, agent_key


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


def open_session(project: Project) -> Session | None:
    return Session.objects.filter(project=project, ended_at__isnull=True).first()


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
