"""Proposals: submitted by agents (never overwriting another's), imported from files, and decided
by a coordinator, who merges one into a decision or a memory, or rejects it, may undo that for a short
while, and may settle competing proposals in one step."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ledger.models import (
    DECISION_ENTRY_TYPES,
    PRIVATE_ENTRY_TYPES,
    Agent,
    AgentMemory,
    AuditEvent,
    Decision,
    DecisionStatus,
    EntryRevision,
    EntryStatus,
    InboxEntry,
    MemoryStatus,
    MemoryType,
    Project,
    Source,
)
from ledger.services.decisions import decision_insert, decision_supersede
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


def entry_resolve(
    *,
    project: Project,
    entry_id: int,
    reject_ids: Iterable[int],
    reason: str,
    by: str,
    via: str = "dashboard",
    supersede: int | None = None,
) -> InboxEntry:
    """Settle competing proposals in one step: merge this entry and reject the others with `reason`;
    with `supersede`, the decision the merge creates also replaces that active decision. All or
    nothing: any entry named that is not pending in this project refuses the whole step."""
    others = sorted(set(reject_ids) - {entry_id})
    reason = checked_text("reason", reason, required=bool(others), max_length=10_000).strip()
    with transaction.atomic():
        # Every entry named, locked in id order so that two resolutions never wait on each other.
        wanted = InboxEntry.objects.filter(project=project, pk__in=[entry_id, *others]).order_by("pk")
        named = {e.pk: e for e in locked(wanted)}
        if entry_id not in named:
            raise NotFound(f"no inbox entry {entry_id} in project {project.slug}")
        for pk in [entry_id, *others]:
            if pk not in named:
                raise Conflict(f"project {project.slug} has no inbox entry {pk}; nothing was changed")
            _require_pending(named[pk])
        entry = named[entry_id]
        if supersede is not None and entry.type not in DECISION_ENTRY_TYPES:
            raise invalid("supersede", f"entry {entry.slug!r} becomes a {entry.type} memory, not a decision")
        merged = entry_merge(project=project, entry_id=entry.pk, by=by, via=via)
        if supersede is not None:
            assert merged.decision_id is not None  # a decision type merges into a decision
            decision_supersede(
                project=project, decision_id=supersede, superseded_by_id=merged.decision_id, by=by, via=via
            )
        for other_id in others:
            entry_reject(project=project, entry_id=other_id, by=by, reason=reason, via=via)
        return merged


def entry_undo(*, project: Project, entry_id: int, by: str, via: str = "dashboard") -> InboxEntry:
    """Take back the last decision on an entry, within `settings.CANON_UNDO_SECONDS` of it: the entry is
    pending again (docs/ledger.md "Undo"). Undoing a merge archives what it created, as nothing in the
    ledger is deleted; it is refused once something depends on that (an edit, a supersession, …).
    The values cleared are kept in the audit event's detail."""
    with transaction.atomic():
        entry = _locked_entry(project, entry_id)
        if entry.status == EntryStatus.PENDING:
            raise Conflict(f"entry {entry.slug!r} is pending: there is no merge or rejection to undo")
        _require_undo_window(entry)
        decided = entry.status
        detail: dict[str, Any] = {
            "reviewed_by": entry.reviewed_by,
            "reviewed_at": entry.reviewed_at.isoformat() if entry.reviewed_at else None,
        }
        if decided == EntryStatus.MERGED:
            detail |= {
                "merged_at": entry.merged_at.isoformat() if entry.merged_at else None,
                "decision_id": entry.decision_id,
                "memory_id": entry.memory_id,
            }
            _archive_merged(project=project, entry=entry, by=by, via=via)
        else:
            detail["reason"] = entry.reason
        now = timezone.now()
        # Compare-and-set on the decision being undone: a concurrent undo (or anything else) wins.
        won = InboxEntry.objects.filter(pk=entry.pk, status=decided, reviewed_at=entry.reviewed_at).update(
            status=EntryStatus.PENDING,
            reviewed_by="",
            reviewed_at=None,
            merged_at=None,
            reason="",
            decision=None,
            memory=None,
            updated_at=now,
        )
        if not won:
            raise Conflict(f"entry {entry.slug!r} changed meanwhile; reload it and try again")
        entry.refresh_from_db()
        audit(
            project=project,
            actor=by,
            via=via,
            action=f"undo-{'merge' if decided == EntryStatus.MERGED else 'reject'}",
            obj=entry,
            from_state=decided,
            to_state=EntryStatus.PENDING,
            detail=detail,
        )
        workspace_changed(project)
        return entry


