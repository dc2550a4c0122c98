"""Episode routes (docs/ledger.md "Episodes", docs/api.md): what a run tried and how it ended.

An agent token records and reads its own agent's episodes only: naming another agent is refused with
403, and another agent's episode is not found (404), as if absent. A coordinator records for the agent
it names and reads them all.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Query, Status

from ledger.actions.answers import EpisodeOut
from ledger.actions.episodes import episode_record_as, episode_rows, visible_episode
from ledger.actions.shapes import EpisodeIn, EpisodeQuery, Paging
from ledger.api.base import api, listed, project_caller
from ledger.api.routes_inbox import ERRORS, WRITE_ERRORS
from ledger.filters import EpisodeFilter
from ledger.models import Episode

EPISODES = "/projects/{project}/episodes"


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
