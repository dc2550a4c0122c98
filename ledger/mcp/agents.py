"""Agent names as the tools take them: the token's own agent when a tool for one agent is given none, and
a name no agent of the project has refused with the nearest names it has, so that a typo is said rather
than answered with an empty list or an empty context block.

A tool that writes for an agent still takes a new name from a coordinator token: that is how a
coordinator brings an agent into the project, as over the API.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel
from rapidfuzz import fuzz, process

from ledger import selectors
from ledger.actions.frame import ApiRefusal, Caller
from ledger.models import Agent, Project
from ledger.services import invalid
from ledger.values import InvalidValue, agent_key

# A known name at least this similar (rapidfuzz's ratio, 0-100) to an unknown one is suggested.
SIMILAR = 60
SUGGESTED = 3
# Without a near name, the refusal lists this many of the project's agents.
LISTED = 10


def own_or_named(caller: Caller, name: str | None, field: str, missing: str) -> str:
    """The agent a tool reading one agent's rows is for: `name`, spelled as the project spells it, or the
    token's own agent. A coordinator token must name one (`missing` says so, on `field`)."""
    if name is None:
        if caller.agent is None:
            raise invalid(field, missing)
        return caller.agent.name
    return known_agent(caller.project, name, field)


Filters = TypeVar("Filters", bound=BaseModel)


def known_filter(caller: Caller, filters: Filters) -> Filters:
    """A list's filters with its `agent`, when given, as the project spells it; refused, naming the
    nearest agents, when no agent of the project has it."""
    agent = getattr(filters, "agent", None)
    if agent is None:
        return filters
    return filters.model_copy(update={"agent": known_agent(caller.project, agent, "agent")})


def known_agent(project: Project, name: str, field: str) -> str:
    """`name` as the project spells it (any case): refused, naming the nearest agents, when no agent of
    the project has it. The coordinator agent is known without a row of its own."""
    try:
        key = agent_key(name)
    except InvalidValue as exc:
        raise invalid(field, str(exc)) from exc
    agent = selectors.agent_find(project, name)
    if agent is not None:
        return agent.name
    if key == agent_key(project.coordinator_agent):
        return project.coordinator_agent
    names = list(Agent.objects.filter(project=project).order_by("name").values_list("name", flat=True))
    raise ApiRefusal(404, unknown_agent(name, names))


def unknown_agent(name: str, names: list[str]) -> str:
    """The refusal of `name`, which none of `names` is: the nearest of them, or those there are."""
    said = f"no agent {name!r} in this project"
    if not names:
        return f"{said}, which has no agents yet"
    near = process.extract(
        name.casefold(),
        {known: known.casefold() for known in names},
        scorer=fuzz.ratio,
        limit=SUGGESTED,
        score_cutoff=SIMILAR,
    )
    if near:
        return f"{said}; did you mean: {', '.join(known for _, _, known in near)}?"
    shown = ", ".join(names[:LISTED]) + (f", … ({len(names)} in all)" if len(names) > LISTED else "")
    return f"{said}; its agents: {shown}"
