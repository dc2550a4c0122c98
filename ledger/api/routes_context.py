"""GET /context: the compiled context block for one agent turn (docs/compiler.md)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Schema

from ledger import context
from ledger.api.base import Caller, api, project_caller
from ledger.api.routes_inbox import ERRORS
from ledger.api.shapes import agent_param, query_param
from ledger.services import RUN_ID_MAX_LENGTH, invalid
from ledger.values import InvalidValue, agent_key


class LayerOut(Schema):
    tokens: int
    ids: list[int]
    budget: int | None


class RelevantLayerOut(LayerOut):
    """The relevant layer: `ids` are its memories; its episodes and decisions are listed apart, each
    in block order."""

    episodes: list[int]
    decisions: list[int]


class SessionLayerOut(LayerOut):
    cut: int


class LayersOut(Schema):
    boundaries: LayerOut
    memory: LayerOut
    relevant: RelevantLayerOut
    session: SessionLayerOut


class ContextOut(Schema):
    text: str | None
    tokens: int
    sha256: str | None
    layers: LayersOut
    skipped: list[int]
    error: str | None = None


def _bounded(name: str, value: int | None, upper: int) -> int | None:
    if value is not None and not 0 <= value <= upper:
        raise invalid(name, f"must be between 0 and {upper}")
    return value


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


def context_for(
    caller: Caller,
    agent: str,
    *,
    child: bool = False,
    max_items: int | None = None,
    max_tokens: int | None = None,
    run_id: str | None = None,
    task: str | None = None,
    relevant_tokens: int | None = None,
    session_tokens: int | None = None,
) -> dict[str, Any]:
    """The compiled block for `agent` as `caller` may ask for it, each bound checked (400 naming it)."""
    try:
        agent_key(agent)  # a coordinator may ask for anyone, but not for a name no agent can have
    except InvalidValue as exc:
        raise invalid("agent", str(exc)) from exc
    caller.require_agent(agent, "agent")
    if run_id is not None and len(run_id) > RUN_ID_MAX_LENGTH:
        raise invalid("run_id", f"must be at most {RUN_ID_MAX_LENGTH} characters")
    if task is not None and len(task) > context.TASK_MAX_LENGTH:
        raise invalid("task", f"must be at most {context.TASK_MAX_LENGTH} characters")
    if run_id:
        # A compile for a run stores what the agent was told: a write, counted like every other.
        caller.count_write()
    result = context.compile(
        caller.project,
        agent,
        child=child,
        max_items=_bounded("max_items", max_items, context.MAX_ITEMS_LIMIT),
        max_tokens=_bounded("max_tokens", max_tokens, context.MAX_TOKENS_LIMIT),
        run_id=run_id or None,
        task=task,
        relevant_tokens=_bounded("relevant_tokens", relevant_tokens, context.MAX_TOKENS_LIMIT),
        session_tokens=_bounded("session_tokens", session_tokens, context.MAX_TOKENS_LIMIT),
    )
    return result.as_dict()
