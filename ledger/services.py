"""Every write to the ledger, and the rules it must keep (SPEC §1-2).

Views, the API, commands and the importer parse their input and call one of these functions.
Each is atomic, takes keyword-only arguments and raises a `LedgerError` whose message is safe to
show to whoever sent the request. Races are decided by the database: unique constraints caught
around a savepoint, and compare-and-set updates whose row count is checked.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ledger import context
from ledger.models import (
    BOUNDARY_TYPES,
    DECISION_ENTRY_TYPES,
    PRIVATE_ENTRY_TYPES,
    Agent,
    AgentMemory,
    ApiToken,
    AuditEvent,
    Decision,
    DecisionRevision,
    DecisionStatus,
    DecisionType,
    EntryStatus,
    EntryType,
    Importance,
    InboxEntry,
    MemoryStatus,
    MemoryType,
    Project,
    Session,
    Source,
    TokenRole,
)
from ledger.tokens import count_tokens
from ledger.values import (
    AGENT_NAME_MAX_LENGTH,
    InvalidValue,
    agent_key,
    agent_segment,
    agent_skeleton,
    check_json,
    check_text,
    clean_agent_name,
    normalize_entry_slug,
    normalize_slug,
    normalize_tags,
    require_slug,
    tag_index,
)

logger = logging.getLogger("canon.services")

TITLE_MAX_LENGTH = 300
RUN_ID_MAX_LENGTH = 200
SESSION_ID_MAX_LENGTH = 100
# How many times a submission that lost a race for its slug re-runs the placement rules.
SUBMIT_ATTEMPTS = 5
# How far de-collision counts (`slug--agent--2` … `slug--agent--N`) before giving up.
DECOLLISION_LIMIT = 1000
IMPORTANCE_RANK = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}


# ---------------------------------------------------------------------------------------------
# Errors


class LedgerError(Exception):
    """A request the ledger refuses. `message` is safe to show; `status` is the HTTP status."""

    status = 400

    def __init__(self, message: str, *, details: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []


class Invalid(LedgerError):
    status = 400


class NotFound(LedgerError):
    status = 404


class Conflict(LedgerError):
    status = 409

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


def invalid(field_name: str, message: str) -> Invalid:
    """A 400 about one field: the message names it, and `details` carries it for machines."""
    return Invalid(f"{field_name}: {message}", details=[{"field": field_name, "message": message}])


def _choice(field_name: str, value: object, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        return_values = ", ".join(allowed)
        raise invalid(field_name, f"{value!r} is not one of: {return_values}")
    return value


def _text(field_name: str, value: object, *, required: bool = False, max_length: int | None = None) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise invalid(field_name, "must be a string")
    try:
        check_text(value)
    except InvalidValue as exc:
        raise invalid(field_name, str(exc)) from exc
    if required and not value.strip():
        raise invalid(field_name, "must not be empty")
    if max_length is not None and len(value) > max_length:
        raise invalid(field_name, f"must be at most {max_length} characters, got {len(value)}")
    return value


def _agent_name(value: object, field_name: str = "agent_name") -> str:
    if not isinstance(value, str):
        raise invalid(field_name, "must be a string")
    try:
        return clean_agent_name(value)
    except InvalidValue as exc:
        raise invalid(field_name, str(exc)) from exc


def _tags(value: object) -> list[str]:
    if value is not None and not isinstance(value, str | list | tuple):
        raise invalid("tags", "must be a comma-separated string or a list of strings")
    try:
        return normalize_tags(value)
    except InvalidValue as exc:
        raise invalid("tags", str(exc)) from exc


def _slug(value: object) -> str:
    if not isinstance(value, str):
        raise invalid("slug", "must be a string")
    try:
        return require_slug(value)
    except InvalidValue as exc:
        raise invalid("slug", str(exc)) from exc


def content_sha256(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# Side effects after commit


def _audit(
    *,
    project: Project,
    actor: str,
    via: str,
    action: str,
    obj: InboxEntry | Decision | AgentMemory | Session,
    from_state: str = "",
    to_state: str = "",
    detail: dict[str, Any] | None = None,
) -> None:
    AuditEvent.objects.create(
        project=project,
        actor=actor[:150],
        via=via,
        action=action,
        object_type=type(obj).__name__.lower(),
        object_id=obj.pk,
        from_state=from_state,
        to_state=to_state,
        detail=detail or {},
    )


def _mirror_changed(project: Project) -> None:
    """The files of this project's workspace are out of date: export once the write commits."""
    if not settings.CANON_EXPORT_ON_WRITE or not project.workspace:
        return
    project_id = project.pk
    transaction.on_commit(lambda: _export_soon(project_id), robust=True)


