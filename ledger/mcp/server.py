"""The MCP tools (docs/mcp.md): each one checks who is asking the way its REST route does, through the
same functions, then answers the same JSON.

`build_server(caller_of)` makes a server whose tools learn their caller from `caller_of(ctx)`: a fixed
token for stdio, the request's token for HTTP. Every refusal is a tool error whose text says why:
a refusal of the frame (`ApiRefusal`) or of the ledger (`LedgerError`), arguments outside the tool's
schema (a wrong type, an id that is not an integer, an argument the tool does not take), or a body the
API's `In` shapes refuse.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Annotated, Any, ParamSpec, TypeVar

from django.db import close_old_connections
from django.db.models import QuerySet
from django.http import HttpResponse
from django_filters import FilterSet
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations, jsonrpc_message_adapter
from ninja import Schema
from pydantic import BaseModel, Field, StrictInt, ValidationError

from ledger import finder, selectors, services
from ledger.api.base import ApiRefusal, Caller, listed
from ledger.api.routes_context import context_for
from ledger.api.routes_decisions import decision_rows, project_decision
from ledger.api.routes_episodes import episode_record_as, episode_rows
from ledger.api.routes_inbox import entry_submit_as, inbox_rows, merge_as
from ledger.api.routes_memory import memory_record_as, memory_rows, recorded_out, visible_memory
from ledger.api.routes_mirror import ScribeIn, mirror_run_as, scribe_run_as
from ledger.api.routes_search import search_as
from ledger.api.shapes import (
    ACTIVE_ISSUES,
    AGENT_NAME,
    CONTENT,
    FOCUS,
    MAX_PAGE_SIZE,
    RATIONALE,
    REASON,
    SUMMARY,
    SUMMARY_LINE,
    TAG_LIST,
    AgentMemoryQuery,
    DecisionCreateIn,
    DecisionOut,
    DecisionQuery,
    EntryOut,
    EntrySubmitIn,
    EpisodeIn,
    EpisodeOut,
    EpisodeQuery,
    InboxQuery,
    MemoryIn,
    MemoryOut,
    MemoryQuery,
    MergeIn,
    Paging,
    RejectIn,
    RejectOut,
    SessionIn,
    SessionOut,
    SessionPatchIn,
    stated,
)
from ledger.context import MAX_ITEMS_LIMIT, MAX_TOKENS_LIMIT, TASK_MAX_LENGTH
from ledger.filters import DecisionFilter, EpisodeFilter, InboxFilter, MemoryFilter
from ledger.models import (
    DecisionType,
    EntryType,
    EpisodeOutcome,
    EpisodeSource,
    Importance,
    InboxEntry,
    MemoryCategory,
    MemoryType,
    MirrorKind,
    Source,
)
from ledger.scribe import OUTCOME_MAX_LENGTH
from ledger.services import RUN_ID_MAX_LENGTH, SESSION_ID_MAX_LENGTH, TITLE_MAX_LENGTH, LedgerError
from ledger.services.episodes import (
    CHANGE_URL_MAX_LENGTH,
    EPISODE_FILES_MAX,
    EPISODE_PATH_MAX_LENGTH,
    EPISODE_TEXT_MAX_LENGTH,
)
from ledger.values import (
    CROSS_TEAM_TAG,
    InvalidValue,
    check_json,
    check_text,
    normalize_tags,
)

P = ParamSpec("P")
R = TypeVar("R")

CallerOf = Callable[[Context], Caller]
Answer = dict[str, Any]

VIA = "mcp"
DEFAULT_LIMIT = 50
# The largest id either database stores (a signed 64-bit integer): a larger one is refused, not looked up.
MAX_ID = services.MAX_ID


def readable(exc: ValidationError) -> str:
    """A pydantic error as one line a person can act on: `field: message; field: message`."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        parts.append(f"{field}: {str(error.get('msg', 'invalid')).removeprefix('Value error, ')}")
    return "; ".join(parts) or "invalid arguments"


