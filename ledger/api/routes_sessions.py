"""Session routes (docs/ledger.md, docs/api.md): at most one open session per project."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Status

from ledger import selectors, services
from ledger.api.base import LIMIT, OFFSET, ApiRefusal, api, page, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.api.shapes import SessionIn, SessionOut, SessionPatchIn, session_out
from ledger.models import Session

SESSIONS = "/projects/{project}/sessions"


@api.post(SESSIONS, response={201: SessionOut, **WRITE_ERRORS}, tags=["sessions"])
def start_session(request: HttpRequest, project: str, payload: SessionIn) -> Status:
    """Start a session; every other open session of the project is closed. 409 on a reused session_id."""
    caller = project_caller(request, project)
    session = services.session_start(
        project=caller.project,
        session_id=payload.session_id,
        focus_area=payload.focus_area,
        active_issues=payload.active_issues,
        summary=payload.summary,
        serialized_state=payload.serialized_state,
    )
    return Status(201, session_out(session))


@api.get(SESSIONS, response={200: list[SessionOut], **ERRORS}, tags=["sessions"])
def list_sessions(
    request: HttpRequest,
    project: str,
    response: HttpResponse,
    limit: int = LIMIT,
    offset: int = OFFSET,
) -> list[dict[str, Any]]:
    caller = project_caller(request, project)
    qs = Session.objects.filter(project=caller.project).order_by("-started_at", "-id")
    return [session_out(s) for s in page(qs, response, limit, offset)]


@api.get(SESSIONS + "/current", response={200: SessionOut, **ERRORS}, tags=["sessions"])
def current_session(request: HttpRequest, project: str) -> dict[str, Any]:
    caller = project_caller(request, project)
    session = selectors.open_session(caller.project)
    if session is None:
        raise ApiRefusal(404, "no open session in this project; start one with POST /sessions")
    return session_out(session)


@api.patch(SESSIONS + "/current", response={200: SessionOut, **WRITE_ERRORS}, tags=["sessions"])
def update_current_session(request: HttpRequest, project: str, payload: SessionPatchIn) -> dict[str, Any]:
    """Update the open session: `summary` replaces, `summary_append` adds a line, `end: true` closes it."""
    caller = project_caller(request, project)
    session = services.session_update_current(
        project=caller.project,
        focus_area=payload.focus_area,
        active_issues=payload.active_issues,
        summary=payload.summary,
        summary_append=payload.summary_append,
        serialized_state=(
            payload.serialized_state if "serialized_state" in payload.model_fields_set else services.UNSET
        ),
        end=payload.end,
    )
    return session_out(session)


# `path:` so that a session id with a `/` in it (any text is allowed) can be read back too.
@api.get(SESSIONS + "/{path:session_id}", response={200: SessionOut, **ERRORS}, tags=["sessions"])
def get_session(request: HttpRequest, project: str, session_id: str) -> dict[str, Any]:
    caller = project_caller(request, project)
    session = Session.objects.filter(project=caller.project, session_id=session_id).first()
    if session is None:
        raise ApiRefusal(404, f"no session {session_id!r} in this project")
    return session_out(session)
