"""Proposals: submitted by agents (never overwriting another's), imported from files, and decided
by a coordinator, who merges one into a decision or a memory, or rejects it."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from ledger.models import (
    DECISION_ENTRY_TYPES,
    PRIVATE_ENTRY_TYPES,
    Agent,
    Decision,
    EntryStatus,
    InboxEntry,
    MemoryType,
    Project,
    Source,
)
from ledger.services.decisions import decision_insert
from ledger.services.effects import audit, workspace_changed
from ledger.services.errors import Conflict, NotFound, invalid
from ledger.services.fields import (
    DECOLLISION_LIMIT,
    SUBMIT_ATTEMPTS,
    checked_agent_name,
    checked_choice,
    checked_slug,
    checked_text,
    entry_fields,
    locked,
    summary_line,
)
from ledger.services.memory import memory_insert
from ledger.services.projects import agent_get_or_create
from ledger.values import (
    agent_segment,
    normalize_entry_slug,
    normalize_slug,
)

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
    **proposal: Any,
) -> InboxEntry:
    """A pending entry from a file in the workspace inbox, only if the project never had this slug.

    Union semantics: existing rows are never changed; a slug taken meanwhile is a Conflict. `file` is
    the inbox file's name, which stays the entry's file; `created_at` the date the file gives. The
    `proposal` is what `entry_submit` takes besides its slug (type, content, title, rationale, tags,
    importance, run_id).
    """
    name = checked_agent_name(agent_name)
    if not isinstance(slug, str) or not normalize_entry_slug(slug):
        raise invalid("slug", f"{slug!r} has no letters or digits; use something like 'use-postgres'")
    fields = {"slug": normalize_entry_slug(slug), **entry_fields(**proposal)}
    try:
        with transaction.atomic():
            agent = agent_get_or_create(project=project, name=name)
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
    """A retry by the entry's own agent: update in place while pending, never reopen a decided one.

    Returns the entry as read in this transaction with the fields just written, without reading it again.
    """
    if entry.status == EntryStatus.PENDING:
        now = timezone.now()
        # Compare-and-set: a merge or a rejection since the read wins.
        pending = InboxEntry.objects.filter(pk=entry.pk, status=EntryStatus.PENDING)
        if pending.update(updated_at=now, **fields):
            for name, value in fields.items():
                setattr(entry, name, value)
            entry.updated_at = now
            return entry
        entry.refresh_from_db(fields=["status"])
    raise Conflict(f"already recorded as {entry.slug} ({entry.status}); propose it again under a new slug")


def _locked_entry(project: Project, entry_id: int) -> InboxEntry:
    entry = locked(InboxEntry.objects.filter(project=project, pk=entry_id)).first()
    if entry is None:
        raise NotFound(f"no inbox entry {entry_id} in project {project.slug}")
    return entry


def _require_pending(entry: InboxEntry) -> None:
    if entry.status != EntryStatus.PENDING:
        raise Conflict(f"entry {entry.slug!r} is already {entry.status}")


def _decide(
    *, project: Project, entry: InboxEntry, by: str, via: str, status: str, **fields: Any
) -> InboxEntry:
    """Move a pending entry to `status` (merged or rejected), recording who decided it; audited, mirrored
    after commit."""
    now = timezone.now()
    merged = status == EntryStatus.MERGED
    if merged:
        fields["merged_at"] = now
    # Compare-and-set: whoever changes the status first wins, on any database.
    won = InboxEntry.objects.filter(pk=entry.pk, status=EntryStatus.PENDING).update(
        status=status, reviewed_by=by[:150], reviewed_at=now, updated_at=now, **fields
    )
    if not won:
        entry.refresh_from_db(fields=["status"])
        raise Conflict(f"entry {entry.slug!r} is already {entry.status}")
    entry.refresh_from_db()
    detail = (
        {"decision_id": entry.decision_id, "memory_id": entry.memory_id}
        if merged
        else {"reason": entry.reason}
    )
    audit(
        project=project,
        actor=by,
        via=via,
        action="merge" if merged else "reject",
        obj=entry,
        from_state=EntryStatus.PENDING,
        to_state=status,
        detail=detail,
    )
    workspace_changed(project)
    return entry


def entry_merge(*, project: Project, entry_id: int, by: str, via: str = "api") -> InboxEntry:
    """Merge a pending entry: a decision for decision types, a memory for the others. All or nothing."""
    with transaction.atomic():
        entry = _locked_entry(project, entry_id)
        _require_pending(entry)
        link: dict[str, Any]
        if entry.type in DECISION_ENTRY_TYPES:
            decision = decision_insert(
                project=project,
                agent=entry.agent,
                type=entry.type,
                title=entry.title or entry.slug,
                content=entry.content,
                rationale=entry.rationale,
                tags=entry.tags,
                source=Source.INBOX,
            )
            link = {"decision": decision}
        else:
            memory = memory_insert(
                project=project,
                agent=entry.agent,
                type=entry.type,
                importance=entry.importance,
                content=entry.content,
                tags=entry.tags,
                session_id="",
                source=Source.INBOX,
                injected_by="",
            )
            link = {"memory": memory}
        return _decide(
            project=project,
            entry=entry,
            by=by,
            via=via,
            status=EntryStatus.MERGED,
            **link,
        )


def entry_reject(
    *, project: Project, entry_id: int, by: str, reason: str = "", via: str = "api"
) -> InboxEntry:
    reason = checked_text("reason", reason, max_length=10_000).strip()
    with transaction.atomic():
        entry = _locked_entry(project, entry_id)
        _require_pending(entry)
        return _decide(
            project=project,
            entry=entry,
            by=by,
            via=via,
            status=EntryStatus.REJECTED,
            reason=reason,
        )


def entry_merged_outside(*, project: Project, entry_id: int, decision: Decision, by: str) -> InboxEntry:
    """Someone else merged a pending entry's file into the team's log (Squad's Scribe does, then deletes
    the file): the entry becomes merged, linked to the adopted block, instead of being written again."""
    with transaction.atomic():
        entry = _locked_entry(project, entry_id)
        _require_pending(entry)
        if InboxEntry.objects.filter(decision=decision).exists():
            raise Conflict(f"decision {decision.pk} is already linked to another entry")
        return _decide(
            project=project, entry=entry, by=by, via="import", status=EntryStatus.MERGED, decision=decision
        )


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
