"""Reusable reads of the ledger. Writes live in `ledger.services`."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from ledger.models import (
    PRIVATE_ENTRY_TYPES,
    Agent,
    AgentMemory,
    ApiToken,
    Compilation,
    Decision,
    DecisionStatus,
    EntryStatus,
    InboxEntry,
    Project,
    Session,
)
from ledger.values import CROSS_TEAM_TAG, MAX_TAGS, InvalidValue, agent_key, normalize_tags, tag_needle


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


def tag_filter(raw: str | Iterable[str] | None) -> list[str] | None:
    """The whole tags to match (any of them), or None when no tag was asked for.

    A tag no row can carry (too long, or with a character that cannot be stored) matches nothing,
    the way an invalid agent name does. More than `MAX_TAGS` different tags raise `InvalidValue`:
    a row holds no more, and each one is a term of the query.
    """
    if raw is None:
        return None
    items = raw.split(",") if isinstance(raw, str) else raw
    asked: dict[str, None] = {}  # insertion-ordered, with constant-time membership
    for item in items:
        if not isinstance(item, str) or not item.strip():
            continue
        asked[item.strip().lower()] = None
        if len(asked) > MAX_TAGS:
            raise InvalidValue(f"at most {MAX_TAGS} tags, got more")
    wanted: list[str] = []
    for item in asked:
        try:
            wanted.extend(normalize_tags([item]))
        except InvalidValue:
            continue
    return list(dict.fromkeys(wanted)) if asked else None


def token_for_secret(secret: str) -> ApiToken | None:
    return (
        ApiToken.objects.select_related("project", "agent")
        .filter(token_hash=ApiToken.hash_secret(secret), revoked_at__isnull=True)
        .first()
    )


def inbox_entries(
    project: Project,
    *,
    status: str | None = EntryStatus.PENDING,
    type: str | None = None,
    agent: str | None = None,
    run_id: str | None = None,
) -> QuerySet[InboxEntry]:
    """A project's entries, newest first. `status=None` (or 'all') means every status."""
    qs = InboxEntry.objects.filter(project=project).select_related("agent")
    if status and status != "all":
        qs = qs.filter(status=status)
    if type:
        qs = qs.filter(type=type)
    if agent:
        qs = qs.filter(agent__key=agent_filter_key(agent))
    if run_id:
        qs = qs.filter(run_id=run_id)
    return qs.order_by("-created_at", "-id")


def entries_visible_to(qs: QuerySet[InboxEntry], viewer: Agent | None) -> QuerySet[InboxEntry]:
    """An agent sees every proposal except the private learnings, patterns and updates of other agents
    (those not tagged `cross-team`); a coordinator (None) sees all."""
    if viewer is None:
        return qs
    # The tags as JSON text: the quoted tag matches that whole tag only, on SQLite and PostgreSQL alike.
    shared = Q(tags_text__contains=f'"{CROSS_TEAM_TAG}"')
    private = Q(type__in=PRIVATE_ENTRY_TYPES) & ~shared & ~Q(agent=viewer)
    return qs.alias(tags_text=Cast("tags", TextField())).exclude(private)


def decisions(
    project: Project,
    *,
    status: str | None = DecisionStatus.ACTIVE,
    type: str | None = None,
    agent: str | None = None,
) -> QuerySet[Decision]:
    qs = Decision.objects.filter(project=project).select_related("agent")
    if status and status != "all":
        qs = qs.filter(status=status)
    if type:
        qs = qs.filter(type=type)
    if agent:
        qs = qs.filter(agent__key=agent_filter_key(agent))
    return qs.order_by("-created_at", "-id")


def memories_visible_to(project: Project, viewer: Agent | None) -> QuerySet[AgentMemory]:
    """Visibility (docs/ledger.md): an agent reads its own and `cross-team` memories; a coordinator all."""
    qs = AgentMemory.objects.filter(project=project).select_related("agent")
    if viewer is not None:
        qs = qs.filter(Q(agent=viewer) | Q(cross_team=True))
    return qs


def memories_search(
    project: Project,
    *,
    viewer: Agent | None,
    type: str | None = None,
    tags: str | Iterable[str] | None = None,
    agent: str | None = None,
    q: str | None = None,
    importance: str | None = None,
    status: str | None = "active",
) -> QuerySet[AgentMemory]:
    """Project-wide memory search: whole-tag OR match, text search, visibility rules applied.

    Raises `InvalidValue` for more than `MAX_TAGS` tags.
    """
    qs = memories_visible_to(project, viewer)
    if status and status != "all":
        qs = qs.filter(status=status)
    if type:
        qs = qs.filter(type=type)
    if importance:
        qs = qs.filter(importance=importance)
    if agent:
        qs = qs.filter(agent__key=agent_filter_key(agent))
    wanted = tag_filter(tags)
    if wanted is not None:
        match = Q()
        for tag in wanted:
            match |= Q(tag_index__contains=tag_needle(tag))
        qs = qs.filter(match) if wanted else qs.none()
    if q:
        qs = qs.filter(content__icontains=q)
    return qs.order_by("-created_at", "-id")


def decision_chain(decision: Decision) -> tuple[list[Decision], list[Decision]]:
    """What this decision replaced (oldest first) and what replaced it (in order): the chain both ways."""
    replaced: list[Decision] = []
    frontier = [decision.pk]
    seen = {decision.pk}
    while frontier:
        rows = list(Decision.objects.filter(superseded_by_id__in=frontier).select_related("agent"))
        rows = [row for row in rows if row.pk not in seen]
        seen.update(row.pk for row in rows)
        replaced.extend(rows)
        frontier = [row.pk for row in rows]
    replaced.sort(key=lambda d: (d.created_at, d.pk))
    successors: list[Decision] = []
    cursor = decision
    while cursor.superseded_by_id is not None and cursor.superseded_by_id not in seen:
        nxt = Decision.objects.select_related("agent").get(pk=cursor.superseded_by_id)
        seen.add(nxt.pk)
        successors.append(nxt)
        cursor = nxt
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
