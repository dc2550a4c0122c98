"""Episodes (docs/ledger.md "Episodes"): what a run tried and how it ended.

An agent records and reads its own agent's episodes only: naming another agent is refused with 403,
and another agent's episode is not found (404), as if absent. A coordinator records for the agent it
names and reads them all.
"""

from __future__ import annotations

from django.db.models import QuerySet

from ledger import services, visibility
from ledger.actions.frame import ApiRefusal, Caller
from ledger.actions.shapes import EpisodeIn
from ledger.models import Episode, EpisodeSource


def episode_rows(caller: Caller) -> QuerySet[Episode]:
    """The project's episodes `caller` may read, newest first: an agent's own, or all."""
    rows = (
        Episode.objects.filter(project=caller.project).select_related("agent").order_by("-created_at", "-id")
    )
    return rows.filter(visibility.episode_readable(caller.agent)) if caller.agent is not None else rows


def episode_record_as(caller: Caller, payload: EpisodeIn, via: str | None = None) -> services.EpisodeResult:
    """Record `payload` as `caller`: an agent for its own agent (naming another is refused), a
    coordinator for the agent it must name; the episode's `source` says which."""
    agent_name = caller.agent_named(payload.agent_name, "a coordinator token must say whose run this was")
    return services.episode_record(
        project=caller.project,
        **payload.model_dump(exclude={"agent_name"}),
        agent_name=agent_name,
        agent=caller.agent,
        source=EpisodeSource.COORDINATOR if caller.is_coordinator else EpisodeSource.AGENT,
        by=caller.name,
        via=via or caller.via,
    )


def visible_episode(caller: Caller, episode_id: int) -> Episode:
    episode = episode_rows(caller).filter(pk=episode_id).first()
    if episode is None:
        raise ApiRefusal(404, f"no episode {episode_id} in this project")
    return episode
