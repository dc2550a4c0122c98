"""Who is asking, on every transport: the caller an action acts for, the refusals of the frame (who is
asking, how often), the write rate, and the paging of lists.

The API's routes make a caller from the request's bearer token, the MCP tools from the call's token, the
dashboard from the signed-in coordinator; every action then takes that caller and its checked input.
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
from django.db.models import QuerySet
from django.utils import timezone
from django_filters import FilterSet
from ninja import Schema
from pydantic import BaseModel

from ledger import visibility
from ledger.actions.shapes import MAX_PAGE_SIZE, Paging
from ledger.models import Agent, ApiToken, Project, TokenRole
from ledger.services import Invalid, invalid
from ledger.values import InvalidValue, agent_key

logger = logging.getLogger("canon.api")


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
    """Who is asking, already checked against the project: an API token (agent or coordinator), or,
    with no token, a coordinator signed in to the dashboard (`person`, their user name). `via` is
    the transport every write is audited with: `api`, `mcp` or `dashboard`."""

    token: ApiToken | None
    project: Project
    via: str = "api"
    person: str = ""

    @classmethod
    def coordinator_person(cls, project: Project, username: str) -> Caller:
        """A coordinator acting in the dashboard, whose access the dashboard has checked."""
        return cls(token=None, project=project, via="dashboard", person=username)

    @property
    def is_coordinator(self) -> bool:
        return self.token is None or self.token.role == TokenRole.COORDINATOR

    @property
    def agent(self) -> Agent | None:
        """The token's agent; None for a coordinator."""
        return self.token.agent if self.token is not None else None

    @property
    def name(self) -> str:
        """How this caller is named in `reviewed_by`, `changed_by` and the audit trail."""
        if self.token is None:
            return self.person
        if self.token.agent is not None:
            return self.token.agent.name
        return self.token.label or self.project.coordinator_agent

    @property
    def role(self) -> str:
        return TokenRole.COORDINATOR if self.is_coordinator else TokenRole.AGENT

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
        agent = self.agent
        assert agent is not None
        if wanted != agent.key:
            raise ApiRefusal(403, f"this token acts as {agent.name!r}, not {name!r}")

    def agent_named(self, name: str | None, missing: str) -> str:
        """The agent a write is for: `name` when given (an agent token may name only itself), else the
        token's own agent. A coordinator must name one: without, a 400 on `agent_name` saying
        `missing`."""
        chosen = name or (self.agent.name if self.agent is not None else "")
        if not chosen:
            raise invalid("agent_name", missing)
        self.require_agent(chosen)
        return chosen

    def count_write(self) -> None:
        """Count one write against an agent's CANON_AGENT_WRITES_PER_MINUTE (429 past it); a
        coordinator's writes are not counted."""
        if self.agent is not None:
            _count_write(self.project, self.agent)

    def writes_left(self) -> int | None:
        """How many more writes this caller may make in the current minute; None when unlimited."""
        limit = settings.CANON_AGENT_WRITES_PER_MINUTE
        if self.agent is None or limit <= 0:
            return None
        now = _clock()
        recent = [t for t in cache.get(_writes_key(self.project, self.agent), []) if now - t < _WRITE_WINDOW]
        return max(0, limit - len(recent))


def caller_for(token: ApiToken, via: str = "api") -> Caller:
    """The caller a live token makes, on every transport. An agent token naming the project's
    coordinator agent (issued before that name became the coordinator's) is refused with 403: that
    name speaks through coordinator tokens only."""
    if token.agent is not None:
        refusal = visibility.agent_token_refusal(token.project, token.agent.name)
        if refusal is not None:
            raise ApiRefusal(403, refusal)
    return Caller(token=token, project=token.project, via=via)


def token_used(token: ApiToken) -> None:
    """Note that `token` was used, coarsely: an operator can spot dead tokens without a write per call."""
    if token.last_used_at is None or (timezone.now() - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())


# Per-agent write rate (CANON_AGENT_WRITES_PER_MINUTE, docs/api.md "Write rate"): the times of an agent's
# recent writes, kept in Django's cache, which the settings share between the server's worker processes.
# The lock makes read-and-update one step for the threads of a process; two processes can each take the
# last free slot at the same instant, so the limit can be passed by one write per process.
_WRITE_WINDOW = 60.0
_writes_lock = threading.Lock()
_clock = time.time  # wall-clock seconds, comparable between processes that share a cache


def _writes_key(project: Project, agent: Agent) -> str:
    return f"canon:writes:{project.pk}:{agent.pk}"


def _count_write(project: Project, agent: Agent) -> None:
    """Count one write of `agent` in `project`, or refuse it with 429 past CANON_AGENT_WRITES_PER_MINUTE.

    A refused write is not counted, and is logged once per agent while it stays refused.
    """
    limit = settings.CANON_AGENT_WRITES_PER_MINUTE
    if limit <= 0:
        return
    key = _writes_key(project, agent)
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


# ---------------------------------------------------------------------------------------------
# Lists


@dataclass(frozen=True)
class Page:
    """One page of a list: `items`, and `total`, the number of rows that match."""

    total: int
    items: list[Any]
    limit: int
    offset: int

    def answer(self, out: type[Schema]) -> dict[str, Any]:
        """The page as `{total, offset, limit, items}`, each row read by the `out` shape."""
        return {
            "total": self.total,
            "offset": self.offset,
            "limit": self.limit,
            "items": [out.from_orm(item).model_dump(mode="json") for item in self.items],
        }


def listed(
    filterset: type[FilterSet], rows: QuerySet[Any], filters: BaseModel, paging: Paging, **fixed: str
) -> Page:
    """One page of `rows` narrowed by a list's `filters` (and the `fixed` ones the caller's path gives)
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
    return page(found.qs, paging)


def page(qs: QuerySet[Any], paging: Paging) -> Page:
    """`limit` (1-1000) rows from `offset`, and how many match.

    An offset at or past the end is an empty page, however large: it never reaches the database,
    which could not hold it in a 64-bit OFFSET.
    """
    limit, offset = paging.limit, paging.offset
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise invalid("limit", f"must be between 1 and {MAX_PAGE_SIZE}")
    if offset < 0:
        raise invalid("offset", "must not be negative")
    total = qs.count()
    items = [] if offset >= total else list(qs[offset : offset + limit])
    return Page(total=total, items=items, limit=limit, offset=offset)
