"""What each tool answers, as its output schema states it (docs/mcp.md "Answers").

The rows are the API's response shapes (`ledger.actions.answers`) as their JSON reads: each field under
the name it is written with (`agent_name`, not the relation `agent.name` it is read from), required
unless the API leaves it out. The answers only MCP gives (what recording a memory did, the mirror's and
the Scribe's reports, who is asking) are declared here, each from the dict its action answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from ledger.actions.answers import (
    ContextOut,
    DecisionOut,
    EntryOut,
    EpisodeOut,
    MemoryOut,
    MemoryRecordedOut,
    MergeOut,
    RejectOut,
    SearchOut,
    SessionOut,
)


def wire(shape: type[BaseModel], *, optional: Iterable[str] = ()) -> type[BaseModel]:
    """`shape` as its JSON reads: each field under its own name, required unless it has a default or is
    one of `optional` (a field the answer leaves out when it is null)."""
    left_out = set(optional)
    fields: dict[str, Any] = {}
    for name, info in shape.model_fields.items():
        default = None if name in left_out else (... if info.is_required() else info.default)
        fields[name] = (info.annotation, Field(default, description=info.description))
    model: type[BaseModel] = create_model(shape.__name__, __doc__=shape.__doc__, **fields)
    return model


Entry = wire(EntryOut)
# The merge leaves out whichever of `decision_id` and `memory_id` is null.
Merge = wire(MergeOut, optional={"merged_at"})
Reject = wire(RejectOut)
Decision = wire(DecisionOut)
Memory = wire(MemoryOut)
MemoryRecorded = wire(MemoryRecordedOut)
Session = wire(SessionOut)
Episode = wire(EpisodeOut)
Context = wire(ContextOut)
Search = wire(SearchOut)


class Recorded(BaseModel):
    """What `record_memory` did: `kind` `memory` with the memory (new, or the same content already
    there), or, for an agent's memory tagged `cross-team`, `kind` `proposal` with the pending inbox entry
    a coordinator will merge or reject. `message` says which in words."""

    kind: Literal["memory", "proposal"]
    memory: MemoryRecorded | None = None  # type: ignore[valid-type]
    entry: Entry | None = None  # type: ignore[valid-type]
    message: str


# The mirror's reports (`ledger.mirror.reports`): per file, what happened to it.


class PathReason(BaseModel):
    path: str
    reason: str


class PathBackup(BaseModel):
    path: str
    backup: str


class PathError(BaseModel):
    path: str
    error: str


class PathWhat(BaseModel):
    path: str
    what: str


class ExportReport(BaseModel):
    """What an export wrote into the workspace, file by file; `ok` false with `errors` for the paths it
    could not write."""

    ok: bool
    dry_run: bool
    written: list[str]
    unchanged: int
    removed: list[str]
    kept: list[PathReason]
    backed_up: list[PathBackup]
    errors: list[PathError]
    error: str | None = Field(None, description="what stopped the export part way, if anything")


class ImportReport(BaseModel):
    """What an import adopted from the workspace, file by file; skipped files and conflicts are
    warnings."""

    ok: bool
    dry_run: bool
    created: list[str]
    adopted: list[PathWhat]
    merged: list[PathWhat]
    unchanged: int
    skipped: list[PathReason]
    conflicts: list[PathReason]
    indexed: list[PathWhat]
    changed: list[PathWhat]
    retired: list[PathWhat]
    proposed: list[PathWhat]
    withdrawn: list[PathWhat]
    archived: list[PathWhat]
    edited: list[PathWhat]
    cleaned: list[PathWhat]
    lines: list[PathWhat]
    error: str | None = Field(None, description="what stopped the import part way, if anything")


# The Scribe's report (`ledger.scribe.ScribeResult`).


class ScribedEntry(BaseModel):
    id: int
    slug: str
    type: str
    title: str
    status: str
    decision_id: int | None
    memory_id: int | None


class ReviewedEntry(ScribedEntry):
    reason: str = Field(description="why the entry waits for a person")


class ScribeReport(BaseModel):
    """What the Scribe did after a run: the entries it merged, those left for a person (each with why),
    the line it noted in the open session, and the episode it wrote when the run had none."""

    merged: list[ScribedEntry]
    needs_review: list[ReviewedEntry]
    summary_line: str
    summary_appended: bool
    episode_id: int | None


# Who is asking.


class Limits(BaseModel):
    writes_per_minute: int = Field(description="CANON_AGENT_WRITES_PER_MINUTE; 0: no limit")
    writes_left: int | None = Field(
        description="writes this token may still make in the current minute; null: not counted "
        "(a coordinator token, or no limit)"
    )


class Identity(BaseModel):
    """The token's project, the agent it acts as (null for a coordinator), its role, the project's
    agents, and the writes it has left."""

    project: str = Field(description="the project's slug")
    project_name: str
    agent: str | None = Field(description="the agent an agent token acts as; null for a coordinator token")
    role: Literal["agent", "coordinator"]
    acts_as: str = Field(description="the name the audit trail and reviews give this token")
    coordinator_agent: str = Field(description="the project's coordinator agent")
    agents: list[str] = Field(description="the project's agents, by name")
    limits: Limits
