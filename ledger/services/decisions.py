"""Decisions: created, edited (the previous text kept as a revision), superseded, archived, retyped."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from ledger.blocks import decision_block
from ledger.models import (
    Agent,
    Decision,
    DecisionRevision,
    DecisionStatus,
    DecisionType,
    Project,
    Source,
)
from ledger.services.effects import audit, workspace_changed
from ledger.services.errors import Conflict, NotFound, invalid
from ledger.services.fields import (
    CONTENT_MAX_LENGTH,
    MAX_ID,
    RATIONALE_MAX_LENGTH,
    TITLE_MAX_LENGTH,
    checked_agent_name,
    checked_choice,
    checked_tags,
    checked_text,
    checked_text_changes,
    locked,
)
from ledger.services.projects import agent_get_or_create
from ledger.tokens import count_tokens


def decision_insert(
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
    decision.tokens = count_tokens(decision_block(decision))
    decision.save()
    return decision


def _locked_decision(project: Project, decision_id: object, field_name: str | None = None) -> Decision:
    decision = None
    if isinstance(decision_id, int) and not isinstance(decision_id, bool) and 1 <= decision_id <= MAX_ID:
        decision = locked(Decision.objects.filter(project=project, pk=decision_id)).first()
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
    name = checked_agent_name(agent_name)
    fields: dict[str, Any] = {
        "type": checked_choice("type", type, DecisionType.values),
        "title": checked_text("title", title, required=True, max_length=TITLE_MAX_LENGTH).strip(),
        "content": checked_text("content", content, required=True, max_length=CONTENT_MAX_LENGTH),
        "rationale": checked_text("rationale", rationale, max_length=RATIONALE_MAX_LENGTH),
        "tags": checked_tags(tags),
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
        decision = decision_insert(project=project, agent=agent, **fields)
        audit(
            project=project, actor=by, via=via, action="create", obj=decision, to_state=DecisionStatus.ACTIVE
        )
        for old in olds:
            _supersede(project=project, old=old, new=decision, by=by, via=via)
        workspace_changed(project)
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
    audit(
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
        workspace_changed(project)
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
        audit(
            project=project,
            actor=by,
            via=via,
            action="archive",
            obj=decision,
            from_state=DecisionStatus.ACTIVE,
            to_state=DecisionStatus.ARCHIVED,
        )
        workspace_changed(project)
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
    """Change a decision's text; the previous text is kept as an immutable revision. A decision held for
    review (`Decision.held`) is held no longer: a coordinator has read it."""
    changes = checked_text_changes(title, content, rationale, title_required=True)
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
        written = []
        if decision.markdown and decision.source != Source.IMPORT:
            # A proposal merged from a team's inbox file went into the log as the file's text; once
            # edited, the log shows the edited decision in Canon's own block.
            decision.markdown = ""
            written = ["markdown"]
        if decision.held:
            decision.held = False
            written.append("held")
        decision.tokens = count_tokens(decision_block(decision))
        decision.save(update_fields=[*changes, *written, "tokens", "updated_at"])
        audit(
            project=project,
            actor=by,
            via=via,
            action="edit",
            obj=decision,
            detail={"fields": sorted(changes)},
        )
        workspace_changed(project)
        return decision


def decision_update(
    *,
    project: Project,
    decision_id: int,
    by: str,
    via: str = "api",
    status: str | None = None,
    superseded_by_id: int | None = None,
    **text: str | None,
) -> Decision:
    """PATCH semantics: text edits (`title`, `content`, `rationale`, as `decision_edit` takes them) and
    at most one status change, together or not at all."""
    if status is not None:
        checked_choice("status", status, DecisionStatus.values)
    if status == DecisionStatus.SUPERSEDED and superseded_by_id is None:
        raise invalid("superseded_by_id", "required when status is 'superseded'")
    if superseded_by_id is not None and status not in (None, DecisionStatus.SUPERSEDED):
        raise invalid("status", "superseded_by_id goes with status 'superseded' (or no status)")
    with transaction.atomic():
        decision = decision_edit(project=project, decision_id=decision_id, by=by, via=via, **text)
        if superseded_by_id is not None:
            decision = decision_supersede(
                project=project, decision_id=decision.pk, superseded_by_id=superseded_by_id, by=by, via=via
            )
        elif status == DecisionStatus.ARCHIVED:
            decision = decision_archive(project=project, decision_id=decision.pk, by=by, via=via)
        elif status == DecisionStatus.ACTIVE and decision.status != DecisionStatus.ACTIVE:
            raise Conflict(f"decision {decision.pk} is {decision.status}; it cannot become active again")
        return decision


def decisions_retype(
    *, project: Project, decision_ids: Sequence[int], type: str, by: str, via: str = "dashboard"
) -> list[Decision]:
    """Give several decisions one type (an adopted log is typed `technical` until someone looks). A
    decision held for review (`Decision.held`) is released by it, even to the type it has."""
    new_type = checked_choice("type", type, DecisionType.values)
    with transaction.atomic():
        wanted = Decision.objects.filter(project=project, pk__in=list(decision_ids)).exclude(
            type=new_type, held=False
        )
        decisions = list(locked(wanted))
        for decision in decisions:
            before = decision.type
            decision.type = new_type
            decision.held = False
            decision.tokens = count_tokens(decision_block(decision))
            decision.save(update_fields=["type", "held", "tokens", "updated_at"])
            audit(
                project=project,
                actor=by,
                via=via,
                action="retype",
                obj=decision,
                detail={"from": before, "to": new_type},
            )
        if decisions:
            workspace_changed(project)
        return decisions
