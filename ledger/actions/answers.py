"""What each action answers (docs/api.md): the JSON shapes the API's routes document and the MCP tools
declare as their output schemas. The actions return model instances or dicts; these read them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema
from pydantic import Field

from ledger.models import Decision, InboxEntry
from ledger.services.inbox import entry_version


class ErrorOut(Schema):
    error: str
    # Each with `field` and `message`; a refused merge's competitors also with `kind`, `id`, `type`,
    # `title` and `status`.
    details: list[dict[str, Any]] = []


# Responses: the routes return model instances, read through these (`agent.name` follows the relation).


class EntryOut(Schema):
    id: int
    agent_name: str = Field(alias="agent.name")
    slug: str
    type: str
    title: str
    content: str
    rationale: str
    tags: list[str]
    importance: str
    run_id: str
    status: str
    decision_id: int | None
    memory_id: int | None
    merged_at: datetime | None
    reviewed_by: str
    reviewed_at: datetime | None
    reason: str
    source: str
    created_at: datetime
    updated_at: datetime
    # What a reviewer read, as one string (`services.inbox.entry_version`): a merge sends it back.
    version: str

    @staticmethod
    def resolve_version(entry: InboxEntry) -> str:
        return entry_version(entry)


class MergeOut(Schema):
    id: int
    status: str
    decision_id: int | None = None
    memory_id: int | None = None
    merged_at: datetime | None
    # The entry's agent already held this memory: nothing new was written, `memory_id` is that one.
    already_recorded: bool = False
    superseded: list[int] = []
    rejected: list[int] = []
    message: str = ""


class RejectOut(Schema):
    id: int
    status: str
    reason: str
    reviewed_by: str
    reviewed_at: datetime | None


class RevisionOut(Schema):
    title: str
    content: str
    rationale: str
    changed_by: str
    changed_at: datetime


# Reads each decision's `supersedes`, `revisions` and `source_entry`: `ledger.actions.decisions.decision_rows`
# prefetches and selects them, so that a list's queries do not grow with its rows.
class DecisionOut(Schema):
    id: int
    agent_name: str = Field(alias="agent.name")
    type: str
    status: str
    title: str
    content: str
    rationale: str
    tags: list[str]
    superseded_by_id: int | None
    supersedes: list[int]
    source_entry_id: int | None
    revisions: list[RevisionOut]
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_supersedes(decision: Decision) -> list[int]:
        return sorted(old.pk for old in decision.supersedes.all())

    @staticmethod
    def resolve_source_entry_id(decision: Decision) -> int | None:
        entry = getattr(decision, "source_entry", None)  # the reverse one-to-one: absent raises
        return entry.pk if entry is not None else None


class MemoryOut(Schema):
    id: int
    agent_name: str = Field(alias="agent.name")
    type: str
    importance: str
    content: str
    tags: list[str]
    session_id: str
    source: str
    injected_by: str
    category: str
    content_sha256: str
    tokens: int
    status: str
    pinned: bool
    expires_at: datetime | None
    expired: bool
    superseded_by: int | None = Field(alias="superseded_by_id")
    similar_to: int | None = Field(alias="similar_to_id")
    similarity: int | None
    created_at: datetime
    updated_at: datetime


class MemoryRecordedOut(MemoryOut):
    """A recorded memory, and whether it was there already (the same content, kept once)."""

    already_recorded: bool
    # The memory already there had expired: its expiry started again.
    renewed: bool
    message: str


class SessionOut(Schema):
    session_id: str
    focus_area: str
    active_issues: list[str]
    summary: str
    serialized_state: Any
    # Who wrote the text every agent reads: the focus's and the issues' last writer, the summary's writers.
    focus_by: str
    issues_by: str
    summary_by: list[str]
    started_at: datetime
    ended_at: datetime | None


class EpisodeOut(Schema):
    id: int
    agent_name: str = Field(alias="agent.name")
    run_id: str
    outcome: str
    tried: str
    files: list[str]
    change_url: str
    difficulties: str
    feedback: str
    source: str
    tokens: int
    created_at: datetime
    updated_at: datetime


class LayerOut(Schema):
    tokens: int
    ids: list[int]
    budget: int | None


class RelevantLayerOut(LayerOut):
    """The relevant layer: `ids` are its memories; its episodes and decisions are listed apart, each
    in block order."""

    episodes: list[int]
    decisions: list[int]


class SessionLayerOut(LayerOut):
    cut: int


class LayersOut(Schema):
    boundaries: LayerOut
    memory: LayerOut
    relevant: RelevantLayerOut
    session: SessionLayerOut


class ContextOut(Schema):
    text: str | None
    tokens: int
    sha256: str | None
    layers: LayersOut
    skipped: list[int]
    error: str | None = None


class WhyOut(Schema):
    field: str
    words: list[str]


class HitOut(Schema):
    kind: str
    id: int
    title: str
    excerpt: str
    score: float
    why: list[WhyOut]
    words: list[str]
    status: str
    agent: str
    created_at: datetime
    session_id: str
    run_id: str
    path: str


class SearchOut(Schema):
    q: str
    words: list[str]
    limit: int
    hits: list[HitOut]
