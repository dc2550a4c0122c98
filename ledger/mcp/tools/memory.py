"""Memory as tools (docs/ledger.md "Memory"): an agent records and reads its own and the shared ones, a
coordinator records for any agent and injects learnings."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

from ledger.actions.answers import EntryOut, MemoryOut
from ledger.actions.frame import ApiRefusal, Caller
from ledger.actions.memory import inject_as, memory_record_as, memory_rows, recorded_out, visible_memory
from ledger.actions.shapes import AGENT_NAME, AgentMemoryQuery, InjectIn, MemoryIn, MemoryQuery
from ledger.filters import MemoryFilter
from ledger.mcp import lists, shapes
from ledger.mcp.agents import known_agent, own_or_named
from ledger.mcp.frame import Answer, tool
from ledger.mcp.params import (
    DEFAULT_LIMIT,
    MAX_ID,
    ActingAgent,
    AgentFilter,
    Compact,
    Expired,
    ImportanceFilter,
    Limit,
    MemoryId,
    MemoryTypeFilter,
    Offset,
    ReadAgent,
    SearchText,
    StatusOf,
    described,
)
from ledger.models import AgentMemory, InboxEntry
from ledger.values import CROSS_TEAM_TAG


@tool(title="Record a memory", output=shapes.Recorded, idempotent=True, takes=MemoryIn, omit=("category",))
def record_memory(
    caller: Caller,
    payload: MemoryIn,
    agent_name: ActingAgent = None,
    corrects: Annotated[
        StrictInt | None,
        Field(
            description="the id of your active memory this one corrects (it becomes superseded)",
            ge=1,
            le=MAX_ID,
        ),
    ] = None,
) -> Answer:
    """Record a memory (an agent token: its own by default). The answer's kind says what happened: memory
    (recorded, or the same content already there, not written twice), or, for an agent's memory tagged
    cross-team, proposal: a pending inbox entry a coordinator will decide."""
    name = caller.agent_named(agent_name, "a coordinator token must say which agent the memory is for")
    recorded = memory_record_as(caller, name, payload)
    if isinstance(recorded, InboxEntry):
        return {
            "kind": "proposal",
            "entry": EntryOut.from_orm(recorded).model_dump(mode="json"),
            "message": f"proposed as inbox entry {recorded.pk}, tagged {CROSS_TEAM_TAG!r}: a coordinator "
            "will merge it for every agent, or reject it",
        }
    return {
        "kind": "memory",
        "memory": recorded_out(recorded).model_dump(mode="json"),
        "message": recorded.message,
    }


@tool(
    title="List an agent's memories",
    output=lists.MEMORIES.page,
    read_only=True,
    takes=AgentMemoryQuery,
    omit=("similar",),
)
def list_memory(
    caller: Caller,
    payload: AgentMemoryQuery,
    agent_name: ReadAgent = None,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    compact: Compact = False,
) -> Answer:
    """List one agent's memories newest first (an agent token: its own by default; another agent's:
    its cross-team ones only)."""
    name = own_or_named(
        caller, agent_name, "agent_name", "a coordinator token must say whose memories to list"
    )
    return lists.listing(
        lists.MEMORIES,
        MemoryFilter,
        memory_rows(caller),
        payload,
        limit=limit,
        offset=offset,
        compact=compact,
        agent=name,
    )


@tool(title="Read a memory", output=shapes.Memory, read_only=True)
def get_memory(
    caller: Caller,
    memory_id: MemoryId,
    agent_name: Annotated[
        str | None,
        described("the memory's agent (optional: the memory's own agent by default)", **AGENT_NAME),
    ] = None,
) -> Answer:
    """Read one memory by its id (another agent's only when tagged cross-team)."""
    if agent_name is None:
        agent_name = _owner(caller, memory_id)
    else:
        agent_name = known_agent(caller.project, agent_name, "agent_name")
    return MemoryOut.from_orm(visible_memory(caller, agent_name, memory_id)).model_dump(mode="json")


def _owner(caller: Caller, memory_id: int) -> str:
    owner = AgentMemory.objects.filter(project=caller.project, pk=memory_id).values_list("agent__name")
    found = owner.first()
    if found is None:
        raise ApiRefusal(404, f"no memory {memory_id} in this project")
    return found[0]


@tool(title="Search memories", output=lists.MEMORIES.page, read_only=True)
def search_memory(
    caller: Caller,
    tags: Annotated[
        list[str] | str | None, Field(description="any of these whole tags (a list or comma-separated)")
    ] = None,
    type: MemoryTypeFilter = None,
    agent: AgentFilter = None,
    q: SearchText = None,
    importance: ImportanceFilter = None,
    status: Annotated[str | None, described("default active", enum=StatusOf["memory"])] = None,
    expired: Expired = None,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    compact: Compact = False,
) -> Answer:
    """Search the memories you may read by tags, type, agent, text, importance and status."""
    if agent is not None:
        agent = known_agent(caller.project, agent, "agent")
    filters = MemoryQuery(
        tags=",".join(tags) if isinstance(tags, list) else tags,
        type=type,
        agent=agent,
        q=q,
        importance=importance,
        status=status,
        expired=expired,
        similar=None,
    )
    return lists.listing(
        lists.MEMORIES,
        MemoryFilter,
        memory_rows(caller),
        filters,
        limit=limit,
        offset=offset,
        compact=compact,
    )


@tool(title="Inject a learning", output=shapes.Memory, idempotent=True, coordinator=True, takes=InjectIn)
def inject_learning(caller: Caller, payload: InjectIn) -> Answer:
    """Inject a learning for one agent, or the whole team when tagged cross-team (coordinators only)."""
    return MemoryOut.from_orm(inject_as(caller, payload)).model_dump(mode="json")
