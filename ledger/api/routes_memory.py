"""Memory routes (docs/ledger.md, docs/api.md).

Visibility: an agent token reads its own memories and those tagged `cross-team`; a coordinator reads
all. `GET /agents/{name}/memory` with an agent token for another agent therefore lists only that
agent's cross-team memories (not a 403: the same rule as the project-wide search). Reading one
private memory of another agent, and every write for another agent, is refused with 403.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger import selectors, services
from ledger.api.base import ApiRefusal, Caller, api, listed, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.api.shapes import (
    AgentMemoryQuery,
    EntryOut,
    MemoryIn,
    MemoryOut,
    MemoryPatchIn,
    MemoryQuery,
    Paging,
)
from ledger.filters import MemoryFilter
from ledger.models import AgentMemory, InboxEntry, Source
from ledger.values import CROSS_TEAM_TAG, InvalidValue, normalize_tags

AGENT_MEMORY = "/projects/{project}/agents/{name}/memory"


def memory_rows(caller: Caller) -> QuerySet[AgentMemory]:
    """The project's memories `caller` may read, newest first."""
    return selectors.memories_visible_to(caller.project, caller.agent).order_by("-created_at", "-id")


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


@api.post(AGENT_MEMORY, response={201: MemoryOut, 202: EntryOut, **WRITE_ERRORS}, tags=["memory"])
def record_memory(request: HttpRequest, project: str, name: str, payload: MemoryIn) -> Status:
    """An agent records memory for itself; a coordinator for any agent (the memory says who injected it).

    A memory an agent tags `cross-team` is for every other agent: it is proposed instead (202 with the
    pending inbox entry) and becomes a memory when a coordinator merges it.
    """
    caller = project_caller(request, project)
    recorded = memory_record_as(caller, name, payload, field="name")
    return Status(202 if isinstance(recorded, InboxEntry) else 201, recorded)


def memory_record_as(
    caller: Caller, name: str, payload: MemoryIn, field: str = "agent_name"
) -> AgentMemory | InboxEntry:
    """Record `payload` for agent `name` as `caller`: the memory, or, for an agent token tagging it
    `cross-team`, the pending inbox entry that proposes it. `field` names where `name` came from."""
    caller.require_agent(name, field)
    if caller.agent is not None and payload.category:
        raise ApiRefusal(403, "only a coordinator's injected learning carries a category")
    if caller.agent is not None and CROSS_TEAM_TAG in _tags(payload.tags):
        proposal = payload.model_dump(exclude={"session_id", "category"})
        result = services.memory_propose(project=caller.project, agent_name=caller.agent.name, **proposal)
        return result.entry
    return services.memory_record(
        project=caller.project,
        agent_name=name if caller.is_coordinator else caller.agent.name,  # type: ignore[union-attr]
        **payload.model_dump(),
        source=Source.COORDINATOR if caller.is_coordinator else Source.AGENT,
        injected_by=caller.name if caller.is_coordinator else "",
    )


def _tags(raw: object) -> list[str]:
    try:
        return normalize_tags(raw)  # type: ignore[arg-type]
    except (InvalidValue, TypeError):
        return []  # the service refuses it with the reason


def _shares(memory: AgentMemory, payload: MemoryPatchIn) -> bool:
    """Would this edit change what other agents read: a cross-team memory's text, importance or tags, or
    the cross-team tag added?"""
    if payload.tags is not None and CROSS_TEAM_TAG in _tags(payload.tags) and not memory.cross_team:
        return True
    if memory.cross_team:
        return any(value is not None for value in (payload.content, payload.importance, payload.tags))
    return False


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
    if caller.agent is not None and memory.agent_id != caller.agent.pk and not memory.cross_team:
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
    """Edit content, importance, tags or status (`archived` replaces deleting)."""
    caller = project_caller(request, project)
    memory = visible_memory(caller, name, memory_id)
    caller.require_agent(memory.agent.name)
    if caller.agent is not None and _shares(memory, payload):
        raise ApiRefusal(
            403,
            "what other agents see changes only through review: record a new memory tagged "
            f"{CROSS_TEAM_TAG!r} to propose it (archiving is allowed)",
        )
    return services.memory_edit(
        project=caller.project, memory_id=memory.pk, by=caller.name, via="api", **payload.model_dump()
    )
