"""A proposal comes in: submitted by an agent, never overwriting another agent's (a taken slug is
de-collided as `{slug}--{agent}`); a memory an agent shares with the team; or imported from a file in the
team's inbox."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ledger.models import (
    PRIVATE_ENTRY_TYPES,
    Agent,
    EntryRevision,
    EntryStatus,
    InboxEntry,
    MemoryType,
    Project,
    Source,
)
from ledger.services.effects import workspace_changed
from ledger.services.errors import Conflict, invalid
from ledger.services.fields import (
    DECOLLISION_LIMIT,
    SUBMIT_ATTEMPTS,
    checked_agent_name,
    checked_choice,
    checked_slug,
    checked_text,
    entry_fields,
    summary_line,
)
from ledger.services.projects import agent_get_or_create
from ledger.values import agent_segment, normalize_entry_slug, normalize_slug

logger = logging.getLogger("canon.services")


@dataclass
class SubmitResult:
    entry: InboxEntry
    created: bool


def entry_submit(
    *,
    project: Project,
    agent_name: str,
    slug: str,
    type: str,
    content: str,
    title: str = "",
    rationale: str = "",
    tags: str | Iterable[str] | None = None,
    importance: str | None = None,
    run_id: str = "",
    source: str = Source.AGENT,
    agent: Agent | None = None,
) -> SubmitResult:
    """Propose an entry (docs/ledger.md "Inbox submission"): never overwrites another agent's proposal.

    `agent` is the proposing agent's row when the caller holds it already (an agent token's own): it
    spares looking the agent up, and is used only when it is this project's agent named `agent_name`.
    """
    name = checked_agent_name(agent_name)
    base = checked_slug(slug)
    fields = entry_fields(
        type=type,
        title=title,
        content=content,
        rationale=rationale,
        tags=tags,
        importance=importance,
        run_id=run_id,
    )
    source = checked_choice("source", source, Source.values)
    for _attempt in range(SUBMIT_ATTEMPTS):
        try:
            with transaction.atomic():
                agent = agent_get_or_create(project=project, name=name, known=agent)
                result = _place_entry(project=project, agent=agent, base=base, fields=fields, source=source)
                workspace_changed(project)
                return result
        except IntegrityError:
            # Another submission took the slug between our read and our insert: re-run the rules.
            logger.info("slug race on %s/%s, retrying", project.slug, base)
    raise Conflict(f"could not place {base!r}: other submissions keep taking it; retry", retryable=True)


def entry_import(
    *,
    project: Project,
    agent_name: str,
    slug: str,
    file: str = "",
    created_at: datetime | None = None,
    known: Agent | None = None,
    **proposal: Any,
) -> InboxEntry:
    """A pending entry from a file in the workspace inbox, only if the project never had this slug.

    Union semantics: existing rows are never changed; a slug taken meanwhile is a Conflict. `file` is
    the inbox file's name, which stays the entry's file; `created_at` the date the file gives; `known`
    an agent the caller holds already (`agent_get_or_create`). The `proposal` is what `entry_submit`
    takes besides its slug (type, content, title, rationale, tags, importance, run_id).
    """
    name = checked_agent_name(agent_name)
    if not isinstance(slug, str) or not normalize_entry_slug(slug):
        raise invalid("slug", f"{slug!r} has no letters or digits; use something like 'use-postgres'")
    fields = {"slug": normalize_entry_slug(slug), **entry_fields(**proposal)}
    try:
        with transaction.atomic():
            agent = agent_get_or_create(project=project, name=name, known=known)
            entry = InboxEntry.objects.create(
                project=project,
                agent=agent,
                source=Source.IMPORT,
                file=file[:255],
                created_at=created_at or timezone.now(),
                **fields,
            )
    except IntegrityError:
        raise Conflict(f"the ledger already has an entry {fields['slug']!r} or a file {file!r}") from None
    return entry


def _decollided(base: str, segment: str) -> Iterable[str]:
    yield base
    yield f"{base}--{segment}"
    for n in range(2, DECOLLISION_LIMIT + 1):
        yield f"{base}--{segment}--{n}"


def _place_entry(
    *, project: Project, agent: Agent, base: str, fields: dict[str, Any], source: str
) -> SubmitResult:
    """The rules in as few statements as the common case allows: a free slug is one insert; only a
    taken one reads the slug and this agent's de-collided forms of it, all in one query."""
    entry = InboxEntry(project=project, agent=agent, slug=base, source=source, **fields)
    if _insert_unless_taken(entry):
        return SubmitResult(entry=entry, created=True)
    segment = agent_segment(agent.name)
    prefix = f"{base}--{segment}"
    taken = {
        found.slug: found
        for found in InboxEntry.objects.filter(
            Q(slug=base) | Q(slug__startswith=prefix), project=project
        ).order_by()
    }
    for candidate in _decollided(base, segment):
        found = taken.get(candidate)
        if found is None:
            entry.slug = candidate
            if not _insert_unless_taken(entry):
                # Taken since the read: roll back and run the rules again (`entry_submit`).
                raise IntegrityError(f"slug {candidate!r} was taken meanwhile")
            return SubmitResult(entry=entry, created=True)
        if found.agent_id == agent.pk:
            found.agent = agent
            return SubmitResult(entry=_update_pending(found, fields), created=False)
    raise Conflict(f"no free slug left for {base!r}; choose another slug")


