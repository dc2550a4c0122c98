"""The start of an agent's turn, for hosts that offer prompts and resources besides tools (docs/mcp.md
"Prompt and resource"): the resource `canon://context`, the token's agent's compiled block as markdown,
and the prompt `start_of_turn`, that block (with the turn's task, if given) followed by how to work with
Canon during the turn. Both read, and count no write; a refusal is a protocol error saying why.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts import Prompt
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import Field

from ledger.actions.frame import ApiRefusal, Caller
from ledger.context import TASK_MAX_LENGTH
from ledger.mcp.frame import Answer, CallerOf, acting, refusals_as
from ledger.mcp.tools.context import block_text, compiled

CONTEXT_URI = "canon://context"
CONTEXT_NAME = "context"
CONTEXT_TITLE = "My compiled context"
CONTEXT_DESCRIPTION = (
    "The context block of this token's agent for a turn, compiled now: its boundaries (the team's "
    "accepted decisions), its memories and the current session, as markdown."
)

PROMPT_NAME = "start_of_turn"
PROMPT_TITLE = "Start of turn"
PROMPT_DESCRIPTION = (
    "Begin a turn with your compiled context (the most relevant past knowledge too, given the task) and "
    "how to record what the turn decides and learns."
)

# What the prompt says after the block: the tools that keep the ledger in step with the turn.
GUIDE = """\
---

While you work, keep Canon in step:

- Follow the boundaries above. To change one, or to settle something new for the team, propose it with
  `submit_inbox_entry`; a coordinator merges or rejects it.
- Record what you learn with `record_memory`. Tagged `cross-team`, it is proposed to every agent instead.
- `search` finds past decisions, memories, episodes and session summaries for any question.
- When the run ends, `record_episode` says what it tried and how it ended, and `scribe_run` merges its
  learnings and notes it in the session."""


def _refused(message: str) -> Exception:
    return MCPError(code=INVALID_PARAMS, message=message)


def _failed(message: str) -> Exception:
    return MCPError(code=INTERNAL_ERROR, message=message)


def _block(answer: Answer) -> str:
    return block_text(answer, _failed)


def context_text(caller: Caller) -> str:
    """The resource: the token's agent's block; a coordinator token has no agent of its own."""
    if caller.agent is None:
        raise ApiRefusal(
            400,
            f"{CONTEXT_URI} is an agent token's own context; a coordinator token names the agent with "
            "the compile_context tool",
        )
    return _block(compiled(caller, None))


def start_of_turn_text(caller: Caller, *, task: str = "", agent: str = "") -> str:
    """The prompt: the block for the turn (`agent`: an agent token's own by default), then the guide."""
    return f"{_block(compiled(caller, agent or None, task=task or None))}\n\n{GUIDE}"


def read_context(caller_of: CallerOf, ctx: Context) -> str:
    """Read `canon://context` as the caller of `ctx`."""
    return refusals_as(_refused, lambda: context_text(acting(caller_of, ctx)))


def start_of_turn_prompt(caller_of: CallerOf) -> Prompt:
    """The prompt `start_of_turn`, answered for the caller of each request."""

    def start_of_turn(
        ctx: Context,
        task: Annotated[
            str,
            Field(
                description=f"the turn's task, at most {TASK_MAX_LENGTH} characters (optional): adds the "
                "past knowledge most relevant to it"
            ),
        ] = "",
        agent: Annotated[
            str,
            Field(
                description="the agent whose turn it is; an agent token: itself, a coordinator token must say"
            ),
        ] = "",
    ) -> str:
        return refusals_as(
            _refused, lambda: start_of_turn_text(acting(caller_of, ctx), task=task, agent=agent)
        )

    return Prompt.from_function(
        start_of_turn, name=PROMPT_NAME, title=PROMPT_TITLE, description=PROMPT_DESCRIPTION
    )
