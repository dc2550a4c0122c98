"""Small presentation helpers for the dashboard templates."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def ago(value: datetime | None) -> str:
    """'3 hours ago' ('just now' within the minute) with the exact time on hover."""
    if value is None:
        return ""
    local = timezone.localtime(value)
    if timezone.now() - value < timedelta(minutes=1):
        said = "just now"
    else:
        said = f"{timesince(value).split(',')[0]} ago"
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        local.isoformat(),
        local.strftime("%Y-%m-%d %H:%M:%S %Z"),
        said,
    )


@register.simple_tag(takes_context=True)
def query_with(context: template.Context, **changes: object) -> str:
    """The list's query string with some parameters replaced (pagination that keeps the filters).

    The list's parameters are `params` when the view says which they are (a list shown again after an
    action posted elsewhere), else the request's own.
    """
    shown = context.get("params")
    params = (context["request"].GET if shown is None else shown).copy()
    for key, value in changes.items():
        if value in (None, ""):
            params.pop(key, None)
        else:
            params[key] = str(value)
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.filter
def words(value: str) -> str:
    """A report key as words: `backed_up` -> `backed up`."""
    return str(value).replace("_", " ")
