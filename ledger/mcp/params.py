"""The parameters the tools share, each described for the model that fills it in.

A rule given to `Field` itself (ge, le) is checked before the tool runs; one only stated (an enum, a
text's length) is checked by the service or the filter, with the API's message, so that every transport
refuses a value the same way (docs/api.md "Limits"). Integers are strict, as the API's: `true`, `1.0` or
`"1"` is not the id 1.
"""

from __future__ import annotations

from typing import Annotated, Any

from django_filters import FilterSet
from pydantic import Field, StrictInt

from ledger import services
from ledger.actions.shapes import AGENT_NAME, CONTENT, MAX_PAGE_SIZE, RATIONALE, TAG_LIST, stated
from ledger.filters import DecisionFilter, InboxFilter, MemoryFilter
from ledger.models import Importance, MemoryType
from ledger.services import RUN_ID_MAX_LENGTH

# The largest id either database stores (a signed 64-bit integer): a larger one is refused, not looked up.
MAX_ID = services.MAX_ID
DEFAULT_LIMIT = 50


def described(description: str, **rules: Any) -> Any:
    """A parameter's description, with `rules` stated in its schema (the services enforce them)."""
    return Field(description=description, json_schema_extra=stated(**rules) if rules else None)


def choices(filterset: type[FilterSet], name: str) -> list[str]:
    """The values a list's filter takes (`all` included where it lists every status)."""
    return [str(value) for value, _ in filterset.base_filters[name].extra["choices"]]


EntryId = Annotated[StrictInt, Field(description="the inbox entry's id", ge=1, le=MAX_ID)]
DecisionId = Annotated[StrictInt, Field(description="the decision's id", ge=1, le=MAX_ID)]
MemoryId = Annotated[StrictInt, Field(description="the memory's id", ge=1, le=MAX_ID)]
Limit = Annotated[
    StrictInt,
    Field(description=f"rows to return, 1-{MAX_PAGE_SIZE} (default {DEFAULT_LIMIT})", ge=1, le=MAX_PAGE_SIZE),
]
Offset = Annotated[StrictInt, Field(description="rows to skip from the start of the list", ge=0, le=MAX_ID)]
Compact = Annotated[
    bool,
    Field(description="true: each row as its id, title (or slug, run), status, agent and creation time only"),
]

AgentName = Annotated[str, described("the agent's name (compared in any case)", **AGENT_NAME)]
# A tool acting for one agent: an agent token's own by default; a coordinator token must name one.
ActingAgent = Annotated[
    str | None,
    described(
        "the agent this is for; an agent token: itself (the default; it may name only itself), "
        "a coordinator token must name one",
        **AGENT_NAME,
    ),
]
# A tool reading one agent's rows: an agent token's own by default; a coordinator token must name one.
ReadAgent = Annotated[
    str | None,
    described(
        "the agent whose rows to read; an agent token: itself by default, a coordinator token must name one",
        **AGENT_NAME,
    ),
]
AgentFilter = Annotated[
    str | None, described("only this agent's rows (any case; a name no agent has is refused)", **AGENT_NAME)
]
SearchText = Annotated[
    str | None,
    Field(
        description="words to search for: any may match, rows holding all first (stemmed; the last a prefix)"
    ),
]
Tags = Annotated[
    list[str] | str | None,
    described(
        "tags: a list, or one comma-separated string; 'cross-team' shares with every agent", **TAG_LIST
    ),
]
ImportanceIn = Annotated[str | None, described("high, medium (default) or low", enum=Importance.values)]
Content = Annotated[str, described("the text itself, not blank", **CONTENT)]
Rationale = Annotated[str, described("why (optional)", **RATIONALE)]
RunId = Annotated[str, described("the run this comes from (optional)", maxLength=RUN_ID_MAX_LENGTH)]
RequiredRunId = Annotated[
    str, described("the run, 1-200 characters", minLength=1, maxLength=RUN_ID_MAX_LENGTH)
]
MemoryTypeIn = Annotated[str, described("the memory's type", enum=MemoryType.values)]
MemoryTypeFilter = Annotated[str | None, described("only this type", enum=MemoryType.values)]
ImportanceFilter = Annotated[str | None, described("only this importance", enum=Importance.values)]
Expired = Annotated[
    str | None,
    described(
        "expired memories: left out of the active list by default; true: only them, all: with the others",
        enum=choices(MemoryFilter, "expired"),
    ),
]
StatusOf = {
    "inbox": choices(InboxFilter, "status"),
    "decisions": choices(DecisionFilter, "status"),
    "memory": choices(MemoryFilter, "status"),
}
