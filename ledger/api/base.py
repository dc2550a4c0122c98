"""The agent API's frame (docs/api.md): the NinjaAPI instance, bearer tokens, who is asking, and errors.

Route modules (`ledger/api/routes_inbox.py`, …) register on `api` and start each handler with
`caller = project_caller(request, project)` (`coordinator=True` for a coordinators' route: the role is
checked before a write is counted), then `caller.require_agent(name)` where the route acts for an agent.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import RequestDataTooBig
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django_filters import FilterSet
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer

from ledger import selectors, visibility
from ledger.api.shapes import MAX_PAGE_SIZE, Paging
from ledger.models import Agent, ApiToken, Project, TokenRole
from ledger.services import Conflict, Invalid, LedgerError, NotFound, invalid
from ledger.values import InvalidValue, agent_key

logger = logging.getLogger("canon.api")


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        if not token or len(token) > 200:
            return None
        found = selectors.token_for_secret(token)
        if found is not None and (
            found.last_used_at is None or (timezone.now() - found.last_used_at).total_seconds() > 60
        ):
            # Coarse "last used" so an operator can spot dead tokens without a write per request.
            ApiToken.objects.filter(pk=found.pk).update(last_used_at=timezone.now())
        return found


api = NinjaAPI(
    title="Canon agent API",
    version="1",
    description=(
        "Agents propose decisions and memories; coordinators review them. "
        "Routes, errors and limits in full: docs/api.md in Canon's repository."
    ),
    auth=BearerToken(),
    urls_namespace="api",
)


class ApiRefusal(Exception):
    """A refusal decided by the frame, not the ledger: who is asking (401, 403, 404) or how often (429)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class RateLimited(ApiRefusal):
    """429: the caller wrote too often; `retry_after` seconds until the next write is allowed."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(429, message)
        self.retry_after = retry_after


@dataclass
class Caller:
    """Who is asking, already checked against the project in the path."""

    token: ApiToken
    project: Project

    @property
    def is_coordinator(self) -> bool:
        return self.token.role == TokenRole.COORDINATOR

    @property
    def agent(self) -> Agent | None:
        """The token's agent; None for a coordinator."""
        return self.token.agent

    @property
    def name(self) -> str:
        """How this caller is named in `reviewed_by`, `changed_by` and the audit trail."""
        if self.token.agent is not None:
            return self.token.agent.name
        return self.token.label or self.project.coordinator_agent

    def require_coordinator(self) -> None:
        if not self.is_coordinator:
            raise ApiRefusal(403, "this route needs a coordinator token")

    def require_agent(self, name: str, field: str = "agent_name") -> None:
        """An agent token may act only as its own agent (any case); a coordinator as anyone.

        `field` names where the name came from, for the 400 when it is not a valid agent name.
        """
        if self.is_coordinator:
            return
        try:
            wanted = agent_key(name)
        except InvalidValue as exc:
            raise invalid(field, str(exc)) from exc
        assert self.token.agent is not None
        if wanted != self.token.agent.key:
            raise ApiRefusal(403, f"this token acts as {self.token.agent.name!r}, not {name!r}")

    def agent_named(self, name: str | None, missing: str) -> str:
        """The agent a write is for: `name` when given (an agent token may name only itself), else the
        token's own agent. A coordinator token must name one: without, a 400 on `agent_name` saying
        `missing`."""
        chosen = name or (self.token.agent.name if self.token.agent is not None else "")
        if not chosen:
            raise invalid("agent_name", missing)
        self.require_agent(chosen)
        return chosen

    def count_write(self) -> None:
        """Count one write against an agent's CANON_AGENT_WRITES_PER_MINUTE (429 past it); a
        coordinator's writes are not counted."""
        if self.token.agent is not None:
            _count_write(self.project, self.token.agent)


def caller_for(token: ApiToken) -> Caller:
    """The caller a live token makes, on every transport. An agent token naming the project's
    coordinator agent (issued before that name became the coordinator's) is refused with 403: that
    name speaks through coordinator tokens only."""
    if token.agent is not None:
        refusal = visibility.agent_token_refusal(token.project, token.agent.name)
        if refusal is not None:
            raise ApiRefusal(403, refusal)
    return Caller(token=token, project=token.project)


def project_caller(request: HttpRequest, project_slug: str, *, coordinator: bool = False) -> Caller:
    """The authenticated caller, refused with 404 when the token belongs to another project.

    Also refuses a NUL character anywhere in the path or the query string (400): no stored value can
    contain one, and PostgreSQL rejects it even in a lookup, so no route has to think about it.
    """
    token = request.auth  # type: ignore[attr-defined]
    if not isinstance(token, ApiToken):
        raise ApiRefusal(401, "missing or invalid bearer token")
    if token.project.slug != project_slug:
        raise ApiRefusal(404, f"no project {project_slug!r} for this token")
    if "\x00" in request.path:
        raise invalid("path", "must not contain the NUL character (%00)")
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            raise invalid(key.replace("\x00", "") or "query", "must not contain the NUL character (%00)")
    caller = caller_for(token)
    if coordinator:
        # A route for coordinators refuses an agent before its write is counted: the refusal costs
        # the agent nothing.
        caller.require_coordinator()
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        caller.count_write()
    return caller


# Per-agent write rate (CANON_AGENT_WRITES_PER_MINUTE in the README): the times of an agent's recent
# writes, kept in Django's cache, which the settings share between the server's worker processes. The
# lock makes read-and-update one step for the threads of a process; two processes can each take the last
# free slot at the same instant, so the limit can be passed by one write per process.
_WRITE_WINDOW = 60.0
_writes_lock = threading.Lock()
_clock = time.time  # wall-clock seconds, comparable between processes that share a cache


