"""Memory (docs/ledger.md): an agent records and reads its own, and the shared ones; a coordinator
records for any agent, injects learnings, pins, edits, merges near-duplicates.

Visibility: an agent reads its own memories and those tagged `cross-team`; a coordinator reads all.
Reading one private memory of another agent, and every write for another agent, is refused with 403.
"""

from __future__ import annotations

from django.db.models import QuerySet

from ledger import selectors, services, visibility
from ledger.actions.answers import MemoryOut, MemoryRecordedOut
from ledger.actions.frame import ApiRefusal, Caller
from ledger.actions.shapes import InjectIn, MemoryIn, MemoryMergeIn, MemoryPatchIn
from ledger.models import AgentMemory, InboxEntry, MemoryCategory, MemoryType, Source
from ledger.values import CROSS_TEAM_TAG, InvalidValue, normalize_tags


def memory_rows(caller: Caller) -> QuerySet[AgentMemory]:
    """The project's memories `caller` may read, newest first."""
    return visibility.memories_visible_to(caller.project, caller.agent).order_by("-created_at", "-id")


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
        via=caller.via,
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


def edit_as(caller: Caller, memory: AgentMemory, payload: MemoryPatchIn) -> AgentMemory:
    """Edit a memory the caller has read (`visible_memory`): content, importance, tags, status
    (`archived` replaces deleting) or `pinned` (coordinators only). An agent edits only its own, and
    only as `visibility.memory_change_refusal` allows."""
    if caller.agent is not None:
        caller.require_agent(memory.agent.name)
        if payload.pinned is not None:
            raise ApiRefusal(403, "only a coordinator pins or unpins a memory")
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
        project=caller.project, memory_id=memory.pk, by=caller.name, via=caller.via, **payload.model_dump()
    )


def merge_similar_as(caller: Caller, memory: AgentMemory, payload: MemoryMergeIn) -> AgentMemory:
    """Settle a flagged near-duplicate by keeping one of the two, as a coordinator: the kept memory."""
    caller.require_coordinator()
    return services.memory_merge(
        project=caller.project, memory_id=memory.pk, keep=payload.keep, by=caller.name, via=caller.via
    )


def dismiss_similar_as(caller: Caller, memory: AgentMemory) -> AgentMemory:
    """A flagged memory is not a repeat, a coordinator says: the flag is cleared, both stay."""
    caller.require_coordinator()
    return services.memory_dismiss_similar(
        project=caller.project, memory_id=memory.pk, by=caller.name, via=caller.via
    )


def inject_as(caller: Caller, payload: InjectIn) -> AgentMemory:
    """A coordinator's learning (`source` coordinator, `injected_by` the caller, its `category`) for the
    agent named, or, tagged `cross-team` with no agent named, kept under the project's coordinator agent
    for every agent to read. It needs no review: a coordinator wrote it."""
    caller.require_coordinator()
    if payload.category not in MemoryCategory.values:
        raise services.invalid(
            "category", f"{payload.category!r} is not one of: {', '.join(MemoryCategory.values)}"
        )
    agent_name = payload.agent_name
    if agent_name is None:
        if CROSS_TEAM_TAG not in _tags(payload.tags):
            raise services.invalid(
                "agent_name",
                f"name the agent this learning is for, or tag it {CROSS_TEAM_TAG!r} for the team",
            )
        agent_name = caller.project.coordinator_agent
    return services.memory_record(
        project=caller.project,
        agent_name=agent_name,
        type=MemoryType.LEARNING,
        **payload.model_dump(exclude={"agent_name"}),
        source=Source.COORDINATOR,
        injected_by=caller.name,
        by=caller.name,
        via=caller.via,
    )
