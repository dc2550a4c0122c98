"""Decision routes: read by every agent, written by coordinators (docs/ledger.md, docs/api.md)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger import services
from ledger.api.base import ApiRefusal, api, listed, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.api.shapes import DecisionCreateIn, DecisionOut, DecisionPatchIn, DecisionQuery, Paging
from ledger.filters import DecisionFilter
from ledger.models import Decision, Project

DECISIONS = "/projects/{project}/decisions"


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


@api.get(DECISIONS, response={200: list[DecisionOut], **ERRORS}, tags=["decisions"])
def list_decisions(
    request: HttpRequest,
    project: str,
    response: HttpResponse,
    filters: Query[DecisionQuery],
    paging: Query[Paging],
) -> list[Decision]:
    """Decisions newest first. `status` defaults to `active`; `status=all` lists every status."""
    caller = project_caller(request, project)
    return listed(DecisionFilter, decision_rows(caller.project), filters, paging, response)


@api.get(DECISIONS + "/{decision_id}", response={200: DecisionOut, **ERRORS}, tags=["decisions"])
def get_decision(request: HttpRequest, project: str, decision_id: int) -> Decision:
    caller = project_caller(request, project)
    return project_decision(caller.project, decision_id)


@api.post(DECISIONS, response={201: DecisionOut, **WRITE_ERRORS}, tags=["decisions"])
def create_decision(request: HttpRequest, project: str, payload: DecisionCreateIn) -> Status:
    """Create an active decision; `supersedes` lists active decisions it replaces in the same step."""
    caller = project_caller(request, project, coordinator=True)
    decision = services.decision_create(
        project=caller.project, **payload.model_dump(), by=caller.name, via="api"
    )
    return Status(201, project_decision(caller.project, decision.pk))


@api.patch(DECISIONS + "/{decision_id}", response={200: DecisionOut, **WRITE_ERRORS}, tags=["decisions"])
def patch_decision(
    request: HttpRequest, project: str, decision_id: int, payload: DecisionPatchIn
) -> Decision:
    """Edit text (a revision keeps the old text) and/or change status: archive, or supersede."""
    caller = project_caller(request, project, coordinator=True)
    services.decision_update(
        project=caller.project, decision_id=decision_id, by=caller.name, via="api", **payload.model_dump()
    )
    return project_decision(caller.project, decision_id)
