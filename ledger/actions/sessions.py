"""Sessions (docs/ledger.md): at most one open session per project, any token of the project."""

from __future__ import annotations

from ledger import selectors, services
from ledger.actions.frame import ApiRefusal, Caller
from ledger.actions.shapes import SessionIn, SessionPatchIn
from ledger.models import Session


def start_as(caller: Caller, payload: SessionIn) -> Session:
    """Start a session; every other open session of the project is closed."""
    return services.session_start(project=caller.project, **payload.model_dump(), by=caller.name)


def current(caller: Caller) -> Session:
    """The project's open session; 404 when none is open."""
    session = selectors.open_session(caller.project)
    if session is None:
        raise ApiRefusal(404, "no open session in this project; start one with POST /sessions")
    return session


def update_current_as(caller: Caller, payload: SessionPatchIn) -> Session:
    """Update the open session: `summary` replaces, `summary_append` adds a line, `end` closes it. A
    `serialized_state` left out is kept; one sent as null clears it."""
    changes = payload.model_dump(exclude={"serialized_state"})
    state = payload.serialized_state if "serialized_state" in payload.model_fields_set else services.UNSET
    return services.session_update_current(
        project=caller.project, **changes, serialized_state=state, by=caller.name
    )


def named(caller: Caller, session_id: str) -> Session:
    session = Session.objects.filter(project=caller.project, session_id=session_id).first()
    if session is None:
        raise ApiRefusal(404, f"no session {session_id!r} in this project")
    return session
