"""The context block for an agent's turn as a tool (docs/compiler.md): its text is the block itself, as
markdown, and its structured content the API's answer (the text, the tokens, each layer's rows)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ledger.actions.context import context_for
from ledger.actions.frame import Caller
from ledger.actions.shapes import AGENT_NAME
from ledger.context import MAX_ITEMS_LIMIT, MAX_TOKENS_LIMIT, TASK_MAX_LENGTH
from ledger.mcp import shapes
from ledger.mcp.agents import own_or_named
from ledger.mcp.frame import Answer, tool
from ledger.mcp.params import described
from ledger.services import RUN_ID_MAX_LENGTH

# Said when a coordinator token names no agent.
NAME_ONE = "a coordinator token must say which agent the block is for"


# The text of a block with nothing in it (`text` null and no `error`): no boundaries, memories or session.
EMPTY = "(Nothing to tell this agent yet: no boundaries, memories or session in its context.)"


def block_text(answer: Answer, failed: Callable[[str], Exception] = ToolError) -> str:
    """The compiled block as the tool's text; a compile that failed is raised as `failed`, saying why."""
    if answer.get("error"):
        raise failed(f"the context could not be compiled: {answer['error']}")
    text = answer.get("text")
    return EMPTY if text is None else str(text)


def compiled(caller: Caller, agent: str | None, **options: object) -> Answer:
    """The block for `agent` (an agent token: itself by default) as `caller` may ask for it; a name no
    agent of the project has is refused naming the nearest."""
    if agent is not None:
        caller.require_agent(agent, "agent")
    name = own_or_named(caller, agent, "agent", NAME_ONE)
    return context_for(caller, name, **options)  # type: ignore[arg-type]


@tool(title="Compile my context", output=shapes.Context, write_when="run_id", text=block_text)
def compile_context(
    caller: Caller,
    agent: Annotated[
        str | None,
        described(
            "the agent the block is for; an agent token: itself (the default), a coordinator token must "
            "name one",
            **AGENT_NAME,
        ),
    ] = None,
    task: Annotated[
        str | None,
        Field(
            description="the run's task: adds the past knowledge most relevant to it",
            max_length=TASK_MAX_LENGTH,
        ),
    ] = None,
    child: Annotated[bool, Field(description="true for a child worker: boundaries only")] = False,
    max_items: Annotated[
        int | None, Field(description=f"memories at most, 0-{MAX_ITEMS_LIMIT}", ge=0, le=MAX_ITEMS_LIMIT)
    ] = None,
    max_tokens: Annotated[
        int | None, Field(description=f"token budget, 0-{MAX_TOKENS_LIMIT}", ge=0, le=MAX_TOKENS_LIMIT)
    ] = None,
    relevant_tokens: Annotated[
        int | None,
        Field(description=f"relevant layer's token budget, 0-{MAX_TOKENS_LIMIT}", ge=0, le=MAX_TOKENS_LIMIT),
    ] = None,
    session_tokens: Annotated[
        int | None,
        Field(description=f"session layer's token budget, 0-{MAX_TOKENS_LIMIT}", ge=0, le=MAX_TOKENS_LIMIT),
    ] = None,
    run_id: Annotated[
        str | None,
        Field(
            description="when given, the compilation is recorded for this run (and counts as a write)",
            max_length=RUN_ID_MAX_LENGTH,
        ),
    ] = None,
) -> Answer:
    """Compile the context block for a turn (an agent token: its own): boundaries, memories, with a task
    the most relevant past knowledge, the current session. The text is the block itself."""
    return compiled(
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