class LedgerServer(MCPServer):
    """An MCPServer whose answer to arguments outside a tool's schema names each field at fault in one
    line, like the API's 400, instead of pydantic's multi-line report; an argument the tool does not
    take is refused by name rather than ignored."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        takes = next(
            (t.input_schema.get("properties", {}) for t in await self.list_tools() if t.name == name), None
        )
        if takes is None:
            raise ToolError(f"Unknown tool: {_shown(name)}")
        unknown = [key for key in arguments if key not in takes]
        if unknown:
            raise ToolError(
                f"Error executing tool {name}: unknown argument(s): {_names(unknown)}; "
                f"this tool takes: {', '.join(takes) or 'no arguments'}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: invalid arguments: {readable(cause)}") from cause

    async def run_stdio_async(self) -> None:
        """Serve stdio as the SDK does, except that a line its JSON parser refuses for an unpaired
        surrogate (`"\\ud800"`, valid JSON) is read again, so that the tool refuses it naming the
        argument instead of the call going unanswered."""
        async with stdio_server() as (read_stream, write_stream):
            await self._lowlevel_server.run(
                _SurrogatesReadAgain(read_stream),
                write_stream,
                self._lowlevel_server.create_initialization_options(),
            )


def _shown(text: str) -> str:
    """`text` as it can be written back in an answer: an unpaired surrogate as its escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _names(names: list[str], most: int = 10) -> str:
    shown = ", ".join(_shown(name) for name in names[:most])
    return f"{shown}, … ({len(names)} in all)" if len(names) > most else shown


class _SurrogatesReadAgain:
    """The messages of a stdio stream, where a line the SDK's parser refused (it takes no unpaired
    surrogate) is parsed again by Python's, which takes them as JSON does. Only its arguments may hold
    one: the id, the method and the tool's name are written back in the answer, which must be UTF-8."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    @property
    def last_context(self) -> Any:
        return getattr(self.stream, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        return _read_again(await self.stream.receive())

    async def aclose(self) -> None:
        await self.stream.aclose()

    def __aiter__(self) -> _SurrogatesReadAgain:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return _read_again(await self.stream.__anext__())

    async def __aenter__(self) -> _SurrogatesReadAgain:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _read_again(item: SessionMessage | Exception) -> SessionMessage | Exception:
    if not isinstance(item, ValidationError):
        return item
    line = next((e.get("input") for e in item.errors() if e["type"] == "json_invalid"), None)
    if not isinstance(line, str):
        return item
    try:
        message = json.loads(line, parse_constant=_refuse_constant)
        if not isinstance(message, dict):
            return item
        params = message.get("params")
        check_json(
            {**message, "params": {**params, "arguments": None}} if isinstance(params, dict) else message
        )
        return SessionMessage(jsonrpc_message_adapter.validate_python(message, by_name=False))
    except (ValueError, InvalidValue, TypeError):
        return item


def _refusals_as_tool_errors(fn: Callable[P, R], admit: Callable[[Context], None]) -> Callable[P, R]:
    """Run a tool the way Django runs a view: fresh database connections around it, no text either
    database cannot store, the caller admitted by `admit`, and every refusal returned as a tool error
    with its readable text."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        close_old_connections()
        try:
            for name, value in kwargs.items():
                if not isinstance(value, Context):
                    _storable(name, value)
            admit(next(value for value in kwargs.values() if isinstance(value, Context)))
            return fn(*args, **kwargs)
        except ApiRefusal as exc:
            raise ToolError(exc.message) from exc
        except LedgerError as exc:
            raise ToolError(exc.message) from exc
        except ValidationError as exc:
            raise ToolError(readable(exc)) from exc
        finally:
            close_old_connections()

    return wrapper


def _storable(name: str, value: Any) -> None:
    """Refuse a NUL character or a lone surrogate in any argument, filters included: PostgreSQL
    refuses them even in a lookup (the API refuses them in its path and query the same way)."""
    try:
        check_text(value) if isinstance(value, str) else check_json(value)
    except InvalidValue as exc:
        raise services.invalid(name, str(exc)) from exc


def _validated(shape: type[BaseModel], **fields: Any) -> Any:
    """The tool's arguments read by the API's request shape: the same types, the same refusals."""
    return shape.model_validate(fields)


def _listing(
    filterset: type[FilterSet],
    rows: QuerySet[Any],
    filters: Schema,
    out: type[Schema],
    limit: int,
    offset: int,
    **fixed: str,
) -> Answer:
    """One page of a list through the API's own filtering and paging, as `{total, offset, limit, items}`:
    the total the API sends in its X-Total-Count header, the rows read by the API's `out` shape."""
    response = HttpResponse()  # `listed` reports the total in the response's X-Total-Count
    items = listed(filterset, rows, filters, Paging(limit=limit, offset=offset), response, **fixed)
    return {
        "total": int(response["X-Total-Count"]),
        "offset": offset,
        "limit": limit,
        "items": [out.from_orm(item).model_dump(mode="json") for item in items],
    }


