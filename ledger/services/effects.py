"""What every write leaves behind: an audit event, and the word that the workspace files are stale."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ledger.models import (
    AgentMemory,
    AuditEvent,
    Decision,
    Episode,
    InboxEntry,
    Project,
    Session,
)
from ledger.signals import ledger_changed


def audit(
    *,
    project: Project,
    actor: str,
    via: str,
    action: str,
    obj: InboxEntry | Decision | AgentMemory | Session | Episode,
    from_state: str = "",
    to_state: str = "",
    detail: dict[str, Any] | None = None,
) -> None:
    AuditEvent.objects.create(
        project=project,
        actor=actor[:150],
        via=via,
        action=action,
        object_type=type(obj).__name__.lower(),
        object_id=obj.pk,
        from_state=from_state,
        to_state=to_state,
        detail=detail or {},
    )


def workspace_changed(project: Project) -> None:
    """This project's workspace files are out of date: say so, inside the write's transaction."""
    ledger_changed.send(sender=Project, project=project)


def audit_many(
    *, project: Project, objects: Sequence[Decision | AgentMemory], action: str, detail: dict[str, Any]
) -> None:
    AuditEvent.objects.bulk_create(
        [
            AuditEvent(
                project=project,
                actor="canon",
                via="import",
                action=action,
                object_type=type(obj).__name__.lower(),
                object_id=obj.pk,
                to_state=obj.status,
                detail=detail,
            )
            for obj in objects
        ],
        batch_size=500,
    )