def _export_soon(project_id: int) -> None:
    from ledger import mirror

    mirror.export_soon(project_id)


# ---------------------------------------------------------------------------------------------
# Projects, agents and tokens


def project_create_or_update(
    *,
    slug: str,
    name: str | None = None,
    workspace: str | None = None,
    coordinator: str | None = None,
    squad_type: str | None = None,
) -> tuple[Project, bool]:
    clean_slug = _slug(slug)
    if clean_slug != slug:
        raise invalid("slug", f"use lower-case letters, digits and '-' only (for example {clean_slug!r})")
    defaults: dict[str, Any] = {}
    if name is not None:
        defaults["name"] = _text("name", name, required=True, max_length=200)
    if workspace is not None:
        defaults["workspace"] = _text("workspace", workspace, max_length=1024)
    if coordinator is not None:
        defaults["coordinator_agent"] = _agent_name(coordinator, "coordinator")
    if squad_type is not None:
        defaults["squad_type"] = _choice("squad_type", squad_type, DecisionType.values)
    with transaction.atomic():
        project = Project.objects.select_for_update().filter(slug=clean_slug).first()
        if project is None:
            defaults.setdefault("name", clean_slug)
            try:
                with transaction.atomic():
                    return Project.objects.create(slug=clean_slug, **defaults), True
            except IntegrityError:
                project = Project.objects.select_for_update().get(slug=clean_slug)
        for key, value in defaults.items():
            setattr(project, key, value)
        project.save()
        return project, False


def agent_get_or_create(*, project: Project, name: str) -> Agent:
    """The project's agent with this name in any case or width; created, spelled as given, when new.

    A new name that looks like an existing agent's (same UTS #39 skeleton, other key: `Alice` with a
    Cyrillic `A` beside `Alice`) is a Conflict that names the existing agent: nobody can pose as
    another agent by spelling its name with look-alike letters.
    """
    display = _agent_name(name)
    try:
        key = agent_key(display)
        skeleton = agent_skeleton(key)
    except InvalidValue as exc:
        raise invalid("agent_name", str(exc)) from exc
    agent = Agent.objects.filter(project=project, key=key).first()
    if agent is not None:
        return agent
    try:
        with transaction.atomic():
            # New agents of a project are created one at a time, so two look-alikes arriving together
            # cannot both pass the skeleton check; the unique key still settles exact duplicates.
            Project.objects.select_for_update().values_list("pk").get(pk=project.pk)
            twin = Agent.objects.filter(project=project, skeleton=skeleton).exclude(key=key).first()
            if twin is not None:
                raise Conflict(
                    f"agent name {display!r} looks like the existing agent {twin.name!r}; "
                    "use that name or a clearly different one"
                )
            return Agent.objects.create(project=project, key=key, name=display, skeleton=skeleton)
    except IntegrityError:
        return Agent.objects.get(project=project, key=key)


