"""Episode routes (docs/ledger.md "Episodes", docs/api.md): what a run tried and how it ended.

An agent token records and reads its own agent's episodes only: naming another agent is refused with
403, and another agent's episode is not found (404), as if absent. A coordinator records for the agent
it names and reads them all.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger import services
from ledger.api.base import ApiRefusal, Caller, api, listed, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.api.shapes import EpisodeIn, EpisodeOut, EpisodeQuery, Paging
from ledger.filters import EpisodeFilter
from ledger.models import Episode, EpisodeSource

EPISODES = "/projects/{project}/episodes"


def episode_rows(caller: Caller) -> QuerySet[Episode]:
    """The project's episodes `caller` may read, newest first: an agent token's own, or all."""
    rows = (
        Episode.objects.filter(project=caller.project).select_related("agent").order_by("-created_at", "-id")
    )
    return rows.filter(agent=caller.agent) if caller.agent is not None else rows


def episode_record_as(caller: Caller, payload: EpisodeIn, via: str = "api") -> services.EpisodeResult:
    """Record `payload` as `caller`: an agent token for its own agent (naming another is refused), a
    coordinator token for the agent it must name; the episode's `source` says which."""
    agent_name = caller.agent_named(payload.agent_name, "a coordinator token must say whose run this was")
    return services.episode_record(
        project=caller.project,
        **payload.model_dump(exclude={"agent_name"}),
        agent_name=agent_name,
        agent=caller.agent,
        source=EpisodeSource.COORDINATOR if caller.is_coordinator else EpisodeSource.AGENT,
        by=caller.name,
        via=via,
    )


def visible_episode(caller: Caller, episode_id: int) -> Episode:
    episode = episode_rows(caller).filter(pk=episode_id).first()
    if episode is None:
        raise ApiRefusal(404, f"no episode {episode_id} in this project")
    return episode


@api.post(EPISODES, response={200: EpisodeOut, 201: EpisodeOut, **WRITE_ERRORS}, tags=["episodes"])
def record_episode(request: HttpRequest, project: str, payload: EpisodeIn) -> Status:
    """Record what a run tried and how it ended. 201 when new, 200 when the run's episode was updated
    (a retry, or the run's own report replacing the Scribe's)."""
    caller = project_caller(request, project)
    result = episode_record_as(caller, payload)
    return Status(201 if result.created else 200, result.episode)


@api.get(EPISODES, response={200: list[EpisodeOut], **ERRORS}, tags=["episodes"])
def list_episodes(
    request: HttpRequest,
    project: str,
    response: HttpResponse,
    filters: Query[EpisodeQuery],
    paging: Query[Paging],
) -> list[Episode]:
    """Episodes newest first (`q`: best match first), every outcome unless `outcome` is given."""
    caller = project_caller(request, project)
    return listed(EpisodeFilter, episode_rows(caller), filters, paging, response)


@api.get(EPISODES + "/{episode_id}", response={200: EpisodeOut, **ERRORS}, tags=["episodes"])
def get_episode(request: HttpRequest, project: str, episode_id: int) -> Episode:
    caller = project_caller(request, project)
    return visible_episode(caller, episode_id)
