"""What each action takes (docs/api.md): the fields of every request, declared once with their rules and
descriptions, from which the API's routes and the MCP tools both derive their parameters. JSON keys are
snake_case everywhere. What each action answers is in `ledger.actions.answers`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from django_filters import FilterSet
from ninja import Query, Schema
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, model_validator

from ledger.filters import DecisionFilter, EpisodeFilter, InboxFilter, MemoryFilter
from ledger.models import (
    DecisionStatus,
    DecisionType,
    EntryType,
    EpisodeOutcome,
    Importance,
    MemoryCategory,
    MemoryStatus,
    MemoryType,
)
from ledger.scribe import OUTCOME_MAX_LENGTH
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
from ledger.services.inbox import VERSION_LENGTH
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


def _filter(description: str, **rules: Any) -> Any:
    """An optional query filter with `rules` stated, a field of a list's query (`InboxQuery`, …)."""
    return Field(None, description=description, json_schema_extra=stated_param(**rules))


def choices_of(filterset: type[FilterSet], name: str) -> list[str]:
    """The values a list's filter takes (`all` included where it lists every status)."""
    return [str(value) for value, _ in filterset.base_filters[name].extra["choices"]]


def _choice(filterset: type[FilterSet], name: str, description: str) -> Any:
    """An optional query filter stated as taking the values its FilterSet takes: the enum is read from
    the filter, so the two cannot drift apart."""
    return _filter(description, enum=choices_of(filterset, name))


def _field(default: Any = ..., *, description: str, **rules: Any) -> Any:
    """A request field, described for whoever fills it in (a person reading the OpenAPI page, a model
    reading an MCP tool's schema), with `rules` stated in its schema."""
    return Field(default, description=description, json_schema_extra=stated(**rules))


# The descriptions the lists' filters share.
AGENT_FILTER = "only this agent's rows (any case)"
TEXT_SEARCH = "words to search for: any may match, rows holding all first (stemmed; the last a prefix)"
RUN_FILTER = "only this run's rows"


# ---------------------------------------------------------------------------------------------
# The query parameters of the lists. Each list narrows its rows with the dashboard's FilterSet
# (ledger/filters.py), which checks the values; these state them in the schema.

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


class Paging(Schema):
    """`limit` rows from `offset` (`ledger.actions.frame.page` checks the ranges stated here)."""

    limit: int = Field(DEFAULT_PAGE_SIZE, json_schema_extra={"minimum": 1, "maximum": MAX_PAGE_SIZE})
    offset: int = Field(0, json_schema_extra={"minimum": 0})


class InboxQuery(Schema):
    status: str | None = _choice(InboxFilter, "status", "default pending; all: every status")
    type: str | None = _choice(InboxFilter, "type", "only this type")
    agent: str | None = _filter(AGENT_FILTER, **AGENT_NAME)
    run_id: str | None = _filter(RUN_FILTER, maxLength=RUN_ID_MAX_LENGTH)
    q: str | None = _filter(TEXT_SEARCH)


class DecisionQuery(Schema):
    status: str | None = _choice(DecisionFilter, "status", "default active; all: every status")
    type: str | None = _choice(DecisionFilter, "type", "only this type")
    agent: str | None = _filter(AGENT_FILTER, **AGENT_NAME)
    q: str | None = _filter(TEXT_SEARCH)


EXPIRED = "expired memories: left out of the active list by default; true: only them, all: with the others"


class MemoryQuery(Schema):
    type: str | None = _choice(MemoryFilter, "type", "only this type")
    tags: str | None = _filter("any of these whole tags, comma-separated")
    agent: str | None = _filter(AGENT_FILTER, **AGENT_NAME)
    q: str | None = _filter(TEXT_SEARCH)
    importance: str | None = _choice(MemoryFilter, "importance", "only this importance")
    status: str | None = _choice(MemoryFilter, "status", "default active; all: every status")
    expired: str | None = _choice(MemoryFilter, "expired", EXPIRED)
    similar: bool | None = Field(default=None, description="true: only memories flagged as near-duplicates")


# One agent's memories: the agent is in the path.
class AgentMemoryQuery(Schema):
    type: str | None = _choice(MemoryFilter, "type", "only this type")
    importance: str | None = _choice(MemoryFilter, "importance", "only this importance")
    status: str | None = _choice(MemoryFilter, "status", "default active; all: every status")
    expired: str | None = _choice(MemoryFilter, "expired", EXPIRED)
    similar: bool | None = Field(default=None, description="true: only memories flagged as near-duplicates")


