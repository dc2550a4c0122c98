"""One search across the ledger (docs/api.md "Search", `ledger.finder`), as a caller may make it.

An agent searches as itself: its own memories and episodes, the shared memories, the sessions'
summaries and the decisions, never another agent's private rows nor the inbox. A coordinator searches
everything, inbox entries included, or, naming an agent, what that agent would find.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ledger import finder
from ledger.actions.answers import HitOut, SearchOut, WhyOut
from ledger.actions.frame import Caller
from ledger.search import terms


def search_as(
    caller: Caller,
    *,
    q: str,
    limit: int = finder.DEFAULT_LIMIT,
    kinds: str | list[str] | None = None,
    agent: str | None = None,
    inactive: bool = False,
) -> dict[str, Any]:
    """The search as `caller` may make it, as the API answers it: an agent as itself (naming another
    is a 403), a coordinator as the project or as the agent it names."""
    if agent is not None:
        caller.require_agent(agent, "agent")
    name = agent if agent is not None else (caller.agent.name if caller.agent is not None else None)
    hits = finder.find(
        caller.project,
        agent_name=name,
        coordinator=caller.is_coordinator,
        q=q,
        limit=limit,
        kinds=kinds,
        inactive=inactive,
    )
    shown = SearchOut(q=q, words=terms(q), limit=limit, hits=[_hit_out(caller, hit) for hit in hits])
    return shown.model_dump(mode="json")


def _hit_out(caller: Caller, hit: finder.Hit) -> HitOut:
    return HitOut(
        kind=hit.kind,
        id=hit.id,
        title=hit.title,
        excerpt=hit.excerpt,
        score=hit.score,
        why=[WhyOut(field=why.field, words=list(why.words)) for why in hit.why],
        words=list(hit.words),
        status=hit.status,
        agent=hit.agent,
        created_at=hit.created_at,
        session_id=hit.session_id,
        run_id=hit.run_id,
        path=read_path(caller, hit),
    )


def read_path(caller: Caller, hit: finder.Hit) -> str:
    """The API route that reads the whole row of `hit`."""
    base = f"/api/projects/{caller.project.slug}"
    if hit.kind == finder.DECISION:
        return f"{base}/decisions/{hit.id}"
    if hit.kind == finder.MEMORY:
        return f"{base}/agents/{quote(hit.agent, safe='')}/memory/{hit.id}"
    if hit.kind == finder.SUMMARY:
        return f"{base}/sessions/{quote(hit.session_id, safe='/')}"
    if hit.kind == finder.EPISODE:
        return f"{base}/episodes/{hit.id}"
    return f"{base}/decisions/inbox/{hit.id}"
