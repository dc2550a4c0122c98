"""The open session as tools (docs/ledger.md "Sessions"): the team's, any token of the project."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ledger import selectors, services
from ledger.actions.answers import SessionOut
from ledger.actions.frame import ApiRefusal, Caller
from ledger.actions.sessions import start_as, update_current_as
from ledger.actions.shapes import SessionIn, SessionPatchIn
from ledger.mcp import shapes
from ledger.mcp.frame import Answer, tool


@tool(title="Start a session", output=shapes.Session, destructive=True, takes=SessionIn)
def start_session(caller: Caller, payload: SessionIn) -> Answer:
    """Start a session; any other open session of the project is closed."""
    return SessionOut.from_orm(start_as(caller, payload)).model_dump(mode="json")


@tool(title="Read the open session", output=shapes.Session, read_only=True)
def current_session(caller: Caller) -> Answer:
    """Read the project's open session."""
    session = selectors.open_session(caller.project)
    if session is None:
        raise ApiRefusal(404, "no open session in this project; start one with start_session")
    return SessionOut.from_orm(session).model_dump(mode="json")


@tool(title="Update the open session", output=shapes.Session, destructive=True, takes=SessionPatchIn)
def update_session(
    caller: Caller,
    payload: SessionPatchIn,
    clear_serialized_state: Annotated[bool, Field(description="true clears the kept state")] = False,
) -> Answer:
    """Update the open session: replace fields, append a summary line, or end it. A serialized_state
    left out or null keeps the kept state; clear_serialized_state clears it."""
    if clear_serialized_state:
        if payload.serialized_state is not None:
            raise services.invalid("serialized_state", "give a new state or clear it, not both")
        # A state sent as null clears it, as over the API.
        payload = SessionPatchIn.model_validate(
            {**payload.model_dump(exclude_unset=True), "serialized_state": None}
        )
    session = update_current_as(caller, payload)
    return SessionOut.from_orm(session).model_dump(mode="json")