class EpisodeQuery(Schema):
    agent: str | None = _filter(AGENT_FILTER, **AGENT_NAME)
    outcome: str | None = _choice(EpisodeFilter, "outcome", "only this outcome")
    source: str | None = _choice(EpisodeFilter, "source", "only written by")
    run_id: str | None = _filter(RUN_FILTER, maxLength=RUN_ID_MAX_LENGTH)
    q: str | None = _filter("words to search for in tried, difficulties, feedback and files")


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
Tags = Annotated[
    StrictStr | list[StrictStr] | None,
    Field(
        description="tags: a list, or one comma-separated string; 'cross-team' shares with every agent",
        json_schema_extra=stated(**TAG_LIST),
    ),
]
# Who a write is for, where an agent may act only for itself.
ACTING_AGENT = (
    "the agent this is for; an agent token: itself (the default; it may name only itself), "
    "a coordinator token must name one"
)
IMPORTANCE = "high, medium (the default) or low"
OPTIONAL_RUN = "the run this comes from (optional)"


class EntrySubmitIn(In):
    agent_name: StrictStr | None = _field(None, description=ACTING_AGENT, **AGENT_NAME)
    slug: StrictStr = _field(
        description="short name, normalised (e.g. 'use-postgres')", pattern="[A-Za-z0-9]"
    )
    type: StrictStr = _field(description="the entry's type", enum=EntryType.values)
    title: StrictStr = _field("", description="one line (optional)", maxLength=TITLE_MAX_LENGTH)
    content: StrictStr = _field(description="the text itself, not blank", **CONTENT)
    rationale: StrictStr = _field("", description="why (optional)", **RATIONALE)
    tags: Tags = None
    importance: StrictStr | None = _field(None, description=IMPORTANCE, enum=Importance.values)
    run_id: StrictStr = _field("", description=OPTIONAL_RUN, maxLength=RUN_ID_MAX_LENGTH)


class RejectIn(In):
    reason: StrictStr = _field("", description="why (optional)", **REASON)


class MergeIn(In):
    """A reviewer's choices for a merge (docs/ledger.md "Inbox: review"); an empty body chooses none."""

    confirm_flagged: StrictBool = Field(
        default=False, description="merge a flagged entry anyway, its text read whole"
    )
    keep_both: StrictBool = Field(
        default=False,
        description="keep the competing boundaries not superseded or rejected beside the merged one",
    )
    supersede: list[StrictInt] = Field(
        default=[], description="ids of active decisions the merged one supersedes"
    )
    reject: list[StrictInt] = Field(
        default=[], description="ids of pending entries rejected in the same step"
    )
    reason: StrictStr = _field("", description="why those entries are rejected (optional)", **REASON)
    # Without it the entry is merged as it is now.
    version: StrictStr | None = _field(
        None,
        description="the entry's version as read (recommended): the merge is refused if it changed since",
        maxLength=VERSION_LENGTH,
    )


class DecisionCreateIn(In):
    agent_name: StrictStr = _field(description="the agent the decision is credited to", **AGENT_NAME)
    type: StrictStr = _field(description="the decision's type", enum=DecisionType.values)
    title: StrictStr = _field(
        description="one line, not blank", minLength=1, maxLength=TITLE_MAX_LENGTH, pattern=NOT_BLANK
    )
    content: StrictStr = _field(description="the decision itself, not blank", **CONTENT)
    rationale: StrictStr = _field("", description="why (optional)", **RATIONALE)
    tags: Tags = None
    supersedes: list[StrictInt] = Field(default=[], description="ids of active decisions this one replaces")


class DecisionPatchIn(In):
    title: StrictStr | None = _field(
        default=None, description="a new title", minLength=1, maxLength=TITLE_MAX_LENGTH, pattern=NOT_BLANK
    )
    content: StrictStr | None = _field(None, description="a new text (a revision keeps the old)", **CONTENT)
    rationale: StrictStr | None = _field(None, description="a new rationale", **RATIONALE)
    status: StrictStr | None = _field(
        default=None, description="archived, or superseded with superseded_by_id", enum=DecisionStatus.values
    )
    superseded_by_id: StrictInt | None = Field(
        default=None, description="the active decision that replaces this one"
    )


class MemoryIn(In):
    type: StrictStr = _field(description="the memory's type", enum=MemoryType.values)
    importance: StrictStr | None = _field(None, description=IMPORTANCE, enum=Importance.values)
    content: StrictStr = _field(description="the text itself, not blank", **CONTENT)
    tags: Tags = None
    session_id: StrictStr = _field(
        "", description="the session it belongs to (optional)", maxLength=SESSION_ID_MAX_LENGTH
    )
    # A coordinator's injected learning says what kind it is; an agent's memory has none.
    category: StrictStr = _field(
        "", description="coordinators only: what kind of learning", enum=["", *MemoryCategory.values]
    )
    corrects: StrictInt | None = Field(
        default=None, description="the id of your active memory this one corrects (it becomes superseded)"
    )
    pinned: StrictBool = Field(default=False, description="coordinators only: a pinned memory never expires")