def token_issue(
    *, project: Project, role: str, agent_name: str | None = None, label: str = ""
) -> tuple[ApiToken, str]:
    """A new bearer token. Returns the row and the secret; only the secret's hash is stored."""
    role = _choice("role", role, TokenRole.values)
    if role == TokenRole.AGENT and not agent_name:
        raise invalid("agent", "an agent token needs an agent name")
    agent_name = agent_name or ""
    secret = "canon_" + secrets.token_urlsafe(32)
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=agent_name) if role == TokenRole.AGENT else None
        token = ApiToken.objects.create(
            project=project,
            role=role,
            agent=agent,
            token_hash=hash_token(secret),
            prefix=secret[:12],
            label=_text("label", label, max_length=200),
        )
    return token, secret


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# Inbox


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
) -> SubmitResult:
    """Propose an entry (SPEC §2 "Inbox submission"): never overwrites another agent's proposal."""
    name = _agent_name(agent_name)
    base = _slug(slug)
    fields = {
        "type": _choice("type", type, EntryType.values),
        "title": _text("title", title, max_length=TITLE_MAX_LENGTH).strip(),
        "content": _text("content", content, required=True),
        "rationale": _text("rationale", rationale),
        "tags": _tags(tags),
        "importance": _choice("importance", importance or Importance.MEDIUM, Importance.values),
        "run_id": _text("run_id", run_id, max_length=RUN_ID_MAX_LENGTH).strip(),
    }
    source = _choice("source", source, Source.values)
    for _attempt in range(SUBMIT_ATTEMPTS):
        try:
            with transaction.atomic():
                agent = agent_get_or_create(project=project, name=name)
                result = _place_entry(project=project, agent=agent, base=base, fields=fields, source=source)
                _mirror_changed(project)
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
    type: str,
    content: str,
    title: str = "",
    rationale: str = "",
    tags: str | Iterable[str] | None = None,
    importance: str | None = None,
    run_id: str = "",
    file: str = "",
    created_at: datetime | None = None,
) -> InboxEntry:
    """A pending entry from a file in the workspace inbox, only if the project never had this slug.

    Union semantics: existing rows are never changed; a slug taken meanwhile is a Conflict. `file` is
    the inbox file's name, which stays the entry's file; `created_at` the date the file gives.
    """
    name = _agent_name(agent_name)
    if not isinstance(slug, str) or not normalize_entry_slug(slug):
        raise invalid("slug", f"{slug!r} has no letters or digits; use something like 'use-postgres'")
    fields = {
        "slug": normalize_entry_slug(slug),
        "type": _choice("type", type, EntryType.values),
        "title": _text("title", title, max_length=TITLE_MAX_LENGTH).strip(),
        "content": _text("content", content, required=True),
        "rationale": _text("rationale", rationale),
        "tags": _tags(tags),
        "importance": _choice("importance", importance or Importance.MEDIUM, Importance.values),
        "run_id": _text("run_id", run_id, max_length=RUN_ID_MAX_LENGTH).strip(),
    }
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
    segment = agent_segment(agent.name)
    prefix = f"{base}--{segment}"
    # One read for the slug and every de-collided form of it for this agent's segment.
    taken = {
        entry.slug: entry
        for entry in InboxEntry.objects.filter(project=project, slug=base)
        | InboxEntry.objects.filter(project=project, slug__startswith=prefix)
    }
    for candidate in _decollided(base, segment):
        entry = taken.get(candidate)
        if entry is None:
            with transaction.atomic():
                created = InboxEntry.objects.create(
                    project=project, agent=agent, slug=candidate, source=source, **fields
                )
            return SubmitResult(entry=created, created=True)
        if entry.agent_id == agent.pk:
            return SubmitResult(entry=_update_pending(entry, fields), created=False)
    raise Conflict(f"no free slug left for {base!r}; choose another slug")


def _update_pending(entry: InboxEntry, fields: dict[str, Any]) -> InboxEntry:
    """A retry by the entry's own agent: update in place while pending, never reopen a decided one."""
    updated = InboxEntry.objects.filter(pk=entry.pk, status=EntryStatus.PENDING).update(
        updated_at=timezone.now(), **fields
    )
    if not updated:
        entry.refresh_from_db(fields=["status"])
        raise Conflict(f"entry {entry.slug!r} is already {entry.status}; propose it again under a new slug")
    entry.refresh_from_db()
    return entry


def _locked_entry(project: Project, entry_id: int) -> InboxEntry:
    entry = (
        InboxEntry.objects.select_for_update(of=("self",))
        .select_related("agent")
        .filter(project=project, pk=entry_id)
        .first()
    )
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
    _audit(
        project=project,
        actor=by,
        via=via,
        action="merge" if merged else "reject",
        obj=entry,
        from_state=EntryStatus.PENDING,
        to_state=status,
        detail=detail,
    )
    _mirror_changed(project)
    return entry


