"""Decision routes: read by every agent, written by coordinators (docs/ledger.md, docs/api.md)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger.actions.answers import DecisionOut
from ledger.actions.decisions import create_as, decision_rows, project_decision, update_as
from ledger.actions.shapes import DecisionCreateIn, DecisionPatchIn, DecisionQuery, Paging
from ledger.api.base import api, listed, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.filters import DecisionFilter
from ledger.models import Decision

DECISIONS = "/projects/{project}/decisions"


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
    decision = create_as(caller, payload)
    return Status(201, project_decision(caller.project, decision.pk))


@api.patch(DECISIONS + "/{decision_id}", response={200: DecisionOut, **WRITE_ERRORS}, tags=["decisions"])
def patch_decision(
    request: HttpRequest, project: str, decision_id: int, payload: DecisionPatchIn
) -> Decision:
    """Edit text (a revision keeps the old text) and/or change status: archive, or supersede."""
    caller = project_caller(request, project, coordinator=True)
    update_as(caller, decision_id, payload)
    return project_decision(caller.project, decision_id)