def _joined(tags: list[str] | str | None) -> str | None:
    return ",".join(tags) if isinstance(tags, list) else tags


def _has_cross_team_tag(tags: list[str] | str | None) -> bool:
    try:
        return CROSS_TEAM_TAG in normalize_tags(tags)
    except InvalidValue:
        return False  # the service refuses it with the reason


def _choices(filterset: type[FilterSet], name: str) -> list[str]:
    return [str(value) for value, _ in filterset.base_filters[name].extra["choices"]]


def _described(description: str, **rules: Any) -> Any:
    """A parameter's description, with `rules` stated in its schema (the services enforce them)."""
    return Field(description=description, json_schema_extra=stated(**rules) if rules else None)


# Parameters. A rule given to `Field` itself (ge, le) is checked before the tool runs; one only stated
# (an enum, a text's length) is checked by the service or the filter, with the API's message, so that
# every transport refuses a value the same way (docs/api.md "Limits"). Integers are strict, as the API's:
# `true`, `1.0` or `"1"` is not the id 1.
EntryId = Annotated[StrictInt, Field(description="the inbox entry's id", ge=1, le=MAX_ID)]
DecisionId = Annotated[StrictInt, Field(description="the decision's id", ge=1, le=MAX_ID)]
MemoryId = Annotated[StrictInt, Field(description="the memory's id", ge=1, le=MAX_ID)]
Limit = Annotated[
    StrictInt,
    Field(description=f"rows to return, 1-{MAX_PAGE_SIZE} (default 50)", ge=1, le=MAX_PAGE_SIZE),
]
Offset = Annotated[StrictInt, Field(description="rows to skip from the start of the list", ge=0, le=MAX_ID)]
AgentName = Annotated[str, _described("the agent's name (compared in any case)", **AGENT_NAME)]
ActingAgent = Annotated[
    str | None,
    _described(
        "the agent this is for; an agent token may name only itself (default), a coordinator must name one",
        **AGENT_NAME,
    ),
]
AgentFilter = Annotated[str | None, Field(description="only this agent's rows (any case)")]
SearchText = Annotated[
    str | None,
    Field(
        description="words to search for: any may match, rows holding all first (stemmed; the last a prefix)"
    ),
]
Tags = Annotated[
    list[str] | str | None,
    _described(
        "tags: a list, or one comma-separated string; 'cross-team' shares with every agent", **TAG_LIST
    ),
]
ImportanceIn = Annotated[str | None, _described("high, medium (default) or low", enum=Importance.values)]
Content = Annotated[str, _described("the text itself, not blank", **CONTENT)]
Rationale = Annotated[str, _described("why (optional)", **RATIONALE)]
RunId = Annotated[str, _described("the run this comes from (optional)", maxLength=RUN_ID_MAX_LENGTH)]
MemoryTypeIn = Annotated[str, _described("the memory's type", enum=MemoryType.values)]
Expired = Annotated[
    str | None,
    _described(
        "expired memories: left out of the active list by default; true: only them, all: with the others",
        enum=_choices(MemoryFilter, "expired"),
    ),
]
StatusOf = {
    "inbox": _choices(InboxFilter, "status"),
    "decisions": _choices(DecisionFilter, "status"),
    "memory": _choices(MemoryFilter, "status"),
}


