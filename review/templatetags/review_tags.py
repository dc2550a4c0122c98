"""Small presentation helpers for the dashboard templates."""

from __future__ import annotations

import html
import unicodedata
from datetime import datetime, timedelta
from functools import lru_cache

from django import template
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince

from ledger.search import WORD, terms

register = template.Library()


@register.filter
def ago(value: datetime | None) -> str:
    """'3 hours ago' ('just now' within the minute) with the exact time on hover.

    Built by hand rather than with `format_html`: a list shows fifty of these, and escaping three
    values through Django's lazy-aware helpers cost more than the rest of the row."""
    if value is None:
        return ""
    local = timezone.localtime(value)
    recent = timezone.now() - value < timedelta(minutes=1)
    said = "just now" if recent else f"{timesince(value, depth=1)} ago"
    exact = local.strftime("%Y-%m-%d %H:%M:%S %Z")
    # Every part is escaped on this line.
    return mark_safe(
        f'<time datetime="{html.escape(local.isoformat())}" title="{html.escape(exact)}">'
        f"{html.escape(said)}</time>"
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


# Endings taken off a word before comparing it with a searched word, longest first: close enough to the
# database's stemming to mark `migration` for `migrations` and `cache` for `caching`.
_ENDINGS = ("ations", "ation", "ings", "ing", "ies", "ied", "ment", "es", "ed", "ly", "s", "e", "y")


def _plain(word: str) -> str:
    """`word` compared without case or accents."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _root(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


@lru_cache(maxsize=16384)
def _folded(word: str) -> tuple[str, str]:
    """A word of a shown text as it is compared with searched words: plain, and its root. Kept, since
    a page holds the same words many times over."""
    plain = _plain(word)
    return plain, _root(plain)


@register.filter
def highlight(value: object, q: object) -> SafeString:
    """The text escaped, with each word that the search `q` matches in `<mark>` (docs/dashboard.md).

    Takes plain text, never HTML: every piece is escaped before the marks are added. A word is marked
    when it starts with a searched word or shares its root, close to what the database matched.
    """
    text = "" if value is None else str(value)
    searched = tuple(_plain(word) for word in terms(q)) if isinstance(q, str) and q else ()
    if not searched:
        return escape(text)
    roots = {_root(word) for word in searched}
    pieces: list[str] = []
    end = 0
    for match in WORD.finditer(text):
        plain, root = _folded(match.group())
        if plain.startswith(searched) or root in roots:
            marked = html.escape(match.group())
            pieces += [html.escape(text[end : match.start()]), f"<mark>{marked}</mark>"]
            end = match.end()
    pieces.append(html.escape(text[end:]))
    return mark_safe("".join(pieces))  # every piece is escaped above


@register.simple_tag(takes_context=True)
def highlighted(context: template.Context, value: object) -> SafeString:
    """`value` with the words of the list's search (`q` of `params`, else of the request) marked.

    A row shown again after an action, outside its list, has no search and is only escaped.
    """
    shown = context.get("params")
    request = context.get("request")
    params = shown if shown is not None else getattr(request, "GET", None)
    return highlight(value, params.get("q", "") if params is not None else "")
