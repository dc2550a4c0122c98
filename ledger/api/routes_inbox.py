"""Inbox routes: agents propose, coordinators merge or reject (docs/ledger.md, docs/api.md)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger import services, visibility
from ledger.api.base import ApiRefusal, Caller, api, listed, project_caller
from ledger.api.shapes import (
    EntryOut,
    EntrySubmitIn,
    ErrorOut,
    InboxQuery,
    MergeIn,
    MergeOut,
    Paging,
    RejectIn,
    RejectOut,
)
from ledger.filters import InboxFilter
from ledger.models import InboxEntry, Source

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


def entry_submit_as(caller: Caller, payload: EntrySubmitIn) -> services.SubmitResult:
    """Propose as `caller`: an agent token as its own agent (naming another is refused), a coordinator
    token for the agent it must name; the entry's `source` says which kind of token proposed it."""
    agent_name = caller.agent_named(payload.agent_name, "a coordinator token must say which agent proposes")
    return services.entry_submit(
        project=caller.project,
        **payload.model_dump(exclude={"agent_name"}),
        agent_name=agent_name,
        agent=caller.agent,  # the token's own agent, already loaded: the service need not look it up
        source=Source.COORDINATOR if caller.is_coordinator else Source.AGENT,
    )


def inbox_rows(caller: Caller) -> QuerySet[InboxEntry]:
    """The project's entries `caller` may see, newest first."""
    rows = (
        InboxEntry.objects.filter(project=caller.project)
        .select_related("agent")
        .order_by("-created_at", "-id")
    )
    return visibility.entries_visible_to(rows, caller.agent)


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


def _entry(caller: Caller, entry_id: int) -> InboxEntry:
    """One entry the caller may see: another agent's private learning is not found, as if absent."""
    qs = InboxEntry.objects.select_related("agent").filter(project=caller.project, pk=entry_id)
    entry = visibility.entries_visible_to(qs, caller.agent).first()
    if entry is None:
        raise ApiRefusal(404, f"no inbox entry {entry_id} in this project")
    return entry


@api.get(INBOX + "/{entry_id}", response={200: EntryOut, **ERRORS}, tags=["inbox"])
def get_entry(request: HttpRequest, project: str, entry_id: int) -> InboxEntry:
    caller = project_caller(request, project)
    return _entry(caller, entry_id)


def merge_as(caller: Caller, entry_id: int, payload: MergeIn) -> MergeOut:
    """Merge as a coordinator, with the reviewer's choices (`confirm_flagged`, `keep_both`, the
    decisions to supersede, the entries to reject) and the `version` they read: what it did, as the
    merge routes answer."""
    caller.require_coordinator()
    choices = payload.model_dump(exclude={"version"})
    outcome = services.entry_merge_outcome(
        project=caller.project,
        entry_id=entry_id,
        by=caller.name,
        via="api",
        seen=payload.version,
        **choices,
    )
    return merged_out(outcome)


def merged_out(outcome: services.Merged) -> MergeOut:
    return MergeOut.model_validate(
        {
            **MergeOut.from_orm(outcome.entry).model_dump(),
            "already_recorded": outcome.already_recorded,
            "superseded": outcome.superseded,
            "rejected": outcome.rejected,
            "message": outcome.message,
        }
    )


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
    return services.entry_reject(
        project=caller.project,
        entry_id=entry_id,
        by=caller.name,
        reason=payload.reason if payload else "",
        via="api",
    )
