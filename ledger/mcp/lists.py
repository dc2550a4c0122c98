"""The lists the tools answer: one page through the API's own filtering and paging, as
`{total, offset, limit, items}`, each row in the API's shape or, with `compact: true`, as a brief row
(its id, what names it, its status, its agent and when it was made).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django_filters import FilterSet
from ninja import Schema
from pydantic import BaseModel, Field, create_model

from ledger.actions.answers import DecisionOut, EntryOut, EpisodeOut, MemoryOut
from ledger.actions.frame import listed
from ledger.actions.shapes import Paging
from ledger.mcp import shapes
from ledger.mcp.frame import Answer
from ledger.models import AgentMemory, Decision, Episode, InboxEntry
from ledger.services.fields import summary_line

# How much of a memory's text its brief row shows as its title.
MEMORY_TITLE_LENGTH = 80


class BriefEntry(BaseModel):
    id: int
    slug: str
    title: str
    status: str
    agent_name: str
    created_at: datetime


class BriefDecision(BaseModel):
    id: int
    title: str
    status: str
    agent_name: str
    created_at: datetime


class BriefMemory(BaseModel):
    id: int
    title: str = Field(description=f"the memory's text on one line, cut at {MEMORY_TITLE_LENGTH} characters")
    status: str
    agent_name: str
    created_at: datetime


class BriefEpisode(BaseModel):
    id: int
    run_id: str
    outcome: str
    agent_name: str
    created_at: datetime


def _brief_entry(entry: InboxEntry) -> BaseModel:
    return BriefEntry(
        id=entry.pk,
        slug=entry.slug,
        title=entry.title,
        status=entry.status,
        agent_name=entry.agent.name,
        created_at=entry.created_at,
    )


def _brief_decision(decision: Decision) -> BaseModel:
    return BriefDecision(
        id=decision.pk,
        title=decision.title,
        status=decision.status,
        agent_name=decision.agent.name,
        created_at=decision.created_at,
    )


def _brief_memory(memory: AgentMemory) -> BaseModel:
    return BriefMemory(
        id=memory.pk,
        title=summary_line(memory.content, MEMORY_TITLE_LENGTH),
        status=memory.status,
        agent_name=memory.agent.name,
        created_at=memory.created_at,
    )


def _brief_episode(episode: Episode) -> BaseModel:
    return BriefEpisode(
        id=episode.pk,
        run_id=episode.run_id,
        outcome=episode.outcome,
        agent_name=episode.agent.name,
        created_at=episode.created_at,
    )


@dataclass(frozen=True)
class Rows:
    """One kind of row a list answers: the API's shape of it, and its brief form."""

    out: type[Schema]
    row: type[BaseModel]
    brief: Callable[[Any], BaseModel]
    brief_row: type[BaseModel]

    @property
    def page(self) -> type[BaseModel]:
        """The output schema of a list of these rows."""
        fields: dict[str, Any] = {
            "total": (int, Field(description="how many rows match, over every page")),
            "offset": (int, Field(description="rows skipped from the start of the list")),
            "limit": (int, Field(description="the most rows this page holds")),
            "items": (
                list[self.row] | list[self.brief_row],  # type: ignore[name-defined]
                Field(description="the page, newest first (or best match first with q); brief with compact"),
            ),
        }
        model: type[BaseModel] = create_model(f"{self.out.__name__}Page", **fields)
        return model


ENTRIES = Rows(EntryOut, shapes.Entry, _brief_entry, BriefEntry)
DECISIONS = Rows(DecisionOut, shapes.Decision, _brief_decision, BriefDecision)
MEMORIES = Rows(MemoryOut, shapes.Memory, _brief_memory, BriefMemory)
EPISODES = Rows(EpisodeOut, shapes.Episode, _brief_episode, BriefEpisode)


def listing(
    rows: Rows,
    filterset: type[FilterSet],
    queryset: QuerySet[Any],
    filters: Schema,
    *,
    limit: int,
    offset: int,
    compact: bool,
    **fixed: str,
) -> Answer:
    """One page of `queryset` through the list's FilterSet and the API's paging (`filters` and the `fixed`
    ones the tool gives), every row in the API's shape, or brief with `compact`."""
    found = listed(filterset, queryset, filters, Paging(limit=limit, offset=offset), **fixed)
    if not compact:
        return found.answer(rows.out)
    return {
        "total": found.total,
        "offset": found.offset,
        "limit": found.limit,
        "items": [rows.brief(item).model_dump(mode="json") for item in found.items],
    }
