"""GET /search: one search across the ledger, best match first (docs/api.md "Search", `ledger.finder`).

An agent token searches as its agent: its own memories and episodes, the shared memories, the
sessions' summaries and the decisions, never another agent's private rows nor the inbox. A coordinator
token searches everything, inbox entries included, or, with `agent`, what that agent would find (and
the inbox entries that agent may see).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from django.http import HttpRequest
from ninja import Schema

from ledger import finder
from ledger.api.base import Caller, api, project_caller
from ledger.api.routes_inbox import ERRORS
from ledger.api.shapes import agent_param, query_param
from ledger.search import terms

SEARCH = "/projects/{project}/search"


class WhyOut(Schema):
    field: str
    words: list[str]


class HitOut(Schema):
    kind: str
    id: int
    title: str
    excerpt: str
    score: float
    why: list[WhyOut]
    words: list[str]
    status: str
    agent: str
    created_at: datetime
    session_id: str
    run_id: str
    path: str


class SearchOut(Schema):
    q: str
    words: list[str]
    limit: int
    hits: list[HitOut]


@api.get(SEARCH, response={200: SearchOut, **ERRORS}, tags=["search"])
def search_ledger(
    request: HttpRequest,
    project: str,
    q: str = query_param(..., minLength=1, maxLength=finder.QUERY_MAX_LENGTH),
    limit: int = query_param(finder.DEFAULT_LIMIT, minimum=1, maximum=finder.MAX_LIMIT),
    kinds: str | None = query_param(),
    agent: str | None = agent_param(),
    inactive: bool = False,
) -> dict[str, Any]:
    """Decisions, memories, episodes, session summaries and (coordinators) inbox entries matching `q`,
    in one list, best first: each hit with its kind, id, title, a highlighted excerpt, its score and
    the words that matched in each field."""
    caller = project_caller(request, project)
    return search_as(caller, q=q, limit=limit, kinds=kinds, agent=agent, inactive=inactive)


def search_as(
    caller: Caller,
    *,
    q: str,
    limit: int = finder.DEFAULT_LIMIT,
    kinds: str | list[str] | None = None,
    agent: str | None = None,
    inactive: bool = False,
) -> dict[str, Any]:
    """The search as `caller` may make it, as the API answers it: an agent token as its own agent
    (naming another is a 403), a coordinator token as the project or as the agent it names."""
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
    shown = SearchOut(
        q=q,
        words=terms(q),
        limit=limit,
        hits=[_hit_out(caller, hit) for hit in hits],
    )
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