def entry_merge(*, project: Project, entry_id: int, by: str, via: str = "api") -> InboxEntry:
    """Merge a pending entry: a decision for decision types, a memory for the others. All or nothing."""
    with transaction.atomic():
        entry = _locked_entry(project, entry_id)
        _require_pending(entry)
        link: dict[str, Any]
        if entry.type in DECISION_ENTRY_TYPES:
            decision = _decision_insert(
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
            memory = _memory_insert(
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
    reason = _text("reason", reason, max_length=10_000).strip()
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


# ---------------------------------------------------------------------------------------------
# Decisions


def _decision_insert(
    *,
    project: Project,
    agent: Agent,
    type: str,
    title: str,
    content: str,
    rationale: str,
    tags: list[str],
    source: str = Source.COORDINATOR,
) -> Decision:
    decision = Decision(
        project=project,
        agent=agent,
        type=type,
        title=title,
        content=content,
        rationale=rationale,
        tags=tags,
        source=source,
        status=DecisionStatus.ACTIVE,
        status_changed_at=timezone.now(),
    )
    decision.tokens = count_tokens(context.decision_block(decision))
    decision.save()
    return decision


def _locked_decision(project: Project, decision_id: object, field_name: str | None = None) -> Decision:
    decision = None
    if isinstance(decision_id, int) and not isinstance(decision_id, bool):
        decision = (
            Decision.objects.select_for_update(of=("self",))
            .select_related("agent")
            .filter(project=project, pk=decision_id)
            .first()
        )
    if decision is None:
        message = f"no decision {decision_id} in project {project.slug}"
        if field_name:
            raise invalid(field_name, message)
        raise NotFound(message)
    return decision


def decision_create(
    *,
    project: Project,
    agent_name: str,
    type: str,
    title: str,
    content: str,
    rationale: str = "",
    tags: str | Iterable[str] | None = None,
    supersedes: Sequence[int] = (),
    by: str,
    via: str = "api",
) -> Decision:
    """Create an active decision, optionally superseding one or more active ones in the same step."""
    name = _agent_name(agent_name)
    fields: dict[str, Any] = {
        "type": _choice("type", type, DecisionType.values),
        "title": _text("title", title, required=True, max_length=TITLE_MAX_LENGTH).strip(),
        "content": _text("content", content, required=True),
        "rationale": _text("rationale", rationale),
        "tags": _tags(tags),
    }
    if not isinstance(supersedes, list | tuple) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in supersedes
    ):
        raise invalid("supersedes", "must be a list of decision ids")
    with transaction.atomic():
        olds = [_locked_decision(project, old_id, "supersedes") for old_id in dict.fromkeys(supersedes)]
        for old in olds:
            _require_active(old, "supersede")
        agent = agent_get_or_create(project=project, name=name)
        decision = _decision_insert(project=project, agent=agent, **fields)
        _audit(
            project=project, actor=by, via=via, action="create", obj=decision, to_state=DecisionStatus.ACTIVE
        )
        for old in olds:
            _supersede(project=project, old=old, new=decision, by=by, via=via)
        _mirror_changed(project)
        return decision


def _require_active(decision: Decision, verb: str) -> None:
    if decision.status != DecisionStatus.ACTIVE:
        raise Conflict(f"cannot {verb} decision {decision.pk}: it is {decision.status}, not active")


def _supersede(*, project: Project, old: Decision, new: Decision, by: str, via: str) -> None:
    if old.pk == new.pk:
        raise invalid("superseded_by_id", "a decision cannot supersede itself")
    if new.status != DecisionStatus.ACTIVE:
        raise Conflict(f"decision {new.pk} is {new.status}; only an active decision can replace another")
    # Walk the replacement's own chain: reaching `old` would close a cycle.
    seen: set[int] = set()
    cursor: int | None = new.superseded_by_id
    while cursor is not None and cursor not in seen:
        if cursor == old.pk:
            raise invalid(
                "superseded_by_id", f"decision {new.pk} already descends from {old.pk}: that is a cycle"
            )
        seen.add(cursor)
        cursor = Decision.objects.filter(pk=cursor).values_list("superseded_by_id", flat=True).first()
    now = timezone.now()
    won = Decision.objects.filter(pk=old.pk, status=DecisionStatus.ACTIVE).update(
        status=DecisionStatus.SUPERSEDED, superseded_by=new, status_changed_at=now, updated_at=now
    )
    if not won:
        raise Conflict(f"cannot supersede decision {old.pk}: it is no longer active")
    old.refresh_from_db()
    _audit(
        project=project,
        actor=by,
        via=via,
        action="supersede",
        obj=old,
        from_state=DecisionStatus.ACTIVE,
        to_state=DecisionStatus.SUPERSEDED,
        detail={"superseded_by_id": new.pk},
    )


def decision_supersede(
    *, project: Project, decision_id: int, superseded_by_id: int, by: str, via: str = "api"
) -> Decision:
    with transaction.atomic():
        old = _locked_decision(project, decision_id)
        new = _locked_decision(project, superseded_by_id, "superseded_by_id")
        if old.pk == new.pk:
            raise invalid("superseded_by_id", "a decision cannot supersede itself")
        _require_active(old, "supersede")
        _supersede(project=project, old=old, new=new, by=by, via=via)
        _mirror_changed(project)
        return old


def decision_archive(*, project: Project, decision_id: int, by: str, via: str = "api") -> Decision:
    with transaction.atomic():
        decision = _locked_decision(project, decision_id)
        _require_active(decision, "archive")
        now = timezone.now()
        Decision.objects.filter(pk=decision.pk, status=DecisionStatus.ACTIVE).update(
            status=DecisionStatus.ARCHIVED, status_changed_at=now, updated_at=now
        )
        decision.refresh_from_db()
        _audit(
            project=project,
            actor=by,
            via=via,
            action="archive",
            obj=decision,
            from_state=DecisionStatus.ACTIVE,
            to_state=DecisionStatus.ARCHIVED,
        )
        _mirror_changed(project)
        return decision


def decision_edit(
    *,
    project: Project,
    decision_id: int,
    by: str,
    via: str = "api",
    title: str | None = None,
    content: str | None = None,
    rationale: str | None = None,
) -> Decision:
    """Change a decision's text; the previous text is kept as an immutable revision."""
    changes: dict[str, str] = {}
    if title is not None:
        changes["title"] = _text("title", title, required=True, max_length=TITLE_MAX_LENGTH).strip()
    if content is not None:
        changes["content"] = _text("content", content, required=True)
    if rationale is not None:
        changes["rationale"] = _text("rationale", rationale)
    with transaction.atomic():
        decision = _locked_decision(project, decision_id)
        changes = {k: v for k, v in changes.items() if getattr(decision, k) != v}
        if not changes:
            return decision
        DecisionRevision.objects.create(
            decision=decision,
            title=decision.title,
            content=decision.content,
            rationale=decision.rationale,
            changed_by=by[:150],
        )
        for key, value in changes.items():
            setattr(decision, key, value)
        decision.tokens = count_tokens(context.decision_block(decision))
        decision.save(update_fields=[*changes, "tokens", "updated_at"])
        _audit(
            project=project,
            actor=by,
            via=via,
            action="edit",
            obj=decision,
            detail={"fields": sorted(changes)},
        )
        _mirror_changed(project)
        return decision


def decision_update(
    *,
    project: Project,
    decision_id: int,
    by: str,
    via: str = "api",
    title: str | None = None,
    content: str | None = None,
    rationale: str | None = None,
    status: str | None = None,
    superseded_by_id: int | None = None,
) -> Decision:
    """PATCH semantics: text edits and at most one status change, together or not at all."""
    if status is not None:
        _choice("status", status, DecisionStatus.values)
    if status == DecisionStatus.SUPERSEDED and superseded_by_id is None:
        raise invalid("superseded_by_id", "required when status is 'superseded'")
    if superseded_by_id is not None and status not in (None, DecisionStatus.SUPERSEDED):
        raise invalid("status", "superseded_by_id goes with status 'superseded' (or no status)")
    with transaction.atomic():
        decision = decision_edit(
            project=project,
            decision_id=decision_id,
            by=by,
            via=via,
            title=title,
            content=content,
            rationale=rationale,
        )
        if superseded_by_id is not None:
            decision = decision_supersede(
                project=project, decision_id=decision.pk, superseded_by_id=superseded_by_id, by=by, via=via
            )
        elif status == DecisionStatus.ARCHIVED:
            decision = decision_archive(project=project, decision_id=decision.pk, by=by, via=via)
        elif status == DecisionStatus.ACTIVE and decision.status != DecisionStatus.ACTIVE:
            raise Conflict(f"decision {decision.pk} is {decision.status}; it cannot become active again")
        return decision


# ---------------------------------------------------------------------------------------------
# Memory


def _memory_insert(
    *,
    project: Project,
    agent: Agent,
    type: str,
    importance: str,
    content: str,
    tags: list[str],
    session_id: str,
    source: str,
    injected_by: str,
) -> AgentMemory:
    return AgentMemory.objects.create(
        project=project,
        agent=agent,
        type=type,
        importance=importance,
        importance_rank=IMPORTANCE_RANK[Importance(importance)],
        content=content,
        tags=tags,
        tag_index=tag_index(tags),
        cross_team="cross-team" in tags,
        session_id=session_id,
        source=source,
        injected_by=injected_by[:150],
        content_sha256=content_sha256(content),
        tokens=count_tokens(content),
    )


def memory_record(
    *,
    project: Project,
    agent_name: str,
    type: str,
    content: str,
    importance: str | None = None,
    tags: str | Iterable[str] | None = None,
    session_id: str = "",
    source: str = Source.AGENT,
    injected_by: str = "",
) -> AgentMemory:
    """Record a memory for an agent. A coordinator's injection says who injected it."""
    name = _agent_name(agent_name)
    values: dict[str, Any] = {
        "type": _choice("type", type, MemoryType.values),
        "importance": _choice("importance", importance or Importance.MEDIUM, Importance.values),
        "content": _text("content", content, required=True),
        "tags": _tags(tags),
        "session_id": _text("session_id", session_id, max_length=SESSION_ID_MAX_LENGTH).strip(),
        "source": _choice("source", source, Source.values),
        "injected_by": _text("injected_by", injected_by, max_length=150),
    }
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=name)
        memory = _memory_insert(project=project, agent=agent, **values)
        _mirror_changed(project)
        return memory


