"""A coordinator's verdict on a pending entry: the step every merge and rejection ends with
(`entry_decide`), the entry's row read and locked before it (`locked_entry`), and a rejection."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from ledger.models import EntryStatus, InboxEntry, Project
from ledger.services.effects import audit, workspace_changed
from ledger.services.errors import Conflict, NotFound
from ledger.services.fields import REASON_MAX_LENGTH, checked_text, locked


def locked_entry(project: Project, entry_id: int) -> InboxEntry:
    """The project's entry `entry_id`, its row locked until the caller's transaction ends; NotFound."""
    entry = locked(InboxEntry.objects.filter(project=project, pk=entry_id)).first()
    if entry is None:
        raise NotFound(f"no inbox entry {entry_id} in project {project.slug}")
    return entry


def require_pending(entry: InboxEntry) -> None:
    """Conflict unless the entry is still pending (merged or rejected entries are decided)."""
    if entry.status != EntryStatus.PENDING:
        raise Conflict(f"entry {entry.slug!r} is already {entry.status}")


def entry_decide(
    *,
    project: Project,
    entry: InboxEntry,
    by: str,
    via: str,
    status: str,
    detail: dict[str, Any] | None = None,
    **fields: Any,
) -> InboxEntry:
    """Move a pending entry to `status` (merged or rejected), recording who decided it; audited (with
    `detail` added to what the event says), mirrored after commit. Runs in the caller's transaction."""
    now = timezone.now()
    merged = status == EntryStatus.MERGED
    if merged:
        fields["merged_at"] = now
    # Compare-and-set: whoever changes the status first wins, on any database.
    won = InboxEntry.objects.filter(pk=entry.pk, status=EntryStatus.PENDING).update(
        status=status, reviewed_by=by[:150], reviewed_at=now, updated_at=now, **fields
    )
    if not won:
        entry.refresh_from_db(fields=["status"])
        raise Conflict(f"entry {entry.slug!r} is already {entry.status}")
    entry.refresh_from_db()
    said = (
        {"decision_id": entry.decision_id, "memory_id": entry.memory_id}
        if merged
        else {"reason": entry.reason}
    )
    audit(
        project=project,
        actor=by,
        via=via,
        action="merge" if merged else "reject",
        obj=entry,
        from_state=EntryStatus.PENDING,
        to_state=status,
        detail={**said, **(detail or {})},
    )
    workspace_changed(project)
    return entry


def entry_reject(
    *, project: Project, entry_id: int, by: str, reason: str = "", via: str = "api"
) -> InboxEntry:
    reason = checked_text("reason", reason, max_length=REASON_MAX_LENGTH).strip()
    with transaction.atomic():
        entry = locked_entry(project, entry_id)
        require_pending(entry)
        return entry_decide(
            project=project,
            entry=entry,
            by=by,
            via=via,
            status=EntryStatus.REJECTED,
            reason=reason,
        )
