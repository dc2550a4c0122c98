"""Decision routes: read by every agent, written by coordinators (docs/ledger.md, docs/api.md)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Status

from ledger import selectors, services
from ledger.api.base import LIMIT, OFFSET, ApiRefusal, api, checked_filter, page, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.api.shapes import (
    DecisionCreateIn,
    DecisionOut,
    DecisionPatchIn,
    agent_param,
    decision_out,
    filter_param,
)
from ledger.models import Decision, DecisionStatus, DecisionType, Project

DECISIONS = "/projects/{project}/decisions"


def decision_rows(qs: QuerySet[Decision]) -> QuerySet[Decision]:
    """Everything `decision_out` reads, in a fixed number of queries."""
    return qs.select_related("agent", "source_entry").prefetch_related("supersedes", "revisions")


def _decision(project: Project, decision_id: int) -> dict[str, Any]:
    decision = decision_rows(Decision.objects.filter(project=project, pk=decision_id)).first()
    if decision is None:
        raise ApiRefusal(404, f"no decision {decision_id} in this project")
    return decision_out(decision)


@api.get(DECISIONS, response={200: list[DecisionOut], **ERRORS}, tags=["decisions"])
def list_decisions(
    request: HttpRequest,
    project: str,
    response: HttpResponse,
    status: str | None = filter_param(DecisionStatus.values, all_ok=True),
    type: str | None = filter_param(DecisionType.values),
    agent: str | None = agent_param(),
    limit: int = LIMIT,
    offset: int = OFFSET,
) -> list[dict[str, Any]]:
    """Decisions newest first. `status` defaults to `active`; `status=all` lists every status."""
    caller = project_caller(request, project)
    qs = selectors.decisions(
        caller.project,
        status=checked_filter("status", status, DecisionStatus.values, all_ok=True) or DecisionStatus.ACTIVE,
        type=checked_filter("type", type, DecisionType.values),
        agent=agent,
    )
    return [decision_out(d) for d in page(decision_rows(qs), response, limit, offset)]


@api.get(DECISIONS + "/{decision_id}", response={200: DecisionOut, **ERRORS}, tags=["decisions"])
def get_decision(request: HttpRequest, project: str, decision_id: int) -> dict[str, Any]:
    caller = project_caller(request, project)
    return _decision(caller.project, decision_id)


@api.post(DECISIONS, response={201: DecisionOut, **WRITE_ERRORS}, tags=["decisions"])
def create_decision(request: HttpRequest, project: str, payload: DecisionCreateIn) -> Status:
    """Create an active decision; `supersedes` lists active decisions it replaces in the same step."""
    caller = project_caller(request, project)
    caller.require_coordinator()
    decision = services.decision_create(
        project=caller.project,
        agent_name=payload.agent_name,
        type=payload.type,
        title=payload.title,
        content=payload.content,
        rationale=payload.rationale,
        tags=payload.tags,
        supersedes=payload.supersedes,
        by=caller.name,
        via="api",
    )
    return Status(201, _decision(caller.project, decision.pk))


@api.patch(DECISIONS + "/{decision_id}", response={200: DecisionOut, **WRITE_ERRORS}, tags=["decisions"])
def patch_decision(
    request: HttpRequest, project: str, decision_id: int, payload: DecisionPatchIn
) -> dict[str, Any]:
    """Edit text (a revision keeps the old text) and/or change status: archive, or supersede."""
    caller = project_caller(request, project)
    caller.require_coordinator()
    services.decision_update(
        project=caller.project,
        decision_id=decision_id,
        by=caller.name,
        via="api",
        title=payload.title,
        content=payload.content,
        rationale=payload.rationale,
        status=payload.status,
        superseded_by_id=payload.superseded_by_id,
    )
    return _decision(caller.project, decision_id)
