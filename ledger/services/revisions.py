"""Editing a proposal before it is merged: a coordinator fixes the title or the text of a pending entry,
and the text it replaces is kept as an immutable revision (docs/ledger.md "Editing a proposal before
merging"). A merge then takes the edited text; the agent can no longer change it by a retry."""

from __future__ import annotations

from django.db import transaction

from ledger.models import EntryRevision, EntryStatus, InboxEntry, Project
from ledger.services.effects import audit, workspace_changed
from ledger.services.errors import Conflict, NotFound
from ledger.services.fields import checked_text_changes, locked


def entry_edit(
    *,
    project: Project,
    entry_id: int,
    by: str,
    via: str = "api",
    title: str | None = None,
    content: str | None = None,
    rationale: str | None = None,
) -> InboxEntry:
    """Change a pending entry's text; the previous text is kept as a revision. Audited as `edit`.

    Only the fields given change, and only when they differ: an edit that changes nothing writes
    nothing. The row is locked first, so an edit and a merge, a rejection or another edit of the same
    entry happen one after the other; an entry no longer pending is refused (Conflict).
    """
    # The title may be blank, as a submission's may (`fields.entry_fields`).
    changes = checked_text_changes(title, content, rationale, title_required=False)
    with transaction.atomic():
        entry = None
        if isinstance(entry_id, int) and not isinstance(entry_id, bool):
            entry = locked(InboxEntry.objects.filter(project=project, pk=entry_id)).first()
        if entry is None:
            raise NotFound(f"no inbox entry {entry_id} in project {project.slug}")
        if entry.status != EntryStatus.PENDING:
            raise Conflict(f"entry {entry.slug!r} is already {entry.status}; only a pending entry is edited")
        changes = {key: value for key, value in changes.items() if getattr(entry, key) != value}
        if not changes:
            return entry
        EntryRevision.objects.create(
            entry=entry,
            title=entry.title,
            content=entry.content,
            rationale=entry.rationale,
            changed_by=by[:150],
        )
        for key, value in changes.items():
            setattr(entry, key, value)
        entry.save(update_fields=[*changes, "updated_at"])
        audit(
            project=project, actor=by, via=via, action="edit", obj=entry, detail={"fields": sorted(changes)}
        )
        workspace_changed(project)
        return entry
