"""Inbox routes: agents propose, coordinators merge or reject (docs/ledger.md, docs/api.md)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger.actions.answers import EntryOut, ErrorOut, MergeOut, RejectOut
from ledger.actions.inbox import entry_submit_as, inbox_rows, merge_as, reject_as, visible_entry
from ledger.actions.shapes import EntrySubmitIn, InboxQuery, MergeIn, Paging, RejectIn
from ledger.api.base import api, listed, project_caller
from ledger.filters import InboxFilter
from ledger.models import InboxEntry

INBOX = "/projects/{project}/decisions/inbox"
ERRORS: dict[int, Any] = {
    400: ErrorOut,
    401: ErrorOut,
    403: ErrorOut,
    404: ErrorOut,
    409: ErrorOut,
    413: ErrorOut,
}
# Every write also answers 429 when an agent token passes CANON_AGENT_WRITES_PER_MINUTE.
WRITE_ERRORS: dict[int, Any] = {**ERRORS, 429: ErrorOut}


@api.post(INBOX, response={200: EntryOut, 201: EntryOut, **WRITE_ERRORS}, tags=["inbox"])
def submit_entry(request: HttpRequest, project: str, payload: EntrySubmitIn) -> Status:
    """Propose an entry. 201 when stored new, 200 when the agent's own pending entry was updated.

    The response carries the effective slug, which differs from the requested one when another
    agent already holds it (`{slug}--{agent}`).
    """
    caller = project_caller(request, project)
    result = entry_submit_as(caller, payload)
    return Status(201 if result.created else 200, result.entry)


@api.get(INBOX, response={200: list[EntryOut], **ERRORS}, tags=["inbox"])
def list_entries(
    request: HttpRequest,
    project: str,
    response: HttpResponse,
    filters: Query[InboxQuery],
    paging: Query[Paging],
) -> list[InboxEntry]:
    """Entries newest first. `status` defaults to `pending`; `status=all` lists every status."""
    caller = project_caller(request, project)
    return listed(InboxFilter, inbox_rows(caller), filters, paging, response)


@api.get(INBOX + "/{entry_id}", response={200: EntryOut, **ERRORS}, tags=["inbox"])
def get_entry(request: HttpRequest, project: str, entry_id: int) -> InboxEntry:
    caller = project_caller(request, project)
    return visible_entry(caller, entry_id)


def _merge(request: HttpRequest, project: str, entry_id: int, payload: MergeIn | None) -> Status:
    caller = project_caller(request, project, coordinator=True)
    # The route leaves out the one of `decision_id` and `memory_id` that is null.
    return Status(201, merge_as(caller, entry_id, payload or MergeIn()))


@api.post(
    INBOX + "/{entry_id}/merge", response={201: MergeOut, **WRITE_ERRORS}, tags=["inbox"], exclude_none=True
)
def merge_entry(request: HttpRequest, project: str, entry_id: int, payload: MergeIn | None = None) -> Status:
    """Merge a pending entry: decision types become a Decision, the others an AgentMemory (once: a
    memory its agent already holds is `already_recorded`). 409 when the entry changed since the
    `version` sent (the entry's own, as read), for a flagged entry without `confirm_flagged`, and for a
    boundary competing with another boundary without a choice (`details` names each competitor)."""
    return _merge(request, project, entry_id, payload)


@api.post(
    INBOX + "/{entry_id}/promote", response={201: MergeOut, **WRITE_ERRORS}, tags=["inbox"], exclude_none=True
)
def promote_entry(
    request: HttpRequest, project: str, entry_id: int, payload: MergeIn | None = None
) -> Status:
    """The same as merge."""
    return _merge(request, project, entry_id, payload)


@api.post(INBOX + "/{entry_id}/reject", response={200: RejectOut, **WRITE_ERRORS}, tags=["inbox"])
def reject_entry(
    request: HttpRequest, project: str, entry_id: int, payload: RejectIn | None = None
) -> InboxEntry:
    caller = project_caller(request, project, coordinator=True)
    return reject_as(caller, entry_id, payload or RejectIn())