def build_server(caller_of: CallerOf) -> MCPServer:
    server = LedgerServer(
        "canon",
        instructions=(
            "Canon is the team's decision ledger and memory. Propose decisions and learnings into the "
            "inbox; coordinators merge or reject them. Read the accepted decisions before you act, and "
            "compile your context at the start of each turn."
        ),
    )

    def tool(
        description: str,
        *aliases: str,
        coordinator: bool = False,
        writes: bool = False,
        title: str | None = None,
        read_only: bool = False,
    ) -> Callable[[Callable[P, R]], Callable[P, R]]:
        """Register a tool. `coordinator`: any other token is refused. `writes`: the call counts one write
        of an agent token (CANON_AGENT_WRITES_PER_MINUTE). The role is checked first, so that a refused
        call uses up nothing. `title` is the name a client shows; `read_only` tells clients the tool
        changes nothing (the protocol's `readOnlyHint`)."""

        def admit(ctx: Context) -> None:
            if not (coordinator or writes):
                return
            caller = caller_of(ctx)
            if coordinator:
                caller.require_coordinator()
            if writes:
                caller.count_write()

        def register(fn: Callable[P, R]) -> Callable[P, R]:
            wrapped = _refusals_as_tool_errors(fn, admit)
            hints = ToolAnnotations(title=title, read_only_hint=True) if read_only else None
            for name in (fn.__name__, *aliases):
                server.add_tool(wrapped, name=name, title=title, description=description, annotations=hints)
            return wrapped

        return register

    # Inbox ------------------------------------------------------------------------------------

    @tool(
        "Propose a decision or learning into the inbox for review (also named squad_decide).",
        "squad_decide",
        writes=True,
    )
    def submit_inbox_entry(
        ctx: Context,
        slug: Annotated[
            str, Field(description="short name, normalised (e.g. 'use-postgres')", max_length=200)
        ],
        type: Annotated[str, _described("the entry's type", enum=EntryType.values)],
        content: Content,
        title: Annotated[str, _described("one line (optional)", maxLength=TITLE_MAX_LENGTH)] = "",
        rationale: Rationale = "",
        tags: Tags = None,
        importance: ImportanceIn = None,
        run_id: RunId = "",
        agent_name: ActingAgent = None,
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(
            EntrySubmitIn,
            agent_name=agent_name,
            slug=slug,
            type=type,
            title=title,
            content=content,
            rationale=rationale,
            tags=tags,
            importance=importance,
            run_id=run_id,
        )
        result = entry_submit_as(caller, payload)
        return EntryOut.from_orm(result.entry).model_dump(mode="json")

    @tool("List inbox entries newest first (status pending by default, or merged, rejected, all).")
    def list_inbox(
        ctx: Context,
        status: Annotated[str | None, _described("default pending", enum=StatusOf["inbox"])] = None,
        type: Annotated[str | None, _described("only this type", enum=EntryType.values)] = None,
        agent: AgentFilter = None,
        run_id: Annotated[str | None, Field(description="only this run's entries")] = None,
        q: SearchText = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Answer:
        caller = caller_of(ctx)
        filters = InboxQuery(status=status, type=type, agent=agent, run_id=run_id, q=q)
        return _listing(InboxFilter, inbox_rows(caller), filters, EntryOut, limit, offset)

    @tool(
        "Merge a pending inbox entry into a decision or a memory (coordinators only). Send the entry's "
        "version as read: the merge is refused when it changed since. A flagged entry needs "
        "confirm_flagged; a boundary competing with another needs supersede, reject or keep_both.",
        coordinator=True,
        writes=True,
    )
    def merge_inbox_entry(
        ctx: Context,
        entry_id: EntryId,
        confirm_flagged: Annotated[
            bool, Field(description="merge a flagged entry anyway, its text read whole")
        ] = False,
        keep_both: Annotated[
            bool, Field(description="keep the competing boundaries not superseded or rejected")
        ] = False,
        supersede: Annotated[
            list[StrictInt] | None, Field(description="ids of active decisions the merged one supersedes")
        ] = None,
        reject: Annotated[
            list[StrictInt] | None, Field(description="ids of pending entries rejected in the same step")
        ] = None,
        reason: Annotated[str, _described("why they are rejected (optional)", **REASON)] = "",
        version: Annotated[
            str | None,
            _described("the entry's version as read (recommended): refused if it changed since"),
        ] = None,
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(
            MergeIn,
            confirm_flagged=confirm_flagged,
            keep_both=keep_both,
            supersede=supersede or [],
            reject=reject or [],
            reason=reason,
            version=version,
        )
        merged = merge_as(caller, entry_id, payload)
        return merged.model_dump(mode="json", exclude_none=True)

    @tool(
        "Reject a pending inbox entry, with an optional reason (coordinators only).",
        coordinator=True,
        writes=True,
    )
    def reject_inbox_entry(
        ctx: Context,
        entry_id: EntryId,
        reason: Annotated[str, _described("why (optional)", **REASON)] = "",
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(RejectIn, reason=reason)
        entry = services.entry_reject(
            project=caller.project, entry_id=entry_id, by=caller.name, reason=payload.reason, via=VIA
        )
        return RejectOut.from_orm(entry).model_dump(mode="json")

    # Decisions --------------------------------------------------------------------------------

    @tool(
        "Record an active decision directly, optionally superseding others (coordinators only).",
        coordinator=True,
        writes=True,
    )
    def submit_decision(
        ctx: Context,
        agent_name: AgentName,
        type: Annotated[str, _described("the decision's type", enum=DecisionType.values)],
        title: Annotated[str, _described("one line, not blank", minLength=1, maxLength=TITLE_MAX_LENGTH)],
        content: Content,
        rationale: Rationale = "",
        tags: Tags = None,
        supersedes: Annotated[
            list[StrictInt] | None, Field(description="ids of active decisions this one replaces")
        ] = None,
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(
            DecisionCreateIn,
            agent_name=agent_name,
            type=type,
            title=title,
            content=content,
            rationale=rationale,
            tags=tags,
            supersedes=supersedes or [],
        )
        decision = services.decision_create(
            project=caller.project, **payload.model_dump(), by=caller.name, via=VIA
        )
        return DecisionOut.from_orm(project_decision(caller.project, decision.pk)).model_dump(mode="json")

    @tool(
        "List the project's decisions newest first (status active by default, or superseded, archived, all)."
    )
    def list_decisions(
        ctx: Context,
        status: Annotated[str | None, _described("default active", enum=StatusOf["decisions"])] = None,
        type: Annotated[str | None, _described("only this type", enum=DecisionType.values)] = None,
        agent: AgentFilter = None,
        q: SearchText = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Answer:
        caller = caller_of(ctx)
        filters = DecisionQuery(status=status, type=type, agent=agent, q=q)
        return _listing(DecisionFilter, decision_rows(caller.project), filters, DecisionOut, limit, offset)

    @tool("Read one decision with its revisions and supersession links.")
    def get_decision(ctx: Context, decision_id: DecisionId) -> Answer:
        caller = caller_of(ctx)
        return DecisionOut.from_orm(project_decision(caller.project, decision_id)).model_dump(mode="json")

    # Memory -----------------------------------------------------------------------------------

    @tool(
        "Record a memory for an agent; an agent's cross-team memory becomes an inbox proposal instead. "
        "The same content again is not written twice: the answer says it was already recorded.",
        writes=True,
    )
    def record_memory(
        ctx: Context,
        agent_name: AgentName,
        type: MemoryTypeIn,
        content: Content,
        importance: ImportanceIn = None,
        tags: Tags = None,
        session_id: Annotated[
            str, _described("the session it belongs to (optional)", maxLength=SESSION_ID_MAX_LENGTH)
        ] = "",
        corrects: Annotated[
            StrictInt | None,
            Field(
                description="the id of your active memory this one corrects (it becomes superseded)",
                ge=1,
                le=MAX_ID,
            ),
        ] = None,
        pinned: Annotated[
            bool, Field(description="coordinators only: a pinned memory never expires")
        ] = False,
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(
            MemoryIn,
            type=type,
            importance=importance,
            content=content,
            tags=tags,
            session_id=session_id,
            corrects=corrects,
            pinned=pinned,
        )
        recorded = memory_record_as(caller, agent_name, payload)
        if isinstance(recorded, InboxEntry):
            return EntryOut.from_orm(recorded).model_dump(mode="json")
        return recorded_out(recorded).model_dump(mode="json")

    @tool("List one agent's memories newest first (another agent's: its cross-team ones only).")
    def list_memory(
        ctx: Context,
        agent_name: AgentName,
        type: Annotated[str | None, _described("only this type", enum=MemoryType.values)] = None,
        importance: Annotated[str | None, _described("only this importance", enum=Importance.values)] = None,
        status: Annotated[str | None, _described("default active", enum=StatusOf["memory"])] = None,
        expired: Expired = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Answer:
        caller = caller_of(ctx)
        filters = AgentMemoryQuery(type=type, importance=importance, status=status, expired=expired)
        rows = memory_rows(caller)
        return _listing(MemoryFilter, rows, filters, MemoryOut, limit, offset, agent=agent_name)

    @tool("Read one memory of an agent (another agent's only when tagged cross-team).")
    def get_memory(ctx: Context, agent_name: AgentName, memory_id: MemoryId) -> Answer:
        caller = caller_of(ctx)
        return MemoryOut.from_orm(visible_memory(caller, agent_name, memory_id)).model_dump(mode="json")

    @tool("Search the memories you may read by tags, type, agent, text, importance and status.")
    def search_memory(
        ctx: Context,
        tags: Annotated[
            list[str] | str | None, Field(description="any of these whole tags (a list or comma-separated)")
        ] = None,
        type: Annotated[str | None, _described("only this type", enum=MemoryType.values)] = None,
        agent: AgentFilter = None,
        q: SearchText = None,
        importance: Annotated[str | None, _described("only this importance", enum=Importance.values)] = None,
        status: Annotated[str | None, _described("default active", enum=StatusOf["memory"])] = None,
        expired: Expired = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Answer:
        caller = caller_of(ctx)
        filters = MemoryQuery(
            tags=_joined(tags),
            type=type,
            agent=agent,
            q=q,
            importance=importance,
            status=status,
            expired=expired,
        )
        return _listing(MemoryFilter, memory_rows(caller), filters, MemoryOut, limit, offset)

    @tool(
        "Inject a learning for one agent, or the whole team when tagged cross-team (coordinators only).",
        coordinator=True,
        writes=True,
    )
    def inject_learning(
        ctx: Context,
        content: Content,
        category: Annotated[str, _described("what kind of learning", enum=MemoryCategory.values)],
        agent_name: Annotated[
            str | None,
            _described("the agent it is for; leave out for a learning tagged cross-team", **AGENT_NAME),
        ] = None,
        importance: ImportanceIn = None,
        tags: Tags = None,
    ) -> Answer:
        caller = caller_of(ctx)
        if category not in MemoryCategory.values:
            raise services.invalid(
                "category", f"{category!r} is not one of: {', '.join(MemoryCategory.values)}"
            )
        payload = _validated(
            MemoryIn,
            type=MemoryType.LEARNING,
            importance=importance,
            content=content,
            tags=tags,
            category=category,
        )
        if agent_name is None:
            if not _has_cross_team_tag(tags):
                raise services.invalid(
                    "agent_name",
                    f"name the agent this learning is for, or tag it {CROSS_TEAM_TAG!r} for the team",
                )
            agent_name = caller.project.coordinator_agent
        memory = services.memory_record(
            project=caller.project,
            agent_name=agent_name,
            **payload.model_dump(),
            source=Source.COORDINATOR,
            injected_by=caller.name,
        )
        return MemoryOut.from_orm(memory).model_dump(mode="json")

    # Episodes ---------------------------------------------------------------------------------

    @tool("Record what a run tried and how it ended; the same run again updates its episode.", writes=True)
    def record_episode(
        ctx: Context,
        run_id: Annotated[
            str, _described("the run, 1-200 characters", minLength=1, maxLength=RUN_ID_MAX_LENGTH)
        ],
        outcome: Annotated[str, _described("how the run ended", enum=EpisodeOutcome.values)],
        tried: Annotated[
            str, _described("what the run tried, not blank", minLength=1, maxLength=EPISODE_TEXT_MAX_LENGTH)
        ],
        files: Annotated[
            list[str] | None,
            _described(
                f"paths the run touched, at most {EPISODE_FILES_MAX}",
                maxItems=EPISODE_FILES_MAX,
                items={"type": "string", "maxLength": EPISODE_PATH_MAX_LENGTH},
            ),
        ] = None,
        change_url: Annotated[
            str, _described("http(s) link to the change (optional)", maxLength=CHANGE_URL_MAX_LENGTH)
        ] = "",
        difficulties: Annotated[
            str, _described("what got in the way (optional)", maxLength=EPISODE_TEXT_MAX_LENGTH)
        ] = "",
        feedback: Annotated[
            str, _described("the run's feedback on itself (optional)", maxLength=EPISODE_TEXT_MAX_LENGTH)
        ] = "",
        agent_name: ActingAgent = None,
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(
            EpisodeIn,
            agent_name=agent_name,
            run_id=run_id,
            outcome=outcome,
            tried=tried,
            files=files or [],
            change_url=change_url,
            difficulties=difficulties,
            feedback=feedback,
        )
        result = episode_record_as(caller, payload, via=VIA)
        return EpisodeOut.from_orm(result.episode).model_dump(mode="json")

    @tool("List episodes newest first (an agent token: its own), by agent, outcome, source, run or text.")
    def list_episodes(
        ctx: Context,
        agent: AgentFilter = None,
        outcome: Annotated[str | None, _described("only this outcome", enum=EpisodeOutcome.values)] = None,
        source: Annotated[str | None, _described("only written by", enum=EpisodeSource.values)] = None,
        run_id: Annotated[str | None, Field(description="only this run's episodes")] = None,
        q: SearchText = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Answer:
        caller = caller_of(ctx)
        filters = EpisodeQuery(agent=agent, outcome=outcome, source=source, run_id=run_id, q=q)
        return _listing(EpisodeFilter, episode_rows(caller), filters, EpisodeOut, limit, offset)

    # Sessions ---------------------------------------------------------------------------------

    @tool("Start a session; any other open session of the project is closed.", writes=True)
    def start_session(
        ctx: Context,
        session_id: Annotated[
            str | None,
            _described("unique in the project; generated when left out", maxLength=SESSION_ID_MAX_LENGTH),
        ] = None,
        focus_area: Annotated[str, _described("what the session is about", **FOCUS)] = "",
        active_issues: Annotated[
            list[str] | None, _described("open issues, one per item", **ACTIVE_ISSUES)
        ] = None,
        summary: Annotated[str, _described("the summary so far", **SUMMARY)] = "",
        serialized_state: Annotated[Any, Field(description="any JSON the runtime wants kept")] = None,
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(
            SessionIn,
            session_id=session_id,
            focus_area=focus_area,
            active_issues=active_issues or [],
            summary=summary,
            serialized_state=serialized_state,
        )
        session = services.session_start(project=caller.project, **payload.model_dump(), by=caller.name)
        return SessionOut.from_orm(session).model_dump(mode="json")

    @tool("Read the project's open session.")
    def current_session(ctx: Context) -> Answer:
        caller = caller_of(ctx)
        session = selectors.open_session(caller.project)
        if session is None:
            raise ApiRefusal(404, "no open session in this project; start one with start_session")
        return SessionOut.from_orm(session).model_dump(mode="json")

    @tool("Update the open session: replace fields, append a summary line, or end it.", writes=True)
    def update_session(
        ctx: Context,
        focus_area: Annotated[str | None, _described("replaces the focus area", **FOCUS)] = None,
        active_issues: Annotated[
            list[str] | None, _described("replaces the open issues", **ACTIVE_ISSUES)
        ] = None,
        summary: Annotated[str | None, _described("replaces the summary", **SUMMARY)] = None,
        summary_append: Annotated[
            str | None, _described("adds one line to the summary", **SUMMARY_LINE)
        ] = None,
        serialized_state: Annotated[Any, Field(description="replaces the kept state (null keeps it)")] = None,
        clear_serialized_state: Annotated[bool, Field(description="true clears the kept state")] = False,
        end: Annotated[bool, Field(description="true closes the session")] = False,
    ) -> Answer:
        caller = caller_of(ctx)
        if clear_serialized_state and serialized_state is not None:
            raise services.invalid("serialized_state", "give a new state or clear it, not both")
        payload = _validated(
            SessionPatchIn,
            focus_area=focus_area,
            active_issues=active_issues,
            summary=summary,
            summary_append=summary_append,
            serialized_state=serialized_state,
            end=end,
        )
        if clear_serialized_state:
            state = None
        else:
            state = serialized_state if serialized_state is not None else services.UNSET
        session = services.session_update_current(
            project=caller.project,
            **payload.model_dump(exclude={"serialized_state"}),
            serialized_state=state,
            by=caller.name,
        )
        return SessionOut.from_orm(session).model_dump(mode="json")

    # Context, mirror, Scribe ------------------------------------------------------------------

    @tool(
        "Compile the context block for an agent's turn: boundaries, memories, with a task the most "
        "relevant past knowledge, the current session."
    )
    def compile_context(
        ctx: Context,
        agent: Annotated[str, Field(description="the agent the block is for (an agent token: itself)")],
        child: Annotated[bool, Field(description="true for a child worker: boundaries only")] = False,
        max_items: Annotated[
            int | None, Field(description=f"memories at most, 0-{MAX_ITEMS_LIMIT}", ge=0, le=MAX_ITEMS_LIMIT)
        ] = None,
        max_tokens: Annotated[
            int | None, Field(description=f"token budget, 0-{MAX_TOKENS_LIMIT}", ge=0, le=MAX_TOKENS_LIMIT)
        ] = None,
        run_id: Annotated[
            str | None,
            Field(
                description="when given, the compilation is recorded for this run",
                max_length=RUN_ID_MAX_LENGTH,
            ),
        ] = None,
        task: Annotated[
            str | None,
            Field(
                description="the run's task: adds the past knowledge most relevant to it",
                max_length=TASK_MAX_LENGTH,
            ),
        ] = None,
        relevant_tokens: Annotated[
            int | None,
            Field(
                description=f"relevant layer's token budget, 0-{MAX_TOKENS_LIMIT}", ge=0, le=MAX_TOKENS_LIMIT
            ),
        ] = None,
        session_tokens: Annotated[
            int | None,
            Field(
                description=f"session layer's token budget, 0-{MAX_TOKENS_LIMIT}", ge=0, le=MAX_TOKENS_LIMIT
            ),
        ] = None,
    ) -> Answer:
        caller = caller_of(ctx)
        return context_for(
            caller,
            agent,
            child=child,
            max_items=max_items,
            max_tokens=max_tokens,
            run_id=run_id,
            task=task,
            relevant_tokens=relevant_tokens,
            session_tokens=session_tokens,
        )

    # Search -----------------------------------------------------------------------------------

    @tool(
        "Search decisions, memories, episodes, session summaries and (coordinators) inbox entries at "
        "once: one list, best match first, each hit with a highlighted excerpt and the words it matched.",
        title="Search the ledger",
        read_only=True,
    )
    def search(
        ctx: Context,
        q: Annotated[
            str,
            _described(
                "what to look for: a few words or a whole task; rows holding any of its words are found",
                minLength=1,
                maxLength=finder.QUERY_MAX_LENGTH,
            ),
        ],
        limit: Annotated[
            StrictInt,
            Field(
                description=f"hits to return, 1-{finder.MAX_LIMIT} (default {finder.DEFAULT_LIMIT})",
                ge=1,
                le=finder.MAX_LIMIT,
            ),
        ] = finder.DEFAULT_LIMIT,
        kinds: Annotated[
            list[str] | str | None,
            _described(
                "only these kinds (a list or comma-separated): decision, memory, summary, episode, "
                "entry (coordinators only); default every kind the token may search",
                items={"type": "string", "enum": list(finder.KINDS)},
            ),
        ] = None,
        agent: Annotated[
            str | None,
            _described("search as this agent sees (an agent token: itself, the default)", **AGENT_NAME),
        ] = None,
        inactive: Annotated[
            bool,
            Field(
                description="also superseded, archived and expired rows and decided inbox entries, "
                "ranked lower"
            ),
        ] = False,
    ) -> Answer:
        caller = caller_of(ctx)
        return search_as(caller, q=q, limit=limit, kinds=kinds, agent=agent, inactive=inactive)

    def mirror_answer(caller: Caller, kind: str) -> Answer:
        result = mirror_run_as(caller, kind, trigger=VIA)
        if result.report is None:
            raise ToolError(f"the {kind} could not run: {result.error}")
        return result.as_dict()

    @tool(
        "Write the ledger's files into the project's workspace now (coordinators only).",
        coordinator=True,
        writes=True,
    )
    def export_memory(ctx: Context) -> Answer:
        return mirror_answer(caller_of(ctx), MirrorKind.EXPORT)

    @tool(
        "Adopt the team's files from the project's workspace into the ledger now (coordinators only).",
        coordinator=True,
        writes=True,
    )
    def import_memory(ctx: Context) -> Answer:
        return mirror_answer(caller_of(ctx), MirrorKind.IMPORT)

    @tool(
        "After a run: merge its learnings, list its decisions for review, note it in the session.",
        writes=True,
    )
    def scribe_run(
        ctx: Context,
        run_id: Annotated[
            str, _described("the run, 1-200 characters", minLength=1, maxLength=RUN_ID_MAX_LENGTH)
        ],
        started_at: Annotated[str, Field(description="ISO 8601 with a time zone, e.g. 2026-11-22T08:00:00Z")],
        agent_name: ActingAgent = None,
        outcome: Annotated[
            str, Field(description="one line, default completed", max_length=OUTCOME_MAX_LENGTH)
        ] = "completed",
        approved: Annotated[bool, Field(description="the coordinator backstop: merge decisions too")] = False,
    ) -> Answer:
        caller = caller_of(ctx)
        payload = _validated(
            ScribeIn,
            agent_name=agent_name,
            run_id=run_id,
            started_at=started_at,
            outcome=outcome,
            approved=approved,
        )
        return scribe_run_as(caller, payload, via=VIA)

    return server