def _count_write(project: Project, agent: Agent) -> None:
    """Count one write of `agent` in `project`, or refuse it with 429 past CANON_AGENT_WRITES_PER_MINUTE.

    A refused write is not counted, and is logged once per agent while it stays refused.
    """
    limit = settings.CANON_AGENT_WRITES_PER_MINUTE
    if limit <= 0:
        return
    key = f"canon:writes:{project.pk}:{agent.pk}"
    now = _clock()
    with _writes_lock:
        recent = [t for t in cache.get(key, []) if now - t < _WRITE_WINDOW]
        if len(recent) >= limit:
            retry_after = max(1, math.ceil(recent[0] + _WRITE_WINDOW - now))
        else:
            cache.set(key, [*recent, now], timeout=math.ceil(_WRITE_WINDOW))
            return
    if cache.add(f"{key}:logged", True, timeout=retry_after):
        logger.warning(
            "rate-limited: agent %r in project %r passed %d writes per minute",
            agent.name,
            project.slug,
            limit,
        )
    raise RateLimited(
        f"agent {agent.name!r} is past {limit} writes per minute in this project; retry in {retry_after} s",
        retry_after=retry_after,
    )


def _error(request: HttpRequest, status: int, message: str, **extra: Any) -> HttpResponse:
    if status == 400 and not extra.get("details"):
        # Every 400 carries `details`, the per-field list a client can act on (docs/api.md).
        extra["details"] = [{"field": "body", "message": message}]
    return api.create_response(request, {"error": message, **extra}, status=status)


@api.exception_handler(ApiRefusal)
def _refusal(request: HttpRequest, exc: ApiRefusal) -> HttpResponse:
    response = _error(request, exc.status, exc.message)
    if isinstance(exc, RateLimited):
        response["Retry-After"] = str(exc.retry_after)
    return response


# What each refusal of the ledger means over HTTP; any other `LedgerError` is a 400.
STATUS_OF: dict[type[LedgerError], int] = {Invalid: 400, NotFound: 404, Conflict: 409}


@api.exception_handler(LedgerError)
def _ledger_error(request: HttpRequest, exc: LedgerError) -> HttpResponse:
    status = next((code for cls, code in STATUS_OF.items() if isinstance(exc, cls)), 400)
    extra: dict[str, Any] = {}
    if exc.details:
        extra["details"] = exc.details
    if isinstance(exc, Conflict) and exc.retryable:
        extra["retryable"] = True
    return _error(request, status, exc.message, **extra)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(request, 401, "missing or invalid bearer token: send 'Authorization: Bearer <token>'")


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    details = []
    for error in exc.errors:
        location = [
            str(part) for part in error.get("loc", ()) if part not in ("body", "payload", "query", "path")
        ]
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        details.append({"field": ".".join(location) or "body", "message": message})
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details[:5]) or "invalid request"
    return _error(request, 400, summary, details=details)


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    message = str(exc)
    if exc.status_code == 400 and message.startswith("Cannot parse request body"):
        if isinstance(exc.__cause__, RecursionError):
            message = "request body is nested too deeply to parse"
        else:
            message = "request body is not valid JSON"
    return _error(request, exc.status_code, message)


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return _error(request, 413, "request body is larger than 1 MiB")


def route_unknown_paths() -> None:
    """Answer every path under /api/ that no route matches with a JSON 404, not Django's HTML page.

    Called once, after every route module has registered: URL patterns are tried in order.
    """

    @api.api_operation(
        ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"],
        "/{path:unknown}",
        auth=None,
        include_in_schema=False,
    )
    def unknown_path(request: HttpRequest, unknown: str) -> HttpResponse:
        return _error(request, 404, f"no such API route: {request.method} {request.path}")


# ---------------------------------------------------------------------------------------------
# Helpers shared by the route modules


def listed(
    filterset: type[FilterSet],
    rows: QuerySet[Any],
    filters: Schema,
    paging: Paging,
    response: HttpResponse,
    **fixed: str,
) -> list[Any]:
    """One page of `rows` narrowed by a list's query `filters` (and the `fixed` ones its path gives)
    through the list's FilterSet, the one the dashboard uses. A value the FilterSet refuses is a 400
    naming each field at fault; an unset or empty filter takes the list's default."""
    found = filterset({**filters.model_dump(exclude_none=True), **fixed}, queryset=rows)
    if not found.is_valid():
        details = [
            {"field": field, "message": str(message)}
            for field, messages in found.errors.items()
            for message in messages
        ]
        raise Invalid("; ".join(f"{d['field']}: {d['message']}" for d in details), details=details)
    return page(found.qs, response, paging)


def page(qs: QuerySet[Any], response: HttpResponse, paging: Paging) -> list[Any]:
    """Slice a list: `limit` (1-1000, default 100) rows from `offset`; the total goes in X-Total-Count.

    An offset at or past the end is an empty page, however large: it never reaches the database,
    which could not hold it in a 64-bit OFFSET.
    """
    limit, offset = paging.limit, paging.offset
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise invalid("limit", f"must be between 1 and {MAX_PAGE_SIZE}")
    if offset < 0:
        raise invalid("offset", "must not be negative")
    total = qs.count()
    response["X-Total-Count"] = str(total)
    if offset >= total:
        return []
    return list(qs[offset : offset + limit])
