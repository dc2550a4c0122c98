"""Sessions: the one open session of a project, its focus, issues, summary and saved state.

When a session ends (ended, or closed because another one started) and its summary is not blank, the
summary is kept as a memory of the project's coordinator agent (source `session_summary`), once per
session, in the same transaction; every agent of the project reads it (docs/ledger.md "Sessions").
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from ledger.blocks import session_block
from ledger.models import (
    AgentMemory,
    Importance,
    MemoryType,
    Project,
    Session,
    Source,
)
from ledger.services.effects import workspace_changed
from ledger.services.errors import Conflict, NotFound, invalid
from ledger.services.fields import (
    SESSION_ID_MAX_LENGTH,
    SUBMIT_ATTEMPTS,
    checked_text,
)
from ledger.services.memory import memory_store
from ledger.tokens import count_tokens
from ledger.values import (
    InvalidValue,
    check_json,
    check_text,
)


class _Unset:
    pass


UNSET: Any = _Unset()


def _issues(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid("active_issues", "must be a list of strings")
    try:
        for item in value:
            check_text(item, "each issue")
    except InvalidValue as exc:
        raise invalid("active_issues", str(exc)) from exc
    return [item.strip() for item in value if item.strip()]


def _state(value: Any) -> Any:
    """`serialized_state`: any JSON value the database can store (no NUL, no lone surrogate, no NaN)."""
    try:
        return check_json(value)
    except InvalidValue as exc:
        raise invalid("serialized_state", str(exc)) from exc


def _session_tokens(session: Session) -> int:
    return count_tokens(session_block(session))


def _summary_kept(session: Session) -> None:
    """Keep an ended session's summary as a memory of the coordinator agent, once per session."""
    if not session.summary.strip():
        return
    project = session.project
    if AgentMemory.objects.filter(
        project=project, source=Source.SESSION_SUMMARY, session_id=session.session_id
    ).exists():
        return
    memory_store(
        project=project,
        agent_name=project.coordinator_agent,
        type=MemoryType.UPDATE,
        importance=Importance.MEDIUM,
        content=session.summary,
        session_id=session.session_id,
        source=Source.SESSION_SUMMARY,
        by="canon",
        via="session",
    )


def session_start(
    *,
    project: Project,
    session_id: str | None = None,
    focus_area: str = "",
    active_issues: list[str] | None = None,
    summary: str = "",
    serialized_state: Any = None,
) -> Session:
    """Open a session; every other open session of the project is closed in the same transaction."""
    if session_id is None or session_id == "":
        session_id = f"session-{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    session = Session(
        project=project,
        session_id=checked_text(
            "session_id", session_id, required=True, max_length=SESSION_ID_MAX_LENGTH
        ).strip(),
        focus_area=checked_text("focus_area", focus_area),
        active_issues=_issues(active_issues or []),
        summary=checked_text("summary", summary),
        serialized_state=_state(serialized_state),
    )
    session.tokens = _session_tokens(session)
    for _attempt in range(SUBMIT_ATTEMPTS):
        try:
            with transaction.atomic():
                closing = list(
                    Session.objects.select_for_update().filter(project=project, ended_at__isnull=True)
                )
                Session.objects.filter(pk__in=[old.pk for old in closing]).update(ended_at=timezone.now())
                for old in closing:
                    _summary_kept(old)
                session.pk = None
                session.save(force_insert=True)
                workspace_changed(project)
                return session
        except IntegrityError:
            if Session.objects.filter(project=project, session_id=session.session_id).exists():
                raise Conflict(f"session {session.session_id!r} already exists in this project") from None
            # Another session opened between our close and our insert: close it too and retry.
    raise Conflict("sessions are being started concurrently; retry", retryable=True)


def session_update_current(
    *,
    project: Project,
    focus_area: str | None = None,
    active_issues: list[str] | None = None,
    summary: str | None = None,
    summary_append: str | None = None,
    serialized_state: Any = UNSET,
    end: bool = False,
) -> Session:
    changes: dict[str, Any] = {}
    if focus_area is not None:
        changes["focus_area"] = checked_text("focus_area", focus_area)
    if active_issues is not None:
        changes["active_issues"] = _issues(active_issues)
    if summary is not None:
        changes["summary"] = checked_text("summary", summary)
    append = checked_text("summary_append", summary_append).strip() if summary_append is not None else ""
    if serialized_state is not UNSET:
        changes["serialized_state"] = _state(serialized_state)
    with transaction.atomic():
        session = Session.objects.select_for_update().filter(project=project, ended_at__isnull=True).first()
        if session is None:
            raise NotFound("no open session in this project; start one with POST /sessions")
        for key, value in changes.items():
            setattr(session, key, value)
        if append:
            session.summary = f"{session.summary}\n{append}" if session.summary else append
        if end:
            session.ended_at = timezone.now()
        session.tokens = _session_tokens(session)
        session.save()
        if end:
            _summary_kept(session)
        workspace_changed(project)
        return session