def _insert_unless_taken(entry: InboxEntry) -> bool:
    """Insert `entry` unless its project already has an entry with its slug; whether it did.

    One statement either way, and no savepoint, so a taken slug leaves the transaction usable on
    PostgreSQL too: `INSERT … ON CONFLICT (project, slug) DO NOTHING RETURNING id`, which SQLite and
    PostgreSQL both run and the ORM cannot write. The unique constraint still decides every race.
    """
    fields = _INSERTED_FIELDS
    values = [field.get_db_prep_save(field.pre_save(entry, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(_insert_sql(connection.vendor), values)
        row = cursor.fetchone()
    if row is None:
        return False
    entry.pk = row[0]
    entry._state.adding = False
    entry._state.db = connection.alias
    return True


_INSERTED_FIELDS = [field for field in InboxEntry._meta.concrete_fields if not field.primary_key]


@functools.cache
def _insert_sql(vendor: str) -> str:
    """The statement of `_insert_unless_taken`, built once per database engine."""
    quote = connection.ops.quote_name
    column = {field.name: str(field.column) for field in InboxEntry._meta.concrete_fields}
    return (
        f"INSERT INTO {quote(InboxEntry._meta.db_table)} "
        f"({', '.join(quote(str(field.column)) for field in _INSERTED_FIELDS)}) "
        f"VALUES ({', '.join(['%s'] * len(_INSERTED_FIELDS))}) "
        f"ON CONFLICT ({quote(column['project'])}, {quote(column['slug'])}) DO NOTHING "
        f"RETURNING {quote(column['id'])}"
    )


def _update_pending(entry: InboxEntry, fields: dict[str, Any]) -> InboxEntry:
    """A retry by the entry's own agent: update in place while pending, never reopen a decided one,
    never overwrite a coordinator's edit (`revisions.entry_edit`): once edited, the text is theirs.

    Returns the entry as read in this transaction with the fields just written, without reading it again.
    """
    if entry.status == EntryStatus.PENDING:
        now = timezone.now()
        # Compare-and-set, in one statement: a merge, a rejection or an edit since the read wins (an
        # edit changes `updated_at` in the row itself, which a concurrent update re-reads).
        pending = InboxEntry.objects.filter(
            ~Exists(EntryRevision.objects.filter(entry=OuterRef("pk"))),
            pk=entry.pk,
            status=EntryStatus.PENDING,
            updated_at=entry.updated_at,
        )
        if pending.update(updated_at=now, **fields):
            return _written(entry, fields, now)
        # Something changed it since the read: wait for the row, then decide on what it holds now.
        # Holding the row, no edit, merge or rejection (each locks it too) comes in between, so
        # concurrent retries of one entry take their turns instead of racing again.
        rows = InboxEntry.objects.filter(pk=entry.pk)
        entry.status = rows.select_for_update().values_list("status", flat=True).get()
        if entry.status == EntryStatus.PENDING:
            if EntryRevision.objects.filter(entry=entry).exists():
                raise Conflict(
                    f"a coordinator edited {entry.slug} before merging it; propose changes under a new slug"
                )
            rows.update(updated_at=now, **fields)
            return _written(entry, fields, now)
    raise Conflict(f"already recorded as {entry.slug} ({entry.status}); propose it again under a new slug")


def _written(entry: InboxEntry, fields: dict[str, Any], now: datetime) -> InboxEntry:
    for name, value in fields.items():
        setattr(entry, name, value)
    entry.updated_at = now
    return entry


def memory_propose(
    *,
    project: Project,
    agent_name: str,
    type: str,
    content: str,
    importance: str | None = None,
    tags: str | Iterable[str] | None = None,
    run_id: str = "",
    agent: Agent | None = None,
) -> SubmitResult:
    """A memory an agent wants every other agent to see (`cross-team`): what one agent writes reaches
    another only through a person, so it becomes a pending inbox entry of the same type, importance,
    tags and content, and a memory when a coordinator merges it. A retry updates the same entry.
    `agent` as for `entry_submit`."""
    kind = checked_choice("type", type, MemoryType.values)
    if kind not in PRIVATE_ENTRY_TYPES:
        raise invalid("type", f"a {kind} memory stays with its agent; share a learning, pattern or update")
    text = checked_text("content", content, required=True)
    words = normalize_slug(" ".join(text.split()[:8]))[:60].strip("-")
    return entry_submit(
        project=project,
        agent_name=agent_name,
        slug=f"{kind}-{words}" if words else kind,
        type=kind,
        title=summary_line(text, 80),
        content=text,
        tags=tags,
        importance=importance,
        run_id=run_id,
        agent=agent,
    )
