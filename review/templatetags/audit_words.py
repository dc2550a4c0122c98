"""The audit trail's words in templates: `{{ event.action|done }}` reads "merged" for `merge`."""

from __future__ import annotations

from django import template

from review.audit_filters import past_tense

register = template.Library()


@register.filter
def done(action: str) -> str:
    """What a person did, in the past tense (review/audit_filters.py ACTIONS)."""
    return past_tense(action)
