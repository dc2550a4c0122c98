"""Episodes as tools (docs/ledger.md "Episodes"): what a run tried and how it ended."""

from __future__ import annotations

from ledger.actions.answers import EpisodeOut
from ledger.actions.episodes import episode_record_as, episode_rows
from ledger.actions.frame import Caller
from ledger.actions.shapes import EpisodeIn, EpisodeQuery
from ledger.filters import EpisodeFilter
from ledger.mcp import lists, shapes
from ledger.mcp.agents import known_filter
from ledger.mcp.frame import Answer, tool
from ledger.mcp.params import (
    DEFAULT_LIMIT,
    Compact,
    Limit,
    Offset,
)


@tool(title="Record an episode", output=shapes.Episode, idempotent=True, takes=EpisodeIn)
def record_episode(caller: Caller, payload: EpisodeIn) -> Answer:
    """Record what a run tried and how it ended; the same run again updates its episode."""
    result = episode_record_as(caller, payload)
    return EpisodeOut.from_orm(result.episode).model_dump(mode="json")


@tool(title="List episodes", output=lists.EPISODES.page, read_only=True, takes=EpisodeQuery)
def list_episodes(
    caller: Caller,
    payload: EpisodeQuery,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    compact: Compact = False,
) -> Answer:
    """List episodes newest first (an agent token: its own), by agent, outcome, source, run or text."""
    filters = known_filter(caller, payload)
    rows = episode_rows(caller)
    return lists.listing(
        lists.EPISODES, EpisodeFilter, rows, filters, limit=limit, offset=offset, compact=compact
    )