def memory_propose(
    *,
    project: Project,
    agent_name: str,
    type: str,
    content: str,
    importance: str | None = None,
    tags: str | Iterable[str] | None = None,
    run_id: str = "",
) -> SubmitResult:
    """A memory an agent wants every other agent to see (`cross-team`): what one agent writes reaches
    another only through a person, so it becomes a pending inbox entry of the same type, importance,
    tags and content, and a memory when a coordinator merges it. A retry updates the same entry."""
    kind = _choice("type", type, MemoryType.values)
    if kind not in PRIVATE_ENTRY_TYPES:
        raise invalid("type", f"a {kind} memory stays with its agent; share a learning, pattern or update")
    text = _text("content", content, required=True)
    words = normalize_slug(" ".join(text.split()[:8]))[:60].strip("-")
    return entry_submit(
        project=project,
        agent_name=agent_name,
        slug=f"{kind}-{words}" if words else kind,
        type=kind,
        title=_one_line(text, 80),
        content=text,
        tags=tags,
        importance=importance,
        run_id=run_id,
    )


def memory_edit(
    *,
    project: Project,
    memory_id: int,
    by: str,
    via: str = "api",
    content: str | None = None,
    importance: str | None = None,
    tags: str | Iterable[str] | None = None,
    status: str | None = None,
    agent: Agent | None = None,
) -> AgentMemory:
    """Edit content, importance, tags or status (`archived` replaces deleting). `agent` scopes the lookup."""
    changes: dict[str, Any] = {}
    if content is not None:
        text = _text("content", content, required=True)
        changes.update(content=text, content_sha256=content_sha256(text), tokens=count_tokens(text))
    if importance is not None:
        level = _choice("importance", importance, Importance.values)
        changes.update(importance=level, importance_rank=IMPORTANCE_RANK[Importance(level)])
    if tags is not None:
        clean = _tags(tags)
        changes.update(tags=clean, tag_index=tag_index(clean), cross_team="cross-team" in clean)
    if status is not None:
        changes["status"] = _choice("status", status, MemoryStatus.values)
    with transaction.atomic():
        qs = (
            AgentMemory.objects.select_for_update(of=("self",))
            .select_related("agent")
            .filter(project=project)
        )
        if agent is not None:
            qs = qs.filter(agent=agent)
        memory = qs.filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"no memory {memory_id} for this agent in project {project.slug}")
        changes = {k: v for k, v in changes.items() if getattr(memory, k) != v}
        if not changes:
            return memory
        before = memory.status
        for key, value in changes.items():
            setattr(memory, key, value)
        memory.save(update_fields=[*changes, "updated_at"])
        action = "archive" if changes.get("status") == MemoryStatus.ARCHIVED else "edit"
        _audit(
            project=project,
            actor=by,
            via=via,
            action=action,
            obj=memory,
            from_state=before,
            to_state=memory.status,
            detail={"fields": sorted(changes)},
        )
        _mirror_changed(project)
        return memory


