"""The checks every input to a write passes, each naming the field it refused."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db.models import Model, QuerySet

from ledger.models import EntryType, Importance
from ledger.services.errors import invalid
from ledger.values import (
    InvalidValue,
    check_text,
    clean_agent_name,
    normalize_tags,
    require_slug,
)

T = TypeVar("T")
M = TypeVar("M", bound=Model)

# The longest free text each field takes, however it arrives (REST, MCP over HTTP or stdio, the
# dashboard): every write checks its text here, so every transport refuses the same value with the same
# message (docs/api.md "Limits").
TITLE_MAX_LENGTH = 300
RUN_ID_MAX_LENGTH = 200
SESSION_ID_MAX_LENGTH = 100
# An entry's, a decision's or a memory's content (an adopted block of a team's log is one decision).
CONTENT_MAX_LENGTH = 100_000
RATIONALE_MAX_LENGTH = 20_000
# A reviewer's reason for a rejection.
REASON_MAX_LENGTH = 2_000
# The open session, which every agent of the project reads (docs/ledger.md "Sessions").
FOCUS_MAX_LENGTH = 500
ACTIVE_ISSUE_MAX_LENGTH = 300
ACTIVE_ISSUES_MAX = 50
SUMMARY_MAX_LENGTH = 20_000
SUMMARY_LINE_MAX_LENGTH = 2_000
# The largest id either database stores (a signed 64-bit integer): a larger one names no row.
MAX_ID = 2**63 - 1
# How many times a submission that lost a race for its slug re-runs the placement rules.
SUBMIT_ATTEMPTS = 5
# How far de-collision counts (`slug--agent--2` … `slug--agent--N`) before giving up.
DECOLLISION_LIMIT = 1000
IMPORTANCE_RANK = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}


def checked_choice(field_name: str, value: object, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        return_values = ", ".join(allowed)
        raise invalid(field_name, f"{value!r} is not one of: {return_values}")
    return value


def checked_text(
    field_name: str, value: object, *, required: bool = False, max_length: int | None = None
) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise invalid(field_name, "must be a string")
    try:
        check_text(value)
    except InvalidValue as exc:
        raise invalid(field_name, str(exc)) from exc
    if required and not value.strip():
        raise invalid(field_name, "must not be empty")
    if max_length is not None and len(value) > max_length:
        raise invalid(field_name, f"must be at most {max_length} characters, got {len(value)}")
    return value


def checked_text_changes(
    title: str | None, content: str | None, rationale: str | None, *, title_required: bool
) -> dict[str, str]:
    """The text fields an edit gives (None: left as it is), each checked as a new row's would be."""
    changes: dict[str, str] = {}
    if title is not None:
        changes["title"] = checked_text(
            "title", title, required=title_required, max_length=TITLE_MAX_LENGTH
        ).strip()
    if content is not None:
        changes["content"] = checked_text("content", content, required=True, max_length=CONTENT_MAX_LENGTH)
    if rationale is not None:
        changes["rationale"] = checked_text("rationale", rationale, max_length=RATIONALE_MAX_LENGTH)
    return changes


def _normalized(
    field_name: str,
    value: object,
    normalize: Callable[[Any], T],
    *,
    accepts: tuple[type, ...] = (str,),
    expected: str = "a string",
) -> T:
    """`normalize(value)` for a value of a type it `accepts`, its refusal reported against `field_name`."""
    if not isinstance(value, accepts):
        raise invalid(field_name, f"must be {expected}")
    try:
        return normalize(value)
    except InvalidValue as exc:
        raise invalid(field_name, str(exc)) from exc


def checked_agent_name(value: object, field_name: str = "agent_name") -> str:
    return _normalized(field_name, value, clean_agent_name)


def checked_tags(value: object) -> list[str]:
    if value is None:
        return []
    return _normalized(
        "tags",
        value,
        normalize_tags,
        accepts=(str, list, tuple),
        expected="a comma-separated string or a list of strings",
    )


def checked_slug(value: object) -> str:
    return _normalized("slug", value, require_slug)


def content_sha256(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def summary_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def entry_fields(
    *,
    type: object,
    content: object,
    title: object = "",
    rationale: object = "",
    tags: object = None,
    importance: object = None,
    run_id: object = "",
) -> dict[str, Any]:
    """The checked fields of an inbox entry, however it arrived (the API, a file, a shared memory)."""
    return {
        "type": checked_choice("type", type, EntryType.values),
        "title": checked_text("title", title, max_length=TITLE_MAX_LENGTH).strip(),
        "content": checked_text("content", content, required=True, max_length=CONTENT_MAX_LENGTH),
        "rationale": checked_text("rationale", rationale, max_length=RATIONALE_MAX_LENGTH),
        "tags": checked_tags(tags),
        "importance": checked_choice("importance", importance or Importance.MEDIUM, Importance.values),
        "run_id": checked_text("run_id", run_id, max_length=RUN_ID_MAX_LENGTH).strip(),
    }


def locked(queryset: QuerySet[M]) -> QuerySet[M]:
    """The rows to change, locked until the transaction ends (on PostgreSQL; SQLite locks the whole
    database for a write), with their agent read in the same query."""
    return queryset.select_for_update(of=("self",)).select_related("agent")
