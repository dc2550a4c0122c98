"""A merge or a rejection taken back within `settings.CANON_UNDO_SECONDS`: the entry is pending again,
and what a merge created is archived unless something has built on it since."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ledger.models import (
    AgentMemory,
    AuditEvent,
    Decision,
    DecisionStatus,
    EntryStatus,
    InboxEntry,
    MemoryStatus,
    Project,
    Source,
)
from ledger.services.effects import audit, workspace_changed
from ledger.services.errors import Conflict
from ledger.services.fields import locked
from ledger.services.inbox.review import locked_entry


def entry_undo(*, project: Project, entry_id: int, by: str, via: str = "dashboard") -> InboxEntry:
    """Take back the last decision on an entry, within `settings.CANON_UNDO_SECONDS` of it: the entry is
    pending again (docs/ledger.md "Undo"). Undoing a merge archives what it created, as nothing in the
    ledger is deleted; it is refused once something depends on that (an edit, a supersession, …).
    The values cleared are kept in the audit event's detail."""
    with transaction.atomic():
        entry = locked_entry(project, entry_id)
        if entry.status == EntryStatus.PENDING:
            raise Conflict(f"entry {entry.slug!r} is pending: there is no merge or rejection to undo")
        _require_undo_window(entry)
        decided = entry.status
        detail: dict[str, Any] = {
            "reviewed_by": entry.reviewed_by,
            "reviewed_at": entry.reviewed_at.isoformat() if entry.reviewed_at else None,
        }
        if decided == EntryStatus.MERGED:
            detail |= {
                "merged_at": entry.merged_at.isoformat() if entry.merged_at else None,
                "decision_id": entry.decision_id,
                "memory_id": entry.memory_id,
            }
            _archive_merged(project=project, entry=entry, by=by, via=via)
        else:
            detail["reason"] = entry.reason
        now = timezone.now()
        # Compare-and-set on the decision being undone: a concurrent undo (or anything else) wins.
        won = InboxEntry.objects.filter(pk=entry.pk, status=decided, reviewed_at=entry.reviewed_at).update(
            status=EntryStatus.PENDING,
            reviewed_by="",
            reviewed_at=None,
            merged_at=None,
            reason="",
            decision=None,
            memory=None,
            updated_at=now,
        )
        if not won:
            raise Conflict(f"entry {entry.slug!r} changed meanwhile; reload it and try again")
        entry.refresh_from_db()
        audit(
            project=project,
            actor=by,
            via=via,
            action=f"undo-{'merge' if decided == EntryStatus.MERGED else 'reject'}",
            obj=entry,
            from_state=decided,
            to_state=EntryStatus.PENDING,
            detail=detail,
        )
        workspace_changed(project)
        return entry


def _require_undo_window(entry: InboxEntry) -> None:
    window = settings.CANON_UNDO_SECONDS
    if entry.reviewed_at is not None and timezone.now() - entry.reviewed_at <= timedelta(seconds=window):
        return
    remedy = (
        "archive or supersede what it became instead"
        if entry.status == EntryStatus.MERGED
        else "ask its agent to propose it again under a new slug"
    )
    raise Conflict(
        f"entry {entry.slug!r} was {entry.status} more than {_duration(window)} ago and can no longer be "
        f"undone; {remedy}"
    )


def _duration(seconds: int) -> str:
    if seconds < 60 or seconds % 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = seconds // 60
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _archive_merged(*, project: Project, entry: InboxEntry, by: str, via: str) -> None:
    """Archive the decision or memory a merge created, as `decision_archive` and `memory_archive` do,
    with an audit event naming the undo; refused when something has built on it since the merge. A
    merge that found its memory already recorded created nothing: undoing it archives nothing."""
    via_of_merge, said = _last_merge(entry)
    if via_of_merge == "import" or (entry.decision is not None and entry.decision.source == Source.IMPORT):
        raise Conflict(
            f"entry {entry.slug!r} was merged into the team's own files, which already hold it; "
            "archive the decision there instead"
        )
    if said.get("already_recorded"):
        return
    now = timezone.now()
    made: Decision | AgentMemory
    if entry.decision_id is not None:
        made = locked(Decision.objects.filter(pk=entry.decision_id)).get()
        _require_undoable_decision(made)
        Decision.objects.filter(pk=made.pk).update(
            status=DecisionStatus.ARCHIVED, status_changed_at=now, updated_at=now
        )
    else:
        assert entry.memory_id is not None  # a merged entry links to a decision or a memory
        made = locked(AgentMemory.objects.filter(pk=entry.memory_id)).get()
        _require_undoable_memory(made, entry)
        AgentMemory.objects.filter(pk=made.pk).update(status=MemoryStatus.ARCHIVED, updated_at=now)
    audit(
        project=project,
        actor=by,
        via=via,
        action="archive",
        obj=made,
        from_state=made.status,
        to_state="archived",
        detail={"undo": "merge", "entry_id": entry.pk},
    )


def _last_merge(entry: InboxEntry) -> tuple[str, dict[str, Any]]:
    """How the entry's last merge came (`via`: `import` when from the workspace,
    `entry_merged_outside`) and what its audit event said of it."""
    last = (
        AuditEvent.objects.filter(object_type="inboxentry", object_id=entry.pk, action="merge")
        .order_by("-id")
        .values_list("via", "detail")
        .first()
    )
    return (last[0], last[1] or {}) if last is not None else ("", {})


def _require_undoable_decision(decision: Decision) -> None:
    name = f"decision #{decision.pk}"
    if decision.status == DecisionStatus.SUPERSEDED:
        raise Conflict(f"{name} has been superseded since the merge; undo or edit its replacement instead")
    if decision.status != DecisionStatus.ACTIVE:
        raise Conflict(f"{name} is already {decision.status}; there is nothing left to undo")
    if decision.supersedes.exists():
        raise Conflict(f"{name} replaced an earlier decision when it was merged; supersede it instead")
    if decision.revisions.exists():
        raise Conflict(f"{name} has been edited since the merge; archive it instead if it is wrong")


def _require_undoable_memory(memory: AgentMemory, entry: InboxEntry) -> None:
    name = f"memory #{memory.pk}"
    if memory.status != MemoryStatus.ACTIVE:
        raise Conflict(f"{name} is {memory.status} since the merge; there is nothing left to undo")
    again = memory.source_entries.exclude(pk=entry.pk).order_by("pk").values_list("pk", flat=True).first()
    if again is not None:
        raise Conflict(
            f"{name} was merged again since, from entry #{again}; archive it instead if it is wrong"
        )
    changed = AuditEvent.objects.filter(object_type="agentmemory", object_id=memory.pk).exists()
    if changed or memory.supersedes.exists():
        raise Conflict(f"{name} has been edited or merged since; archive it instead if it is wrong")