def memory_archive(*, project: Project, memory_id: int, by: str, via: str = "api") -> AgentMemory:
    return memory_edit(project=project, memory_id=memory_id, by=by, via=via, status=MemoryStatus.ARCHIVED)


# ---------------------------------------------------------------------------------------------
# Sessions


class _Unset:
    pass


UNSET: Any = _Unset()


def _issues(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid("active_issues", "must be a list of strings")
    try:
        for item in value:
            check_text(item, "each issue")
    except InvalidValue as exc:
        raise invalid("active_issues", str(exc)) from exc
    return [item.strip() for item in value if item.strip()]


def _state(value: Any) -> Any:
    """`serialized_state`: any JSON value the database can store (no NUL, no lone surrogate, no NaN)."""
    try:
        return check_json(value)
    except InvalidValue as exc:
        raise invalid("serialized_state", str(exc)) from exc


def _session_tokens(session: Session) -> int:
    return count_tokens(context.session_block(session))


def session_start(
    *,
    project: Project,
    session_id: str | None = None,
    focus_area: str = "",
    active_issues: list[str] | None = None,
    summary: str = "",
    serialized_state: Any = None,
) -> Session:
    """Open a session; every other open session of the project is closed in the same transaction."""
    if session_id is None or session_id == "":
        session_id = f"session-{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    session = Session(
        project=project,
        session_id=_text("session_id", session_id, required=True, max_length=SESSION_ID_MAX_LENGTH).strip(),
        focus_area=_text("focus_area", focus_area),
        active_issues=_issues(active_issues or []),
        summary=_text("summary", summary),
        serialized_state=_state(serialized_state),
    )
    session.tokens = _session_tokens(session)
    for _attempt in range(SUBMIT_ATTEMPTS):
        try:
            with transaction.atomic():
                Session.objects.filter(project=project, ended_at__isnull=True).update(ended_at=timezone.now())
                session.pk = None
                session.save(force_insert=True)
                _mirror_changed(project)
                return session
        except IntegrityError:
            if Session.objects.filter(project=project, session_id=session.session_id).exists():
                raise Conflict(f"session {session.session_id!r} already exists in this project") from None
            # Another session opened between our close and our insert: close it too and retry.
    raise Conflict("sessions are being started concurrently; retry", retryable=True)


