"""One search across the ledger as a tool (docs/api.md "Search", `ledger.finder`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

from ledger import finder
from ledger.actions.frame import Caller
from ledger.actions.search import search_as
from ledger.actions.shapes import AGENT_NAME
from ledger.mcp import shapes
from ledger.mcp.agents import known_agent
from ledger.mcp.frame import Answer, tool
from ledger.mcp.params import described


@tool(title="Search the ledger", output=shapes.Search, read_only=True)
def search(
    caller: Caller,
    q: Annotated[
        str,
        described(
            "what to look for: a few words or a whole task; rows holding any of its words are found",
            minLength=1,
            maxLength=finder.QUERY_MAX_LENGTH,
        ),
    ],
    limit: Annotated[
        StrictInt,
        Field(
            description=f"hits to return, 1-{finder.MAX_LIMIT} (default {finder.DEFAULT_LIMIT})",
            ge=1,
            le=finder.MAX_LIMIT,
        ),
    ] = finder.DEFAULT_LIMIT,
    kinds: Annotated[
        list[str] | str | None,
        described(
            "only these kinds (a list or comma-separated): decision, memory, summary, episode, "
            "entry (coordinators only); default every kind the token may search",
            items={"type": "string", "enum": list(finder.KINDS)},
        ),
    ] = None,
    agent: Annotated[
        str | None, described("search as this agent sees (an agent token: itself, the default)", **AGENT_NAME)
    ] = None,
    inactive: Annotated[
        bool,
        Field(
            description="also superseded, archived and expired rows and decided inbox entries, ranked lower"
        ),
    ] = False,
) -> Answer:
    """Search decisions, memories, episodes, session summaries and (coordinators) inbox entries at once:
    one list, best match first, each hit with a highlighted excerpt and the words it matched."""
    if agent is not None:
        caller.require_agent(agent, "agent")
        agent = known_agent(caller.project, agent, "agent")
    return search_as(caller, q=q, limit=limit, kinds=kinds, agent=agent, inactive=inactive)
