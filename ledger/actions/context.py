"""The compiled context block for one agent turn (docs/compiler.md), as a caller may ask for it."""

from __future__ import annotations

from typing import Any

from ledger import context
from ledger.actions.frame import Caller
from ledger.services import RUN_ID_MAX_LENGTH, invalid
from ledger.values import InvalidValue, agent_key


def _bounded(name: str, value: int | None, upper: int) -> int | None:
    if value is not None and not 0 <= value <= upper:
        raise invalid(name, f"must be between 0 and {upper}")
    return value


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
    """The compiled block for `agent` as `caller` may ask for it (an agent for itself, a coordinator
    for anyone), each bound checked (400 naming it). With `run_id` the compilation is recorded: a
    write, counted like every other."""
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
