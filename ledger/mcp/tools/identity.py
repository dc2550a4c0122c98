"""Who is asking: the tool a model calls first to learn its project, its agent, its role and its limits."""

from __future__ import annotations

from django.conf import settings

from ledger.actions.frame import Caller
from ledger.mcp.frame import Answer, tool
from ledger.mcp.shapes import Identity, Limits
from ledger.models import Agent


@tool(title="Who am I", output=Identity, read_only=True)
def whoami(caller: Caller) -> Answer:
    """Say who this token is: its project, the agent it acts as (none for a coordinator), its role, the
    project's agents, and the writes it has left this minute."""
    project = caller.project
    agents = Agent.objects.filter(project=project).order_by("name").values_list("name", flat=True)
    return Identity(
        project=project.slug,
        project_name=project.name,
        agent=caller.agent.name if caller.agent is not None else None,
        role="coordinator" if caller.is_coordinator else "agent",
        acts_as=caller.name,
        coordinator_agent=project.coordinator_agent,
        agents=list(agents),
        limits=Limits(
            writes_per_minute=max(0, settings.CANON_AGENT_WRITES_PER_MINUTE), writes_left=caller.writes_left()
        ),
    ).model_dump(mode="json")