def session_update_current(
    *,
    project: Project,
    focus_area: str | None = None,
    active_issues: list[str] | None = None,
    summary: str | None = None,
    summary_append: str | None = None,
    serialized_state: Any = UNSET,
    end: bool = False,
) -> Session:
    changes: dict[str, Any] = {}
    if focus_area is not None:
        changes["focus_area"] = _text("focus_area", focus_area)
    if active_issues is not None:
        changes["active_issues"] = _issues(active_issues)
    if summary is not None:
        changes["summary"] = _text("summary", summary)
    append = _text("summary_append", summary_append).strip() if summary_append is not None else ""
    if serialized_state is not UNSET:
        changes["serialized_state"] = _state(serialized_state)
    with transaction.atomic():
        session = Session.objects.select_for_update().filter(project=project, ended_at__isnull=True).first()
        if session is None:
            raise NotFound("no open session in this project; start one with POST /sessions")
        for key, value in changes.items():
            setattr(session, key, value)
        if append:
            session.summary = f"{session.summary}\n{append}" if session.summary else append
        if end:
            session.ended_at = timezone.now()
        session.tokens = _session_tokens(session)
        session.save()
        _mirror_changed(project)
        return session


def session_append_summary(*, project: Project, line: str) -> Session | None:
    """Add a line to the open session's summary, if a session is open (used by the Scribe)."""
    try:
        return session_update_current(project=project, summary_append=line)
    except NotFound:
        return None


# ---------------------------------------------------------------------------------------------
# Adoption: a team's own files taken into the ledger, their text kept verbatim


@dataclass(frozen=True)
class Adopted:
    """One decision block or history entry read from a team file, as the mirror parsed it."""

    markdown: str
    content: str
    type: str
    author: str = ""
    title: str = ""
    date: datetime | None = None
    status: str = DecisionStatus.ACTIVE


ADOPTED_AUTHOR_FALLBACK = "unknown"


def adopted_agent_name(raw: str) -> str:
    """An author as written in a team file, made a valid agent name (`unknown` when nothing is left)."""
    name = "".join(ch for ch in raw if ch.isprintable()).strip()[:AGENT_NAME_MAX_LENGTH].strip()
    return name or ADOPTED_AUTHOR_FALLBACK


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _agents_by_name(project: Project, names: Iterable[str]) -> dict[str, Agent]:
    return {name: agent_get_or_create(project=project, name=name) for name in sorted(set(names))}


def _checked_adopted(items: Sequence[Adopted]) -> None:
    for item in items:
        try:
            check_text(item.markdown, "the file")
        except InvalidValue as exc:
            raise invalid("file", str(exc)) from exc


