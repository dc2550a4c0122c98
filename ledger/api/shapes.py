"""Request and response shapes of the agent API (docs/api.md). JSON keys are snake_case everywhere."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from django_filters import FilterSet
from ninja import Query, Schema
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, model_validator

from ledger.filters import DecisionFilter, EpisodeFilter, InboxFilter, MemoryFilter
from ledger.models import (
    Decision,
    DecisionStatus,
    DecisionType,
    EntryType,
    EpisodeOutcome,
    Importance,
    InboxEntry,
    MemoryCategory,
    MemoryStatus,
    MemoryType,
)
from ledger.services import RUN_ID_MAX_LENGTH, SESSION_ID_MAX_LENGTH, TITLE_MAX_LENGTH
from ledger.services.episodes import (
    CHANGE_URL_MAX_LENGTH,
    EPISODE_FILES_MAX,
    EPISODE_PATH_MAX_LENGTH,
    EPISODE_TEXT_MAX_LENGTH,
)
from ledger.services.fields import (
    ACTIVE_ISSUE_MAX_LENGTH,
    ACTIVE_ISSUES_MAX,
    CONTENT_MAX_LENGTH,
    FOCUS_MAX_LENGTH,
    RATIONALE_MAX_LENGTH,
    REASON_MAX_LENGTH,
    SUMMARY_LINE_MAX_LENGTH,
    SUMMARY_MAX_LENGTH,
)
from ledger.services.inbox import VERSION_LENGTH, entry_version
from ledger.values import AGENT_NAME_MAX_LENGTH, MAX_TAGS, TAG_MAX_LENGTH

# ---------------------------------------------------------------------------------------------
# The rules of each field, stated in the OpenAPI schema so that a client (or a generator of test
# requests) knows which requests are valid. They are only stated: the services enforce them, with
# the messages and the 400 shape that every other entry point shares, so stating a rule here never
# changes which requests are accepted.

JsonSchema = dict[str, Any]


def stated(**rules: Any) -> Callable[[JsonSchema], None]:
    """`json_schema_extra` that adds `rules` to a field's schema: to its non-null branch when it is
    nullable, to each branch when the rule fits that branch's type (a string or an array)."""

    def extra(schema: JsonSchema) -> None:
        branches = [b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"]
        for branch in branches:
            kind = branch.get("type")
            for key, value in rules.items():
                if key in _RULES_FOR.get(kind, {key}):
                    branch[key] = value

    return extra


def stated_param(**rules: Any) -> Callable[[JsonSchema], None]:
    """The same for a query parameter: a query string cannot carry null, so the null branch goes."""

    def extra(schema: JsonSchema) -> None:
        branches = [b for b in schema.pop("anyOf", []) if b.get("type") != "null"]
        if branches:
            schema.update(branches[0])
        if "default" in schema and schema["default"] is None:
            del schema["default"]
        schema.update(rules)

    return extra


_RULES_FOR: dict[str, set[str]] = {
    "string": {"enum", "minLength", "maxLength", "pattern"},
    "array": {"minItems", "maxItems", "items"},
}

# Not blank: at least one character that is not white space (the services trim, then refuse empty).
NOT_BLANK = r"\S"
AGENT_NAME: JsonSchema = {"minLength": 1, "maxLength": AGENT_NAME_MAX_LENGTH, "pattern": NOT_BLANK}
TAG_LIST: JsonSchema = {
    "maxItems": MAX_TAGS,
    "items": {"type": "string", "maxLength": TAG_MAX_LENGTH, "pattern": "^[^,]*$"},
}
# The longest text of each field (docs/api.md "Limits"), as `ledger.services.fields` checks it.
CONTENT: JsonSchema = {"minLength": 1, "maxLength": CONTENT_MAX_LENGTH, "pattern": NOT_BLANK}
RATIONALE: JsonSchema = {"maxLength": RATIONALE_MAX_LENGTH}
REASON: JsonSchema = {"maxLength": REASON_MAX_LENGTH}
FOCUS: JsonSchema = {"maxLength": FOCUS_MAX_LENGTH}
ACTIVE_ISSUES: JsonSchema = {
    "maxItems": ACTIVE_ISSUES_MAX,
    "items": {"type": "string", "maxLength": ACTIVE_ISSUE_MAX_LENGTH},
}
SUMMARY: JsonSchema = {"maxLength": SUMMARY_MAX_LENGTH}
SUMMARY_LINE: JsonSchema = {"maxLength": SUMMARY_LINE_MAX_LENGTH}


def query_param(default: Any = None, **rules: Any) -> Any:
    """A query parameter with `rules` stated (ninja's `Query` has no `json_schema_extra` argument)."""
    param = Query(default)
    param.json_schema_extra = stated_param(**rules)
    return param


def agent_param(default: Any = None) -> Any:
    return query_param(default, **AGENT_NAME)


def _filter(**rules: Any) -> Any:
    """An optional query filter with `rules` stated, a field of a list's query (`InboxQuery`, …)."""
    return Field(None, json_schema_extra=stated_param(**rules))


def _choice(filterset: type[FilterSet], name: str) -> Any:
    """An optional query filter stated as taking the values its FilterSet takes (`all` included where
    it lists every status): the enum is read from the filter, so the two cannot drift apart."""
    return _filter(enum=[str(value) for value, _ in filterset.base_filters[name].extra["choices"]])


def _field(default: Any = ..., **rules: Any) -> Any:
    return Field(default, json_schema_extra=stated(**rules))


# ---------------------------------------------------------------------------------------------
# The query parameters of the lists. Each list narrows its rows with the dashboard's FilterSet
# (ledger/filters.py), which checks the values; these state them in the schema.

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


class Paging(Schema):
    """`limit` rows from `offset` (`ledger.api.base.page` checks the ranges stated here)."""

    limit: int = Field(DEFAULT_PAGE_SIZE, json_schema_extra={"minimum": 1, "maximum": MAX_PAGE_SIZE})
    offset: int = Field(0, json_schema_extra={"minimum": 0})


class InboxQuery(Schema):
    status: str | None = _choice(InboxFilter, "status")
    type: str | None = _choice(InboxFilter, "type")
    agent: str | None = _filter(**AGENT_NAME)
    run_id: str | None = _filter(maxLength=RUN_ID_MAX_LENGTH)
    q: str | None = _filter()


class DecisionQuery(Schema):
    status: str | None = _choice(DecisionFilter, "status")
    type: str | None = _choice(DecisionFilter, "type")
    agent: str | None = _filter(**AGENT_NAME)
    q: str | None = _filter()


class MemoryQuery(Schema):
    type: str | None = _choice(MemoryFilter, "type")
    tags: str | None = _filter()
    agent: str | None = _filter(**AGENT_NAME)
    q: str | None = _filter()
    importance: str | None = _choice(MemoryFilter, "importance")
    status: str | None = _choice(MemoryFilter, "status")
    expired: str | None = _choice(MemoryFilter, "expired")
    similar: bool | None = None


# One agent's memories: the agent is in the path.
class AgentMemoryQuery(Schema):
    type: str | None = _choice(MemoryFilter, "type")
    importance: str | None = _choice(MemoryFilter, "importance")
    status: str | None = _choice(MemoryFilter, "status")
    expired: str | None = _choice(MemoryFilter, "expired")
    similar: bool | None = None


class EpisodeQuery(Schema):
    agent: str | None = _filter(**AGENT_NAME)
    outcome: str | None = _choice(EpisodeFilter, "outcome")
    source: str | None = _choice(EpisodeFilter, "source")
    run_id: str | None = _filter(maxLength=RUN_ID_MAX_LENGTH)
    q: str | None = _filter()


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


# A list of tags, or one string of comma-separated tags.
Tags = Annotated[StrictStr | list[StrictStr] | None, Field(json_schema_extra=stated(**TAG_LIST))]


class EntrySubmitIn(In):
    agent_name: StrictStr | None = _field(None, **AGENT_NAME)
    slug: StrictStr = _field(pattern="[A-Za-z0-9]")
    type: StrictStr = _field(enum=EntryType.values)
    title: StrictStr = _field("", maxLength=TITLE_MAX_LENGTH)
    content: StrictStr = _field(**CONTENT)
    rationale: StrictStr = _field("", **RATIONALE)
    tags: Tags = None
    importance: StrictStr | None = _field(None, enum=Importance.values)
    run_id: StrictStr = _field("", maxLength=RUN_ID_MAX_LENGTH)


class RejectIn(In):
    reason: StrictStr = _field("", **REASON)


class MergeIn(In):
    """A reviewer's choices for a merge (docs/ledger.md "Inbox: review"); an empty body chooses none."""

    # Merge a flagged entry anyway: its text was read whole.
    confirm_flagged: StrictBool = False
    # Keep the competing boundaries not superseded or rejected below, beside the merged one.
    keep_both: StrictBool = False
    # Active decisions the merged decision supersedes.
    supersede: list[StrictInt] = []
    # Pending entries rejected in the same step, with `reason`.
    reject: list[StrictInt] = []
    reason: StrictStr = _field("", **REASON)
    # The entry's `version` as the reviewer read it: the merge is refused (409) when the entry changed
    # since. Recommended; without it the entry is merged as it is now.
    version: StrictStr | None = _field(None, maxLength=VERSION_LENGTH)


class DecisionCreateIn(In):
    agent_name: StrictStr = _field(**AGENT_NAME)
    type: StrictStr = _field(enum=DecisionType.values)
    title: StrictStr = _field(minLength=1, maxLength=TITLE_MAX_LENGTH, pattern=NOT_BLANK)
    content: StrictStr = _field(**CONTENT)
    rationale: StrictStr = _field("", **RATIONALE)
    tags: Tags = None
    supersedes: list[StrictInt] = []


class DecisionPatchIn(In):
    title: StrictStr | None = _field(None, minLength=1, maxLength=TITLE_MAX_LENGTH, pattern=NOT_BLANK)
    content: StrictStr | None = _field(None, **CONTENT)
    rationale: StrictStr | None = _field(None, **RATIONALE)
    status: StrictStr | None = _field(None, enum=DecisionStatus.values)
    superseded_by_id: StrictInt | None = None


class MemoryIn(In):
    type: StrictStr = _field(enum=MemoryType.values)
    importance: StrictStr | None = _field(None, enum=Importance.values)
    content: StrictStr = _field(**CONTENT)
    tags: Tags = None
    session_id: StrictStr = _field("", maxLength=SESSION_ID_MAX_LENGTH)
    # A coordinator's injected learning says what kind it is; an agent's memory has none.
    category: StrictStr = _field("", enum=["", *MemoryCategory.values])
    # The id of an active memory this one corrects: it becomes `superseded` by the new one.
    corrects: StrictInt | None = None
    # Coordinators only: a pinned memory never expires.
    pinned: StrictBool = False


class MemoryPatchIn(In):
    content: StrictStr | None = _field(None, **CONTENT)
    importance: StrictStr | None = _field(None, enum=Importance.values)
    tags: Tags = None
    # `superseded` comes only with what supersedes it (a correction or a merge).
    status: StrictStr | None = _field(None, enum=[MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED])
    # Coordinators only.
    pinned: StrictBool | None = None


class MemoryMergeIn(In):
    # The memory kept: the flagged one, or the earlier one it repeats (`similar_to`).
    keep: StrictInt


class SessionIn(In):
    session_id: StrictStr | None = _field(None, maxLength=SESSION_ID_MAX_LENGTH)
    focus_area: StrictStr = _field("", **FOCUS)
    active_issues: list[StrictStr] = _field([], **ACTIVE_ISSUES)
    summary: StrictStr = _field("", **SUMMARY)
    serialized_state: Any = None


class SessionPatchIn(In):
    focus_area: StrictStr | None = _field(None, **FOCUS)
    active_issues: list[StrictStr] | None = _field(None, **ACTIVE_ISSUES)
    summary: StrictStr | None = _field(None, **SUMMARY)
    summary_append: StrictStr | None = _field(None, **SUMMARY_LINE)
    serialized_state: Any = None
    end: StrictBool = False


EPISODE_TEXT: JsonSchema = {"maxLength": EPISODE_TEXT_MAX_LENGTH}


class EpisodeIn(In):
    agent_name: StrictStr | None = _field(None, **AGENT_NAME)
    run_id: StrictStr = _field(minLength=1, maxLength=RUN_ID_MAX_LENGTH, pattern=NOT_BLANK)
    outcome: StrictStr = _field(enum=EpisodeOutcome.values)
    tried: StrictStr = _field(minLength=1, pattern=NOT_BLANK, **EPISODE_TEXT)
    files: list[StrictStr] = _field(
        [], maxItems=EPISODE_FILES_MAX, items={"type": "string", "maxLength": EPISODE_PATH_MAX_LENGTH}
    )
    change_url: StrictStr = _field("", maxLength=CHANGE_URL_MAX_LENGTH, pattern="^(|https?://.+)$")
    difficulties: StrictStr = _field("", **EPISODE_TEXT)
    feedback: StrictStr = _field("", **EPISODE_TEXT)


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


# Reads each decision's `supersedes`, `revisions` and `source_entry`: `routes_decisions.decision_rows`
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
