"""GET /search: one search across the ledger, best match first (docs/api.md "Search", `ledger.finder`).

An agent token searches as its agent: its own memories and episodes, the shared memories, the
sessions' summaries and the decisions, never another agent's private rows nor the inbox. A coordinator
token searches everything, inbox entries included, or, with `agent`, what that agent would find (and
the inbox entries that agent may see).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from ledger import finder
from ledger.actions.answers import SearchOut
from ledger.actions.search import search_as
from ledger.actions.shapes import agent_param, query_param
from ledger.api.base import api, project_caller
from ledger.api.routes_inbox import ERRORS

SEARCH = "/projects/{project}/search"


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