def _adopted_type(item: Adopted, project: Project, *, boundaries: bool) -> str:
    wanted = item.type if item.type in DecisionType.values else project.squad_type
    if not boundaries and wanted in BOUNDARY_TYPES:
        return DecisionType.TECHNICAL
    return wanted


def decisions_adopt(
    *, project: Project, items: Sequence[Adopted], origin: str, boundaries: bool = True
) -> list[Decision]:
    """One decision per block of a team's decision log, all or none. The block's text is kept verbatim
    (`markdown`), its date becomes the creation time; a type the block does not name is the project's
    `squad_type`.

    With `boundaries=False` (blocks someone added to a log after a coordinator adopted it), no block
    becomes an architectural or scope decision by itself: those are typed `technical` until a coordinator
    retypes them, so text written into a file never reaches every agent's boundaries unreviewed.
    """
    _checked_adopted(items)
    now = timezone.now()
    with transaction.atomic():
        agents = _agents_by_name(project, (adopted_agent_name(item.author) for item in items))
        decisions = []
        for item in items:
            status = item.status if item.status in DecisionStatus.values else DecisionStatus.ACTIVE
            decision = Decision(
                project=project,
                agent=agents[adopted_agent_name(item.author)],
                type=_adopted_type(item, project, boundaries=boundaries),
                title=_one_line(item.title, TITLE_MAX_LENGTH) or _one_line(item.content, 80) or "Untitled",
                content=item.content.strip() or item.title or item.markdown.strip(),
                status=status,
                status_changed_at=item.date or now,
                source=Source.IMPORT,
                markdown=item.markdown,
                origin=origin[:1024],
                created_at=item.date or now,
            )
            decision.tokens = count_tokens(context.decision_block(decision))
            decisions.append(decision)
        Decision.objects.bulk_create(decisions, batch_size=500)
        _audit_many(project=project, objects=decisions, action="adopt", detail={"file": origin})
        return decisions


def memories_adopt(
    *, project: Project, agent_name: str, items: Sequence[Adopted], origin: str
) -> list[AgentMemory]:
    """One memory per entry of an agent's history file, all or none, its text kept verbatim."""
    _checked_adopted(items)
    now = timezone.now()
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=adopted_agent_name(agent_name))
        memories = [
            AgentMemory(
                project=project,
                agent=agent,
                type=item.type if item.type in MemoryType.values else MemoryType.LEARNING,
                importance=Importance.MEDIUM,
                importance_rank=IMPORTANCE_RANK[Importance.MEDIUM],
                content=item.content.strip() or item.markdown.strip(),
                tags=[],
                tag_index="",
                source=Source.IMPORT,
                markdown=item.markdown,
                origin=origin[:1024],
                content_sha256=content_sha256(item.content.strip() or item.markdown.strip()),
                tokens=count_tokens(item.content.strip() or item.markdown.strip()),
                created_at=item.date or now,
            )
            for item in items
        ]
        AgentMemory.objects.bulk_create(memories, batch_size=500)
        _audit_many(project=project, objects=memories, action="adopt", detail={"file": origin})
        return memories


def _audit_many(
    *, project: Project, objects: Sequence[Decision | AgentMemory], action: str, detail: dict[str, Any]
) -> None:
    AuditEvent.objects.bulk_create(
        [
            AuditEvent(
                project=project,
                actor="canon",
                via="import",
                action=action,
                object_type=type(obj).__name__.lower(),
                object_id=obj.pk,
                to_state=obj.status,
                detail=detail,
            )
            for obj in objects
        ],
        batch_size=500,
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


def decisions_retype(
    *, project: Project, decision_ids: Sequence[int], type: str, by: str, via: str = "dashboard"
) -> list[Decision]:
    """Give several decisions one type (an adopted log is typed `technical` until someone looks)."""
    new_type = _choice("type", type, DecisionType.values)
    with transaction.atomic():
        decisions = list(
            Decision.objects.select_for_update(of=("self",))
            .select_related("agent")
            .filter(project=project, pk__in=list(decision_ids))
            .exclude(type=new_type)
        )
        for decision in decisions:
            before = decision.type
            decision.type = new_type
            decision.tokens = count_tokens(context.decision_block(decision))
            decision.save(update_fields=["type", "tokens", "updated_at"])
            _audit(
                project=project,
                actor=by,
                via=via,
                action="retype",
                obj=decision,
                detail={"from": before, "to": new_type},
            )
        if decisions:
            _mirror_changed(project)
        return decisions
