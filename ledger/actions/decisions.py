"""Decisions: read by every agent, written by coordinators (docs/ledger.md)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Prefetch, QuerySet

from ledger import services
from ledger.actions.frame import ApiRefusal, Caller
from ledger.actions.shapes import DecisionCreateIn, DecisionPatchIn
from ledger.models import Decision, Project


def decision_rows(project: Project) -> QuerySet[Decision]:
    """The project's decisions newest first, with everything `DecisionOut` reads, in a fixed number of
    queries: the agent and the source entry joined, the replaced ids and the revisions prefetched."""
    replaced = Decision.objects.only("id", "superseded_by_id").order_by()
    return (
        Decision.objects.filter(project=project)
        .select_related("agent", "source_entry")
        .prefetch_related(Prefetch("supersedes", queryset=replaced), "revisions")
        .order_by("-created_at", "-id")
    )


def project_decision(project: Project, decision_id: int) -> Decision:
    """One decision of the project, read as `decision_rows` reads them; 404 when absent."""
    decision = decision_rows(project).filter(pk=decision_id).first()
    if decision is None:
        raise ApiRefusal(404, f"no decision {decision_id} in this project")
    return decision


def create_as(caller: Caller, payload: DecisionCreateIn) -> Decision:
    """A new active decision, as a coordinator; `supersedes` lists active decisions it replaces."""
    caller.require_coordinator()
    return services.decision_create(
        project=caller.project, **payload.model_dump(), by=caller.name, via=caller.via
    )


def update_as(caller: Caller, decision_id: int, payload: DecisionPatchIn) -> Decision:
    """Edit a decision's text (a revision keeps the old) and/or archive or supersede it, as a
    coordinator, together or not at all."""
    caller.require_coordinator()
    return services.decision_update(
        project=caller.project,
        decision_id=decision_id,
        by=caller.name,
        via=caller.via,
        **payload.model_dump(),
    )


def retype_as(caller: Caller, decision_ids: Sequence[int], type: str) -> list[Decision]:
    """Give decisions one type, as a coordinator; a held decision is released by it."""
    caller.require_coordinator()
    return services.decisions_retype(
        project=caller.project, decision_ids=decision_ids, type=type, by=caller.name, via=caller.via
    )