class InjectIn(In):
    """A coordinator's learning for one agent, or, tagged `cross-team` with no agent, for the team."""

    content: StrictStr = _field(description="the learning, not blank", **CONTENT)
    category: StrictStr = _field(description="what kind of learning", enum=MemoryCategory.values)
    agent_name: StrictStr | None = _field(
        default=None,
        description="the agent it is for; leave out for a learning tagged cross-team",
        **AGENT_NAME,
    )
    importance: StrictStr | None = _field(None, description=IMPORTANCE, enum=Importance.values)
    tags: Tags = None


class EntryEditIn(In):
    """A coordinator's version of a pending entry's text: the fields given change, a revision keeps
    the old text."""

    title: StrictStr | None = _field(None, description="a new title", maxLength=TITLE_MAX_LENGTH)
    content: StrictStr | None = _field(None, description="a new text", **CONTENT)
    rationale: StrictStr | None = _field(None, description="a new rationale", **RATIONALE)


class MemoryPatchIn(In):
    content: StrictStr | None = _field(None, description="a new text", **CONTENT)
    importance: StrictStr | None = _field(None, description=IMPORTANCE, enum=Importance.values)
    tags: Tags = None
    # `superseded` comes only with what supersedes it (a correction or a merge).
    status: StrictStr | None = _field(
        default=None,
        description="archived replaces deleting",
        enum=[MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED],
    )
    pinned: StrictBool | None = Field(
        default=None, description="coordinators only: pin (never expires) or unpin"
    )


class MemoryMergeIn(In):
    keep: StrictInt = Field(description="the memory kept: the flagged one, or the earlier one it repeats")


class SessionIn(In):
    session_id: StrictStr | None = _field(
        default=None,
        description="unique in the project; generated when left out",
        maxLength=SESSION_ID_MAX_LENGTH,
    )
    focus_area: StrictStr = _field("", description="what the session is about", **FOCUS)
    active_issues: list[StrictStr] = _field([], description="open issues, one per item", **ACTIVE_ISSUES)
    summary: StrictStr = _field("", description="the summary so far", **SUMMARY)
    serialized_state: Any = Field(default=None, description="any JSON the runtime wants kept")


class SessionPatchIn(In):
    focus_area: StrictStr | None = _field(None, description="replaces the focus area", **FOCUS)
    active_issues: list[StrictStr] | None = _field(
        default=None, description="replaces the open issues", **ACTIVE_ISSUES
    )
    summary: StrictStr | None = _field(None, description="replaces the summary", **SUMMARY)
    summary_append: StrictStr | None = _field(
        default=None, description="adds one line to the summary", **SUMMARY_LINE
    )
    serialized_state: Any = Field(
        default=None, description="replaces the kept state; left out keeps it, null clears it"
    )
    end: StrictBool = Field(default=False, description="true closes the session")


EPISODE_TEXT: JsonSchema = {"maxLength": EPISODE_TEXT_MAX_LENGTH}


class EpisodeIn(In):
    agent_name: StrictStr | None = _field(None, description=ACTING_AGENT, **AGENT_NAME)
    run_id: StrictStr = _field(
        description="the run, 1-200 characters", minLength=1, maxLength=RUN_ID_MAX_LENGTH, pattern=NOT_BLANK
    )
    outcome: StrictStr = _field(description="how the run ended", enum=EpisodeOutcome.values)
    tried: StrictStr = _field(
        description="what the run tried, not blank", minLength=1, pattern=NOT_BLANK, **EPISODE_TEXT
    )
    files: list[StrictStr] = _field(
        [],
        description="the paths the run changed",
        maxItems=EPISODE_FILES_MAX,
        items={"type": "string", "maxLength": EPISODE_PATH_MAX_LENGTH},
    )
    change_url: StrictStr = _field(
        "",
        description="http(s) link to the change (optional)",
        maxLength=CHANGE_URL_MAX_LENGTH,
        pattern="^(|https?://.+)$",
    )
    difficulties: StrictStr = _field("", description="what got in the way (optional)", **EPISODE_TEXT)
    feedback: StrictStr = _field("", description="the run's feedback on itself (optional)", **EPISODE_TEXT)


class ScribeIn(In):
    agent_name: StrictStr | None = _field(None, description=ACTING_AGENT, **AGENT_NAME)
    run_id: StrictStr = _field(
        description="the run, 1-200 characters", minLength=1, maxLength=RUN_ID_MAX_LENGTH, pattern=NOT_BLANK
    )
    started_at: StrictStr = Field(
        description="when the run started: ISO 8601 with a time zone, e.g. 2026-11-22T08:00:00Z",
        json_schema_extra={"format": "date-time"},
    )
    outcome: StrictStr = _field(
        "completed", description="how the run ended, one line", maxLength=OUTCOME_MAX_LENGTH
    )
    approved: StrictBool = Field(
        False,
        description=(
            "the coordinator backstop: run by a coordinator for the coordinator agent, it merges the "
            "run's decisions too"
        ),
    )
