"""Sessions: the one open session of a project, its focus, issues, summary and saved state.

When a session ends (ended, or closed because another one started) and its summary is not blank, the
summary is kept as a memory of the project's coordinator agent (source `session_summary`), once per
session, in the same transaction; every agent of the project reads it (docs/ledger.md "Sessions").

Every agent reads the open session, so its text is bounded (`FOCUS_MAX_LENGTH`, `ACTIVE_ISSUES_MAX`,
`SUMMARY_MAX_LENGTH`, …) and remembers who wrote it (`focus_by`, `issues_by`, `summary_by`): the
compiled block and a kept summary name those writers, whoever opened the session.
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
    ACTIVE_ISSUE_MAX_LENGTH,
    ACTIVE_ISSUES_MAX,
    FOCUS_MAX_LENGTH,
    SESSION_ID_MAX_LENGTH,
    SUBMIT_ATTEMPTS,
    SUMMARY_LINE_MAX_LENGTH,
    SUMMARY_MAX_LENGTH,
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
    if len(value) > ACTIVE_ISSUES_MAX:
        raise invalid("active_issues", f"at most {ACTIVE_ISSUES_MAX} issues, got {len(value)}")
    try:
        for item in value:
            check_text(item, "each issue")
    except InvalidValue as exc:
        raise invalid("active_issues", str(exc)) from exc
    for item in value:
        if len(item) > ACTIVE_ISSUE_MAX_LENGTH:
            raise invalid(
                "active_issues",
                f"each issue must be at most {ACTIVE_ISSUE_MAX_LENGTH} characters, got {len(item)}",
            )
    return [item.strip() for item in value if item.strip()]


def _focus(value: object) -> str:
    return checked_text("focus_area", value, max_length=FOCUS_MAX_LENGTH)


def _summary(value: object) -> str:
    return checked_text("summary", value, max_length=SUMMARY_MAX_LENGTH)


def _newest_lines(summary: str) -> str:
    """The summary with its oldest lines left out until it is at most SUMMARY_MAX_LENGTH characters:
    appended lines (the Scribe's among them) are never refused for the room the older ones take."""
    lines = summary.split("\n")
    size = len(summary)
    while size > SUMMARY_MAX_LENGTH and len(lines) > 1:
        size -= len(lines.pop(0)) + 1
    return "\n".join(lines)


def _writers(written: list[str], by: str) -> list[str]:
    """The summary's writers, in the order they first wrote, with `by` added."""
    return written if not by or by in written else [*written, by]


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
        # Who wrote it, shown wherever the summary is (it belongs to the coordinator agent only so that
        # every agent may read it).
        injected_by=summary_writers(session.summary_by),
        by="canon",
        via="session",
    )


def summary_writers(names: list[str]) -> str:
    """The writers of a summary as one line that fits a memory's `injected_by` (150 characters)."""
    line = ", ".join(names)
    return line if len(line) <= 150 else line[:149] + "…"


def session_start(
    *,
    project: Project,
    session_id: str | None = None,
    focus_area: str = "",
    active_issues: list[str] | None = None,
    summary: str = "",
    serialized_state: Any = None,
    by: str = "",
) -> Session:
    """Open a session; every other open session of the project is closed in the same transaction.
    `by` is who writes its text (an agent's name, or a coordinator's)."""
    issues = _issues(active_issues or [])
    summary = _summary(summary)
    if session_id is None or session_id == "":
        session_id = f"session-{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    session = Session(
        project=project,
        session_id=checked_text(
            "session_id", session_id, required=True, max_length=SESSION_ID_MAX_LENGTH
        ).strip(),
        focus_area=_focus(focus_area),
        active_issues=issues,
        summary=summary,
        serialized_state=_state(serialized_state),
        focus_by=by if focus_area.strip() else "",
        issues_by=by if issues else "",
        summary_by=[by] if by and summary.strip() else [],
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
    by: str = "",
) -> Session:
    """Change the open session; `by` is who writes (an agent's name, or a coordinator's)."""
    changes: dict[str, Any] = {}
    if focus_area is not None:
        changes["focus_area"] = _focus(focus_area)
        changes["focus_by"] = by
    if active_issues is not None:
        changes["active_issues"] = _issues(active_issues)
        changes["issues_by"] = by
    if summary is not None:
        changes["summary"] = _summary(summary)
        changes["summary_by"] = [by] if by and summary.strip() else []
    append = (
        checked_text("summary_append", summary_append, max_length=SUMMARY_LINE_MAX_LENGTH).strip()
        if summary_append is not None
        else ""
    )
    if serialized_state is not UNSET:
        changes["serialized_state"] = _state(serialized_state)
    with transaction.atomic():
        session = Session.objects.select_for_update().filter(project=project, ended_at__isnull=True).first()
        if session is None:
            raise NotFound("no open session in this project; start one with POST /sessions")
        for key, value in changes.items():
            setattr(session, key, value)
        if append:
            session.summary = _newest_lines(f"{session.summary}\n{append}" if session.summary else append)
            session.summary_by = _writers(session.summary_by, by)
        if end:
            session.ended_at = timezone.now()
        session.tokens = _session_tokens(session)
        session.save()
        if end:
            _summary_kept(session)
        workspace_changed(project)
        return session
