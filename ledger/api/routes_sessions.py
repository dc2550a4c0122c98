"""Session routes (docs/ledger.md, docs/api.md): at most one open session per project."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger.actions import sessions
from ledger.actions.answers import SessionOut
from ledger.actions.shapes import Paging, SessionIn, SessionPatchIn
from ledger.api.base import api, page, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.models import Session

SESSIONS = "/projects/{project}/sessions"


@api.post(SESSIONS, response={201: SessionOut, **WRITE_ERRORS}, tags=["sessions"])
def start_session(request: HttpRequest, project: str, payload: SessionIn) -> Status:
    """Start a session; every other open session of the project is closed. 409 on a reused session_id."""
    caller = project_caller(request, project)
    return Status(201, sessions.start_as(caller, payload))


@api.get(SESSIONS, response={200: list[SessionOut], **ERRORS}, tags=["sessions"])
def list_sessions(
    request: HttpRequest, project: str, response: HttpResponse, paging: Query[Paging]
) -> list[Session]:
    caller = project_caller(request, project)
    return page(
        Session.objects.filter(project=caller.project).order_by("-started_at", "-id"), response, paging
    )


@api.get(SESSIONS + "/current", response={200: SessionOut, **ERRORS}, tags=["sessions"])
def current_session(request: HttpRequest, project: str) -> Session:
    caller = project_caller(request, project)
    return sessions.current(caller)


@api.patch(SESSIONS + "/current", response={200: SessionOut, **WRITE_ERRORS}, tags=["sessions"])
def update_current_session(request: HttpRequest, project: str, payload: SessionPatchIn) -> Session:
    """Update the open session: `summary` replaces, `summary_append` adds a line, `end: true` closes it."""
    caller = project_caller(request, project)
    return sessions.update_current_as(caller, payload)


# `path:` so that a session id with a `/` in it (any text is allowed) can be read back too.
@api.get(SESSIONS + "/{path:session_id}", response={200: SessionOut, **ERRORS}, tags=["sessions"])
def get_session(request: HttpRequest, project: str, session_id: str) -> Session:
    caller = project_caller(request, project)
    return sessions.named(caller, session_id)
