"""Proposals: submitted by agents (never overwriting another's), imported from files, and decided
by a coordinator, who merges one into a decision or a memory, or rejects it, may undo that for a short
while, and may settle competing proposals in one step."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ledger import untrusted
from ledger.competition import Competitor, competitors, entry_title
from ledger.models import (
    BOUNDARY_TYPES,
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
    MAX_ID,
    REASON_MAX_LENGTH,
    SUBMIT_ATTEMPTS,
    checked_agent_name,
    checked_choice,
    checked_slug,
    checked_text,
    entry_fields,
    locked,
    summary_line,
)
from ledger.services.memory import memory_store
from ledger.services.projects import agent_get_or_create
from ledger.values import (
    InvalidValue,
    agent_segment,
    check_text,
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
    *,
    project: Project,
    entry: InboxEntry,
    by: str,
    via: str,
    status: str,
    detail: dict[str, Any] | None = None,
    **fields: Any,
) -> InboxEntry:
    """Move a pending entry to `status` (merged or rejected), recording who decided it; audited (with
    `detail` added to what the event says), mirrored after commit."""
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
    said = (
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
        detail={**said, **(detail or {})},
    )
    workspace_changed(project)
    return entry


class FlaggedEntry(Conflict):
    """A merge of an entry whose text is flagged (`ledger.untrusted.flags`, the detector the dashboard
    shows), sent without `confirm_flagged`: merging puts the text in front of every agent."""

    def __init__(self, entry: InboxEntry, flags: list[str]) -> None:
        super().__init__(
            f"entry {entry.slug!r} is flagged: {'; '.join(flags)}. Merging puts its text in front of "
            "every agent: read it whole, then merge again with confirm_flagged: true"
        )
        self.flags = flags
        self.details = [{"field": "confirm_flagged", "message": flag} for flag in flags]


class CompetingBoundary(Conflict):
    """A merge of a boundary proposal while another boundary answers the same question (a pending
    `architectural` or `scope` entry, or an active decision of those types), with no choice made
    about it: supersede the decision, reject the entry, or keep both. `competitors` are the rows."""

    def __init__(self, entry: InboxEntry, rivals: list[Competitor]) -> None:
        named = "; ".join(_rival_name(rival) for rival in rivals)
        decisions = [r.pk for r in rivals if isinstance(r, Decision)]
        entries = [r.pk for r in rivals if isinstance(r, InboxEntry)]
        choices = [
            *([f"supersede: {decisions} to replace the decision"] if decisions else []),
            *([f"reject: {entries} to turn the proposal down"] if entries else []),
            "keep_both: true to keep them all as boundaries",
        ]
        super().__init__(
            f"entry {entry.slug!r} would be a second boundary on the same question: it competes with "
            f"{named}. Choose {', or '.join(choices)}"
        )
        self.competitors = rivals
        self.details = [
            {
                "field": "supersede" if isinstance(rival, Decision) else "reject",
                "message": f"competes with {_rival_name(rival)}",
                "kind": "decision" if isinstance(rival, Decision) else "entry",
                "id": rival.pk,
                "type": rival.type,
                "title": _rival_title(rival),
                "status": rival.status,
            }
            for rival in rivals
        ]


def _rival_title(rival: Competitor) -> str:
    return rival.title if isinstance(rival, Decision) else entry_title(rival)


def _rival_name(rival: Competitor) -> str:
    kind = "active decision" if isinstance(rival, Decision) else "pending entry"
    return f"{kind} #{rival.pk} {_rival_title(rival)!r} ({rival.type})"


def entry_flags(entry: InboxEntry) -> list[str]:
    """What a reviewer is warned about in an entry's text (its title, content and rationale read
    together): the detector the dashboard shows flags with."""
    return untrusted.flags("\n".join((entry.title, entry.content, entry.rationale)))


# How long a version is (`entry_version`): a SHA-256 digest, in hexadecimal.
VERSION_LENGTH = 64


def entry_version(entry: InboxEntry) -> str:
    """What a reviewer reads of an entry, as one string: the SHA-256 of every field a merge takes (type,
    title, content, rationale, tags, importance). A merge that carries the version it was read at is
    refused once it differs (`ChangedSinceRead`). A digest of the text, not a time: it changes with
    what the reviewer reads and only then, and a clock plays no part. The whole digest, since the agent
    who writes the text is the one a short one would invite to craft a second text that matches it."""
    read = [entry.type, entry.title, entry.content, entry.rationale, list(entry.tags), entry.importance]
    return hashlib.sha256(json.dumps(read, separators=(",", ":")).encode()).hexdigest()


class ChangedSinceRead(Conflict):
    """A merge of an entry whose text is no longer the one the reviewer read (`seen`, its
    `entry_version` then): its agent submitted it again, or another coordinator edited it, meanwhile.
    Nothing was merged; the reviewer reads it again and merges the version they read then."""

    def __init__(self, entry: InboxEntry) -> None:
        last = entry.revisions.order_by("-changed_at", "-id").values_list("changed_by", flat=True).first()
        who = f"coordinator {last}" if last is not None else f"its agent {entry.agent.name}"
        when = entry.updated_at.isoformat(timespec="seconds")
        super().__init__(
            f"entry {entry.slug!r} changed since you read it: last changed by {who} at {when}. "
            "Nothing was merged: read it again, then merge the version you read"
        )
        # Not the new version: it is had by reading the entry again, with its new text.
        self.details = [
            {
                "field": "version",
                "message": "the entry changed since this version was read",
                "updated_at": when,
            }
        ]


@dataclass
class Merged:
    """What merging an entry did: the entry, now merged; whether its memory was already recorded (the
    agent held the same learning: nothing new was written); the decisions it superseded and the
    entries it rejected."""

    entry: InboxEntry
    already_recorded: bool = False
    superseded: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)

    @property
    def message(self) -> str:
        entry = self.entry
        if entry.decision_id is not None:
            said = [f"merged as decision {entry.decision_id}"]
        elif self.already_recorded:
            said = [f"already recorded as memory {entry.memory_id}: nothing new was written"]
        else:
            said = [f"merged as memory {entry.memory_id}"]
        memory = entry.memory if entry.memory_id is not None else None
        if memory is not None and memory.similar_to_id is not None and not self.already_recorded:
            said.append(
                f"it closely repeats memory {memory.similar_to_id} (similarity {memory.similarity}), "
                "flagged for review"
            )
        if self.superseded:
            said.append(f"superseded decision {', '.join(f'#{pk}' for pk in self.superseded)}")
        if self.rejected:
            said.append(f"rejected entry {', '.join(f'#{pk}' for pk in self.rejected)}")
        return "; ".join(said)


def entry_merge(**kwargs: Any) -> InboxEntry:
    """Merge a pending entry (`entry_merge_outcome`, same arguments) when the caller needs only the
    merged entry, not what the merge did besides."""
    return entry_merge_outcome(**kwargs).entry


def entry_merge_outcome(
    *,
    project: Project,
    entry_id: int,
    by: str,
    via: str = "api",
    confirm_flagged: bool = False,
    keep_both: bool = False,
    supersede: Iterable[int] = (),
    reject: Iterable[int] = (),
    reason: str = "",
    seen: str | None = None,
) -> Merged:
    """Merge a pending entry: a decision for decision types, a memory for the others. All or nothing,
    in one transaction (docs/ledger.md "Inbox: review").

    - `seen` is the entry's version (`entry_version`) as the reviewer read it: when the entry changed
      since, the merge is refused (`ChangedSinceRead`), so what is merged is what a person read. None
      checks nothing (an API caller that does not send it); the dashboard always sends it.

    - A flagged entry (`entry_flags`) is refused (`FlaggedEntry`) unless `confirm_flagged`.
    - A boundary entry (`architectural`, `scope`) competing with a pending boundary entry or an active
      boundary decision (`ledger.competition`) is refused (`CompetingBoundary`, naming each) unless
      each is settled: `supersede` names active decisions the new decision replaces, `reject` pending
      entries rejected with `reason` ("superseded by the merge of entry N" when blank); `keep_both`
      keeps those left. Any entry may supersede and reject so; only a decision type supersedes.
    - A `learning`, `pattern` or `update` is recorded as `memory_store` records a memory: when its
      agent already holds it as an active memory nothing new is written, the entry links to that one
      and the outcome says `already_recorded`; a near repeat is flagged (`similar_to`).
    """
    for name, value in (("confirm_flagged", confirm_flagged), ("keep_both", keep_both)):
        if not isinstance(value, bool):
            raise invalid(name, "must be true or false")
    superseded = _ids("supersede", supersede)
    others = _ids("reject", reject)
    if entry_id in others:
        raise invalid("reject", f"entry {entry_id} is the one merged")
    if seen is not None and not isinstance(seen, str):
        raise invalid("version", "must be the version the entry was read at")
    reason = checked_text("reason", reason, max_length=REASON_MAX_LENGTH).strip()
    with transaction.atomic():
        # Every entry named, locked in id order so that two merges never wait on each other.
        wanted = InboxEntry.objects.filter(project=project, pk__in=[entry_id, *others]).order_by("pk")
        named = {e.pk: e for e in locked(wanted.select_related("agent"))}
        if entry_id not in named:
            raise NotFound(f"no inbox entry {entry_id} in project {project.slug}")
        for pk in [entry_id, *others]:
            if pk not in named:
                raise Conflict(f"project {project.slug} has no inbox entry {pk}; nothing was changed")
            _require_pending(named[pk])
        entry = named[entry_id]
        # Under the row's lock: neither a re-submission nor an edit comes in between this and the merge.
        if seen is not None and seen != entry_version(entry):
            raise ChangedSinceRead(entry)
        if superseded:
            if entry.type not in DECISION_ENTRY_TYPES:
                raise invalid(
                    "supersede", f"entry {entry.slug!r} becomes a {entry.type} memory, not a decision"
                )
            known = set(
                Decision.objects.filter(project=project, pk__in=superseded).values_list("pk", flat=True)
            )
            for pk in superseded:
                if pk not in known:
                    raise invalid("supersede", f"no decision {pk} in project {project.slug}")
        flagged = entry_flags(entry)
        if flagged and not confirm_flagged:
            raise FlaggedEntry(entry, flagged)
        if entry.type in BOUNDARY_TYPES and not keep_both:
            rivals = competitors(project, [entry], types=BOUNDARY_TYPES)[entry.pk]
            unsettled = [
                rival
                for rival in rivals
                if rival.pk not in (superseded if isinstance(rival, Decision) else others)
            ]
            if unsettled:
                raise CompetingBoundary(entry, unsettled)
        outcome = _merge(project=project, entry=entry, by=by, via=via)
        for pk in superseded:
            assert outcome.entry.decision_id is not None  # only a decision type supersedes
            decision_supersede(
                project=project, decision_id=pk, superseded_by_id=outcome.entry.decision_id, by=by, via=via
            )
        reason = reason or f"superseded by the merge of entry {entry.pk}"
        for pk in others:
            _decide(
                project=project, entry=named[pk], by=by, via=via, status=EntryStatus.REJECTED, reason=reason
            )
        outcome.superseded, outcome.rejected = superseded, others
        return outcome


def _ids(name: str, ids: Iterable[int]) -> list[int]:
    """The ids a merge names, each once, in order; anything but a list of ids is invalid."""
    found = list(ids) if not isinstance(ids, str | bytes) else None
    if found is None or any(
        not isinstance(pk, int) or isinstance(pk, bool) or not 1 <= pk <= MAX_ID for pk in found
    ):
        raise invalid(name, f"must be a list of ids (whole numbers from 1 to {MAX_ID})")
    return list(dict.fromkeys(found))


def _merge(*, project: Project, entry: InboxEntry, by: str, via: str) -> Merged:
    """What the entry becomes (a decision, or its agent's memory once), and the entry marked merged."""
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
        merged = _decide(
            project=project, entry=entry, by=by, via=via, status=EntryStatus.MERGED, decision=decision
        )
        return Merged(merged)
    recorded = memory_store(
        project=project,
        agent_name=entry.agent.name,
        type=entry.type,
        importance=entry.importance,
        content=entry.content,
        tags=entry.tags,
        source=Source.INBOX,
        by=by,
        via=via,
    )
    repeat = not recorded.created
    merged = _decide(
        project=project,
        entry=entry,
        by=by,
        via=via,
        status=EntryStatus.MERGED,
        detail={"already_recorded": True} if repeat else None,
        memory=recorded.memory,
    )
    return Merged(merged, already_recorded=repeat)


def entry_reject(
    *, project: Project, entry_id: int, by: str, reason: str = "", via: str = "api"
) -> InboxEntry:
    reason = checked_text("reason", reason, max_length=REASON_MAX_LENGTH).strip()
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


def entry_file_text_keep(*, project: Project, entry: InboxEntry, markdown: str) -> bool:
    """A merged entry came from a team's inbox file, and its decision still says what the file says: the
    file's text (`markdown`, one block of the log) becomes the decision's block in the files, word for
    word, as Squad's Scribe would append it, instead of one Canon writes from the fields.

    Compare-and-set on the decision as `entry.decision` holds it: only while it has no such text and its
    title, content and rationale are still those read. Returns whether it took the text.
    """
    decision = entry.decision
    if decision is None or entry.status != EntryStatus.MERGED:
        return False
    try:
        check_text(markdown, "the file")
    except InvalidValue as exc:
        raise invalid("file", str(exc)) from exc
    return bool(
        Decision.objects.filter(
            project=project,
            pk=decision.pk,
            source=Source.INBOX,
            markdown="",
            title=decision.title,
            content=decision.content,
            rationale=decision.rationale,
        ).update(markdown=markdown)
    )


def entry_file_release(*, project: Project, entry_id: int) -> bool:
    """A decided entry whose file Canon took out of the inbox gives up the file's name, so that a new file
    someone writes under the same name (Squad's `squad_decide` names files `{author}-{summary}.md`) is a
    new proposal. Audited with the name it held. Returns whether it gave it up (a pending entry keeps it)."""
    with transaction.atomic():
        entry = (
            InboxEntry.objects.select_for_update()
            .filter(project=project, pk=entry_id)
            .exclude(status=EntryStatus.PENDING)
            .exclude(file="")
            .first()
        )
        if entry is None:
            return False
        InboxEntry.objects.filter(pk=entry.pk).update(file="")
        audit(
            project=project,
            actor="canon",
            via="import",
            action="release_file",
            obj=entry,
            detail={"file": entry.file},
        )
        return True


def entry_resolve(
    *,
    project: Project,
    entry_id: int,
    reject_ids: Iterable[int],
    reason: str,
    by: str,
    via: str = "dashboard",
    supersede: int | None = None,
    confirm_flagged: bool = False,
    seen: str | None = None,
) -> InboxEntry:
    """Settle competing proposals in one step, as the entry's page offers: merge this entry and reject
    the others with `reason` (required when there are any); with `supersede`, the decision the merge
    creates also replaces that active decision. The reviewer chose what to reject and supersede, so
    what they left is kept (`keep_both`). All or nothing, and refused when the entry changed since
    the reviewer read it (`seen`), as `entry_merge` is."""
    others = sorted(set(reject_ids) - {entry_id})
    reason = checked_text("reason", reason, required=bool(others), max_length=REASON_MAX_LENGTH).strip()
    return entry_merge(
        project=project,
        entry_id=entry_id,
        by=by,
        via=via,
        confirm_flagged=confirm_flagged,
        keep_both=True,
        supersede=[supersede] if supersede is not None else [],
        reject=others,
        reason=reason,
        seen=seen,
    )


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
    with an audit event naming the undo; refused when something has built on it since the merge. A
    merge that found its memory already recorded created nothing: undoing it archives nothing."""
    via_of_merge, said = _last_merge(entry)
    if via_of_merge == "import" or (entry.decision is not None and entry.decision.source == Source.IMPORT):
        raise Conflict(
            f"entry {entry.slug!r} was merged into the team's own files, which already hold it; "
            "archive the decision there instead"
        )
    if said.get("already_recorded"):
        return
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
        _require_undoable_memory(made, entry)
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


def _last_merge(entry: InboxEntry) -> tuple[str, dict[str, Any]]:
    """How the entry's last merge came (`via`: `import` when from the workspace,
    `entry_merged_outside`) and what its audit event said of it."""
    last = (
        AuditEvent.objects.filter(object_type="inboxentry", object_id=entry.pk, action="merge")
        .order_by("-id")
        .values_list("via", "detail")
        .first()
    )
    return (last[0], last[1] or {}) if last is not None else ("", {})


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


def _require_undoable_memory(memory: AgentMemory, entry: InboxEntry) -> None:
    name = f"memory #{memory.pk}"
    if memory.status != MemoryStatus.ACTIVE:
        raise Conflict(f"{name} is {memory.status} since the merge; there is nothing left to undo")
    again = memory.source_entries.exclude(pk=entry.pk).order_by("pk").values_list("pk", flat=True).first()
    if again is not None:
        raise Conflict(
            f"{name} was merged again since, from entry #{again}; archive it instead if it is wrong"
        )
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
