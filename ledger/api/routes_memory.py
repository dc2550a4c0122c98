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

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger import selectors, services, visibility
from ledger.api.base import ApiRefusal, Caller, api, listed, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.api.shapes import (
    AgentMemoryQuery,
    EntryOut,
    MemoryIn,
    MemoryMergeIn,
    MemoryOut,
    MemoryPatchIn,
    MemoryQuery,
    MemoryRecordedOut,
    Paging,
)
from ledger.filters import MemoryFilter
from ledger.models import AgentMemory, InboxEntry, Source
from ledger.values import CROSS_TEAM_TAG, InvalidValue, normalize_tags

AGENT_MEMORY = "/projects/{project}/agents/{name}/memory"


def memory_rows(caller: Caller) -> QuerySet[AgentMemory]:
    """The project's memories `caller` may read, newest first."""
    return visibility.memories_visible_to(caller.project, caller.agent).order_by("-created_at", "-id")


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


def recorded_out(recorded: services.MemoryRecorded) -> MemoryRecordedOut:
    """The memory as the API shows it, with what recording it did."""
    shown = MemoryOut.from_orm(recorded.memory).model_dump(by_alias=True)
    return MemoryRecordedOut.model_validate(
        {
            **shown,
            "already_recorded": not recorded.created,
            "renewed": recorded.renewed,
            "message": recorded.message,
        }
    )


def memory_record_as(
    caller: Caller, name: str, payload: MemoryIn, field: str = "agent_name"
) -> services.MemoryRecorded | InboxEntry:
    """Record `payload` for agent `name` as `caller`: what recording did, or, for an agent token tagging
    it `cross-team`, the pending inbox entry that proposes it. `field` names where `name` came from.

    An agent may correct only its own memories (403) and may not pin (403); its cross-team memory is a
    proposal, which corrects nothing (400).
    """
    caller.require_agent(name, field)
    if caller.agent is not None and payload.category:
        raise ApiRefusal(403, "only a coordinator's injected learning carries a category")
    if caller.agent is not None and payload.pinned:
        raise ApiRefusal(403, "only a coordinator pins a memory")
    if caller.agent is not None and CROSS_TEAM_TAG in _tags(payload.tags):
        if payload.corrects is not None:
            raise services.invalid(
                "corrects",
                f"a memory tagged {CROSS_TEAM_TAG!r} is proposed for review and corrects nothing; "
                "record the correction without that tag, or propose it and archive the old memory",
            )
        proposal = payload.model_dump(exclude={"session_id", "category", "corrects", "pinned"})
        result = services.memory_propose(project=caller.project, agent_name=caller.agent.name, **proposal)
        return result.entry
    if caller.agent is not None and payload.corrects is not None:
        _own_memory(caller, payload.corrects)
    return services.memory_store(
        project=caller.project,
        agent_name=name if caller.is_coordinator else caller.agent.name,  # type: ignore[union-attr]
        **payload.model_dump(),
        source=Source.COORDINATOR if caller.is_coordinator else Source.AGENT,
        injected_by=caller.name if caller.is_coordinator else "",
        by=caller.name,
    )


def _own_memory(caller: Caller, memory_id: int) -> None:
    """An agent corrects only its own memories: another's is a 403, one not in the project a 404."""
    owner = AgentMemory.objects.filter(project=caller.project, pk=memory_id).values_list(
        "agent_id", flat=True
    )
    found = owner.first()
    if found is None:
        raise ApiRefusal(404, f"corrects: no memory {memory_id} in this project")
    if caller.agent is not None and found != caller.agent.pk:
        raise ApiRefusal(403, f"corrects: memory {memory_id} is another agent's; an agent corrects its own")


def _tags(raw: object) -> list[str]:
    try:
        return normalize_tags(raw)  # type: ignore[arg-type]
    except (InvalidValue, TypeError):
        return []  # the service refuses it with the reason


def visible_memory(caller: Caller, name: str, memory_id: int) -> AgentMemory:
    """One memory of agent `name`: absent is a 404, another agent's private memory a 403."""
    agent = selectors.agent_find(caller.project, name)
    memory = (
        AgentMemory.objects.select_related("agent")
        .filter(project=caller.project, agent=agent, pk=memory_id)
        .first()
        if agent is not None
        else None
    )
    if memory is None:
        raise ApiRefusal(404, f"no memory {memory_id} of agent {name!r} in this project")
    if not visibility.memory_is_readable(memory, caller.agent):
        raise ApiRefusal(403, "this memory is private to its agent")
    return memory


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
    memory = visible_memory(caller, name, memory_id)
    caller.require_agent(memory.agent.name)
    if caller.agent is not None and payload.pinned is not None:
        raise ApiRefusal(403, "only a coordinator pins or unpins a memory")
    if caller.agent is not None:
        refusal = visibility.memory_change_refusal(
            memory,
            content=payload.content,
            importance=payload.importance,
            tags=None if payload.tags is None else _tags(payload.tags),
            status=payload.status,
        )
        if refusal is not None:
            raise ApiRefusal(403, refusal)
    return services.memory_edit(
        project=caller.project, memory_id=memory.pk, by=caller.name, via="api", **payload.model_dump()
    )


@api.post(AGENT_MEMORY + "/{memory_id}/merge", response={200: MemoryOut, **WRITE_ERRORS}, tags=["memory"])
def merge_memory(
    request: HttpRequest, project: str, name: str, memory_id: int, payload: MemoryMergeIn
) -> AgentMemory:
    """Coordinators: settle a flagged near-duplicate by keeping one of the two (`keep`: this memory or
    the one it repeats); the other becomes `superseded` by it. Answers the kept memory."""
    caller = project_caller(request, project, coordinator=True)
    memory = visible_memory(caller, name, memory_id)
    return services.memory_merge(
        project=caller.project, memory_id=memory.pk, keep=payload.keep, by=caller.name, via="api"
    )


@api.post(
    AGENT_MEMORY + "/{memory_id}/dismiss-similar", response={200: MemoryOut, **WRITE_ERRORS}, tags=["memory"]
)
def dismiss_similar_memory(request: HttpRequest, project: str, name: str, memory_id: int) -> AgentMemory:
    """Coordinators: a flagged memory is not a repeat; the flag is cleared and both memories stay."""
    caller = project_caller(request, project, coordinator=True)
    memory = visible_memory(caller, name, memory_id)
    return services.memory_dismiss_similar(project=caller.project, memory_id=memory.pk, by=caller.name)
