"""GET /context: the compiled context block for one agent turn (docs/compiler.md)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from ledger import context
from ledger.actions.answers import ContextOut
from ledger.actions.context import context_for
from ledger.actions.shapes import agent_param, query_param
from ledger.api.base import api, project_caller
from ledger.api.routes_inbox import ERRORS
from ledger.services import RUN_ID_MAX_LENGTH


@api.get("/projects/{project}/context", response={200: ContextOut, **ERRORS}, tags=["context"])
def get_context(
    request: HttpRequest,
    project: str,
    agent: str = agent_param(...),
    child: bool = False,
    max_items: int | None = query_param(minimum=0, maximum=context.MAX_ITEMS_LIMIT),
    max_tokens: int | None = query_param(minimum=0, maximum=context.MAX_TOKENS_LIMIT),
    run_id: str | None = query_param(maxLength=RUN_ID_MAX_LENGTH),
    task: str | None = query_param(maxLength=context.TASK_MAX_LENGTH),
    relevant_tokens: int | None = query_param(minimum=0, maximum=context.MAX_TOKENS_LIMIT),
    session_tokens: int | None = query_param(minimum=0, maximum=context.MAX_TOKENS_LIMIT),
) -> dict[str, Any]:
    """The context block for `agent`: boundaries, then budgeted memories, then, with a `task`, the
    past knowledge most relevant to it, then the current session.

    An agent token may ask only for itself; a coordinator for any agent. With `run_id` the
    compilation is recorded, and counts against the agent's writes per minute. Never a 500: on an
    internal error `text` is null and `error` says why.
    """
    caller = project_caller(request, project)
    return context_for(
        caller,
        agent,
        child=child,
        max_items=max_items,
        max_tokens=max_tokens,
        run_id=run_id,
        task=task,
        relevant_tokens=relevant_tokens,
        session_tokens=session_tokens,
    )
