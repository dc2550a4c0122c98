"""The competing-proposals section of an entry's page (docs/dashboard.md "Competing proposals")."""

from __future__ import annotations

from typing import Any

from django import template

from ledger.competition import competitors
from ledger.models import DECISION_ENTRY_TYPES, Decision, EntryStatus, InboxEntry
from review.access import ProjectAccess

register = template.Library()


@register.inclusion_tag("review/_competing.html", takes_context=True)
def competing_section(context: template.Context, entry: InboxEntry, access: ProjectAccess) -> dict[str, Any]:
    """The entry beside what it competes with, and for a coordinator the one step that settles them:
    merge this one and reject the other pending ones with a reason, superseding an active decision it
    contradicts if they choose. Renders nothing when the entry competes with nothing."""
    rivals = competitors(access.project, [entry]).get(entry.pk, [])
    return {
        "entry": entry,
        "project": access.project,
        "access": access,
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
        "rivals": rivals,
        "pending": [rival for rival in rivals if isinstance(rival, InboxEntry)],
        "decisions": [rival for rival in rivals if isinstance(rival, Decision)],
        "can_resolve": access.can_act and entry.status == EntryStatus.PENDING,
        # Only an entry that becomes a decision can replace one.
        "can_supersede": entry.type in DECISION_ENTRY_TYPES,
    }