def _require_undo_window(entry: InboxEntry) -> None:
    window = settings.CANON_UNDO_SECONDS
    if entry.reviewed_at is not None and timezone.now() - entry.reviewed_at <= timedelta(seconds=window):
        return
    remedy = (
        "archive or supersede what it became instead"
        if entry.status == EntryStatus.MERGED
        else "ask its agent to propose it again under a new slug"
    )
    raise Conflict(
        f"entry {entry.slug!r} was {entry.status} more than {_duration(window)} ago and can no longer be "
        f"undone; {remedy}"
    )


def _duration(seconds: int) -> str:
    if seconds < 60 or seconds % 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = seconds // 60
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _archive_merged(*, project: Project, entry: InboxEntry, by: str, via: str) -> None:
    """Archive the decision or memory a merge created, as `decision_archive` and `memory_archive` do,
    with an audit event naming the undo; refused when something has built on it since the merge."""
    if _merged_outside(entry):
        raise Conflict(
            f"entry {entry.slug!r} was merged into the team's own files, which already hold it; "
            "archive the decision there instead"
        )
    now = timezone.now()
    made: Decision | AgentMemory
    if entry.decision_id is not None:
        made = locked(Decision.objects.filter(pk=entry.decision_id)).get()
        _require_undoable_decision(made)
        Decision.objects.filter(pk=made.pk).update(
            status=DecisionStatus.ARCHIVED, status_changed_at=now, updated_at=now
        )
    else:
        assert entry.memory_id is not None  # a merged entry links to a decision or a memory
        made = locked(AgentMemory.objects.filter(pk=entry.memory_id)).get()
        _require_undoable_memory(made)
        AgentMemory.objects.filter(pk=made.pk).update(status=MemoryStatus.ARCHIVED, updated_at=now)
    audit(
        project=project,
        actor=by,
        via=via,
        action="archive",
        obj=made,
        from_state=made.status,
        to_state="archived",
        detail={"undo": "merge", "entry_id": entry.pk},
    )


def _merged_outside(entry: InboxEntry) -> bool:
    """Whether the entry's merge came from the workspace (`entry_merged_outside`), not from Canon."""
    last = (
        AuditEvent.objects.filter(object_type="inboxentry", object_id=entry.pk, action="merge")
        .order_by("-id")
        .values_list("via", flat=True)
        .first()
    )
    return last == "import" or (entry.decision is not None and entry.decision.source == Source.IMPORT)


def _require_undoable_decision(decision: Decision) -> None:
    name = f"decision #{decision.pk}"
    if decision.status == DecisionStatus.SUPERSEDED:
        raise Conflict(f"{name} has been superseded since the merge; undo or edit its replacement instead")
    if decision.status != DecisionStatus.ACTIVE:
        raise Conflict(f"{name} is already {decision.status}; there is nothing left to undo")
    if decision.supersedes.exists():
        raise Conflict(f"{name} replaced an earlier decision when it was merged; supersede it instead")
    if decision.revisions.exists():
        raise Conflict(f"{name} has been edited since the merge; archive it instead if it is wrong")


def _require_undoable_memory(memory: AgentMemory) -> None:
    name = f"memory #{memory.pk}"
    if memory.status != MemoryStatus.ACTIVE:
        raise Conflict(f"{name} is {memory.status} since the merge; there is nothing left to undo")
    changed = AuditEvent.objects.filter(object_type="agentmemory", object_id=memory.pk).exists()
    if changed or memory.supersedes.exists():
        raise Conflict(f"{name} has been edited or merged since; archive it instead if it is wrong")


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
