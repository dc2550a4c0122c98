"""Memory routes (docs/ledger.md, docs/api.md).

Visibility: an agent token reads its own memories and those tagged `cross-team`; a coordinator reads
all. `GET /agents/{name}/memory` with an agent token for another agent therefore lists only that
agent's cross-team memories (not a 403: the same rule as the project-wide search). Reading one
private memory of another agent, and every write for another agent, is refused with 403. The summaries
of ended sessions (memories of the coordinator agent, source `session_summary`) are every agent's to read.

Lists leave out superseded memories and, in the active list, expired ones; `status` and `expired` ask
for them. One memory is always readable, `expired: true` when it is.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger.actions.answers import EntryOut, MemoryOut, MemoryRecordedOut
from ledger.actions.memory import (
    dismiss_similar_as,
    edit_as,
    memory_record_as,
    memory_rows,
    merge_similar_as,
    recorded_out,
    visible_memory,
)
from ledger.actions.shapes import (
    AgentMemoryQuery,
    MemoryIn,
    MemoryMergeIn,
    MemoryPatchIn,
    MemoryQuery,
    Paging,
)
from ledger.api.base import api, listed, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.filters import MemoryFilter
from ledger.models import AgentMemory, InboxEntry

AGENT_MEMORY = "/projects/{project}/agents/{name}/memory"


@api.get("/projects/{project}/memory", response={200: list[MemoryOut], **ERRORS}, tags=["memory"])
def search_memory(
    request: HttpRequest,
    project: str,
    response: HttpResponse,
    filters: Query[MemoryQuery],
    paging: Query[Paging],
) -> list[AgentMemory]:
    """Project-wide search, newest first: `tags` matches whole tags (any of them), `q` the text."""
    caller = project_caller(request, project)
    return listed(MemoryFilter, memory_rows(caller), filters, paging, response)


@api.get(AGENT_MEMORY, response={200: list[MemoryOut], **ERRORS}, tags=["memory"])
def list_agent_memory(
    request: HttpRequest,
    project: str,
    name: str,
    response: HttpResponse,
    filters: Query[AgentMemoryQuery],
    paging: Query[Paging],
) -> list[AgentMemory]:
    caller = project_caller(request, project)
    return listed(MemoryFilter, memory_rows(caller), filters, paging, response, agent=name)


@api.post(
    AGENT_MEMORY,
    response={200: MemoryRecordedOut, 201: MemoryRecordedOut, 202: EntryOut, **WRITE_ERRORS},
    tags=["memory"],
)
def record_memory(request: HttpRequest, project: str, name: str, payload: MemoryIn) -> Status:
    """An agent records memory for itself; a coordinator for any agent (the memory says who injected it).

    A memory an agent tags `cross-team` is for every other agent: it is proposed instead (202 with the
    pending inbox entry) and becomes a memory when a coordinator merges it. The same content the agent
    already has as an active memory is not written twice: 200 with that memory, `already_recorded`.
    """
    caller = project_caller(request, project)
    recorded = memory_record_as(caller, name, payload, field="name")
    if isinstance(recorded, InboxEntry):
        return Status(202, recorded)
    return Status(201 if recorded.created else 200, recorded_out(recorded))


@api.get(AGENT_MEMORY + "/{memory_id}", response={200: MemoryOut, **ERRORS}, tags=["memory"])
def get_memory(request: HttpRequest, project: str, name: str, memory_id: int) -> AgentMemory:
    caller = project_caller(request, project)
    return visible_memory(caller, name, memory_id)


@api.patch(AGENT_MEMORY + "/{memory_id}", response={200: MemoryOut, **WRITE_ERRORS}, tags=["memory"])
def patch_memory(
    request: HttpRequest, project: str, name: str, memory_id: int, payload: MemoryPatchIn
) -> AgentMemory:
    """Edit content, importance, tags, status (`archived` replaces deleting) or `pinned` (coordinators
    only: pinning clears the expiry, unpinning sets it again from the source's time-to-live)."""
    caller = project_caller(request, project)
    return edit_as(caller, visible_memory(caller, name, memory_id), payload)


@api.post(AGENT_MEMORY + "/{memory_id}/merge", response={200: MemoryOut, **WRITE_ERRORS}, tags=["memory"])
def merge_memory(
    request: HttpRequest, project: str, name: str, memory_id: int, payload: MemoryMergeIn
) -> AgentMemory:
    """Coordinators: settle a flagged near-duplicate by keeping one of the two (`keep`: this memory or
    the one it repeats); the other becomes `superseded` by it. Answers the kept memory."""
    caller = project_caller(request, project, coordinator=True)
    return merge_similar_as(caller, visible_memory(caller, name, memory_id), payload)


@api.post(
    AGENT_MEMORY + "/{memory_id}/dismiss-similar", response={200: MemoryOut, **WRITE_ERRORS}, tags=["memory"]
)
def dismiss_similar_memory(request: HttpRequest, project: str, name: str, memory_id: int) -> AgentMemory:
    """Coordinators: a flagged memory is not a repeat; the flag is cleared and both memories stay."""
    caller = project_caller(request, project, coordinator=True)
    return dismiss_similar_as(caller, visible_memory(caller, name, memory_id))
