"""The audit list's words and filter (docs/dashboard.md, "Audit"): what each stored action and object
type reads as, and the FilterSet of `/p/{project}/audit/`.

The choices are fixed lists rather than the values found in the table, so the filter form costs no
query; an action not listed here is still shown (as stored), it only cannot be picked in the form.
"""

from __future__ import annotations

import django_filters
from django import forms

from ledger.models import AuditEvent

# Stored action → what the lists say a person did.
ACTIONS = {
    "merge": "merged",
    "reject": "rejected",
    "undo-merge": "unmerged",
    "undo-reject": "unrejected",
    "create": "created",
    "edit": "edited",
    "supersede": "superseded",
    "archive": "archived",
    "retype": "retyped",
    "adopt": "adopted",
    "propose": "proposed",
    "pin": "pinned",
    "renew": "renewed",
    "dismiss-similar": "kept as distinct",
    "retire": "retired",
    "index": "indexed",
    "record": "recorded",
    "replace": "replaced",
}
# Stored object type → its name in the lists.
OBJECT_TYPES = {
    "inboxentry": "proposal",
    "decision": "decision",
    "agentmemory": "memory",
    "session": "session",
    "episode": "episode",
}
# Where an action came from.
VIAS = {
    "dashboard": "dashboard",
    "api": "API",
    "mcp": "MCP",
    "command": "command",
    "scribe": "Scribe",
    "import": "workspace import",
    "session": "session",
    "admin": "admin",
}


def past_tense(action: str) -> str:
    """What the lists say a person did: `merge` reads "merged"; an unknown action reads as stored."""
    return ACTIONS.get(action, action)


def _choices(words: dict[str, str]) -> list[tuple[str, str]]:
    return list(words.items())


class AuditFilter(django_filters.FilterSet):
    """Narrow a project's audit events: by who acted (any case), what they did, to what, and how."""

    actor = django_filters.CharFilter(
        field_name="actor", lookup_expr="iexact", label="Actor", widget=forms.TextInput(attrs={"size": 12})
    )
    action = django_filters.ChoiceFilter(
        choices=_choices(ACTIONS),
        label="Action",
        empty_label="any",
    )
    object_type = django_filters.ChoiceFilter(
        choices=_choices(OBJECT_TYPES), label="Object", empty_label="any"
    )
    via = django_filters.ChoiceFilter(choices=_choices(VIAS), label="Via", empty_label="any")

    class Meta:
        model = AuditEvent
        fields = ["actor", "action", "object_type", "via"]
