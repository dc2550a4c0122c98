"""Request and response shapes of the agent API (SPEC §3). JSON keys are snake_case everywhere."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema
from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, model_validator

from ledger.models import AgentMemory, Decision, InboxEntry, Session


class In(BaseModel):
    """Request bodies: a JSON object, strict types (a number is not a string), unknown keys ignored.

    A plain pydantic model rather than a ninja `Schema`: a `Schema` also reads attributes of any
    object, so a body of `[]` or `42` would pass as "no fields given" wherever every field is optional.
    """

    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _json_object(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"the request body must be a JSON object, not {_json_type(data)}")
        return data


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


Tags = StrictStr | list[StrictStr] | None


class EntrySubmitIn(In):
    agent_name: StrictStr | None = None
    slug: StrictStr
    type: StrictStr
    title: StrictStr = ""
    content: StrictStr
    rationale: StrictStr = ""
    tags: Tags = None
    importance: StrictStr | None = None
    run_id: StrictStr = ""


class RejectIn(In):
    reason: StrictStr = ""


class DecisionCreateIn(In):
    agent_name: StrictStr
    type: StrictStr
    title: StrictStr
    content: StrictStr
    rationale: StrictStr = ""
    tags: Tags = None
    supersedes: list[StrictInt] = []


class DecisionPatchIn(In):
    title: StrictStr | None = None
    content: StrictStr | None = None
    rationale: StrictStr | None = None
    status: StrictStr | None = None
    superseded_by_id: StrictInt | None = None


class MemoryIn(In):
    type: StrictStr
    importance: StrictStr | None = None
    content: StrictStr
    tags: Tags = None
    session_id: StrictStr = ""


class MemoryPatchIn(In):
    content: StrictStr | None = None
    importance: StrictStr | None = None
    tags: Tags = None
    status: StrictStr | None = None


class SessionIn(In):
    session_id: StrictStr | None = None
    focus_area: StrictStr = ""
    active_issues: list[StrictStr] = []
    summary: StrictStr = ""
    serialized_state: Any = None


class SessionPatchIn(In):
    focus_area: StrictStr | None = None
    active_issues: list[StrictStr] | None = None
    summary: StrictStr | None = None
    summary_append: StrictStr | None = None
    serialized_state: Any = None
    end: StrictBool = False


class ErrorOut(Schema):
    error: str
    details: list[dict[str, str]] = []


class EntryOut(Schema):
    id: int
    agent_name: str
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


class MergeOut(Schema):
    id: int
    status: str
    decision_id: int | None = None
    memory_id: int | None = None
    merged_at: datetime | None


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


class DecisionOut(Schema):
    id: int
    agent_name: str
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


class MemoryOut(Schema):
    id: int
    agent_name: str
    type: str
    importance: str
    content: str
    tags: list[str]
    session_id: str
    source: str
    injected_by: str
    content_sha256: str
    tokens: int
    status: str
    created_at: datetime
    updated_at: datetime


class SessionOut(Schema):
    session_id: str
    focus_area: str
    active_issues: list[str]
    summary: str
    serialized_state: Any
    started_at: datetime
    ended_at: datetime | None


def entry_out(entry: InboxEntry) -> dict[str, Any]:
    return {
        "id": entry.pk,
        "agent_name": entry.agent.name,
        "slug": entry.slug,
        "type": entry.type,
        "title": entry.title,
        "content": entry.content,
        "rationale": entry.rationale,
        "tags": list(entry.tags),
        "importance": entry.importance,
        "run_id": entry.run_id,
        "status": entry.status,
        "decision_id": entry.decision_id,
        "memory_id": entry.memory_id,
        "merged_at": entry.merged_at,
        "reviewed_by": entry.reviewed_by,
        "reviewed_at": entry.reviewed_at,
        "reason": entry.reason,
        "source": entry.source,
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
    }


def decision_out(decision: Decision) -> dict[str, Any]:
    """Expects `supersedes` and `revisions` prefetched and `source_entry` selected (see `decision_rows`)."""
    source_entry = getattr(decision, "source_entry", None)
    return {
        "id": decision.pk,
        "agent_name": decision.agent.name,
        "type": decision.type,
        "status": decision.status,
        "title": decision.title,
        "content": decision.content,
        "rationale": decision.rationale,
        "tags": list(decision.tags),
        "superseded_by_id": decision.superseded_by_id,
        "supersedes": sorted(old.pk for old in decision.supersedes.all()),
        "source_entry_id": source_entry.pk if source_entry is not None else None,
        "revisions": [
            {
                "title": r.title,
                "content": r.content,
                "rationale": r.rationale,
                "changed_by": r.changed_by,
                "changed_at": r.changed_at,
            }
            for r in decision.revisions.all()
        ],
        "created_at": decision.created_at,
        "updated_at": decision.updated_at,
    }


def memory_out(memory: AgentMemory) -> dict[str, Any]:
    return {
        "id": memory.pk,
        "agent_name": memory.agent.name,
        "type": memory.type,
        "importance": memory.importance,
        "content": memory.content,
        "tags": list(memory.tags),
        "session_id": memory.session_id,
        "source": memory.source,
        "injected_by": memory.injected_by,
        "content_sha256": memory.content_sha256,
        "tokens": memory.tokens,
        "status": memory.status,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
    }


def session_out(session: Session) -> dict[str, Any]:
    return {
        "session_id": session.session_id,
        "focus_area": session.focus_area,
        "active_issues": list(session.active_issues),
        "summary": session.summary,
        "serialized_state": session.serialized_state,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
    }
