"""What a reviewer should be warned about in a proposal, and which decisions it overlaps with."""

from __future__ import annotations

import re
from functools import lru_cache

from django.db.models import Q

from ledger import untrusted
from ledger.models import Decision, DecisionStatus, InboxEntry

STOP_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "use",
        "using",
        "from",
        "by",
        "be",
        "is",
        "are",
        "not",
        "no",
        "all",
        "our",
    ]
)


def flags(*texts: str) -> list[str]:
    """Warnings for the reviewer about `texts` read together: `ledger.untrusted.flags`, the one detector
    (hidden and direction-changing characters, imitations of Canon's headings, orders to the model)."""
    return list(_flags("\n".join(texts)))


@lru_cache(maxsize=512)
def _flags(text: str) -> tuple[str, ...]:
    """Kept for the last few hundred texts: a list shows the same rows again after every action, and
    reading a text for look-alike letters costs more than the rest of its row."""
    return tuple(untrusted.flags(text))


def excerpt(text: str, length: int = 160) -> str:
    """The start of `text` as a row shows it: at most `length` characters, an ellipsis when cut."""
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"


def _words(title: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{3,}", title.lower()) if w not in STOP_WORDS}


def related_decisions(entry: InboxEntry, limit: int = 5) -> list[Decision]:
    """Active decisions most related to an entry: shared title words, then the same type.

    One bounded query (at most 100 candidates), ranked in Python: fast whatever the ledger's size.
    """
    words = sorted(_words(entry.title or entry.slug.replace("-", " ")), key=len, reverse=True)[:6]
    match = Q(type=entry.type)
    for word in words:
        match |= Q(title__icontains=word)
    candidates = list(
        Decision.objects.filter(project_id=entry.project_id, status=DecisionStatus.ACTIVE)
        .filter(match)
        .select_related("agent")
        .order_by("-created_at", "-id")[:100]
    )
    wanted = set(words)

    def score(decision: Decision) -> tuple[int, int]:
        return (len(wanted & _words(decision.title)) * 2 + (decision.type == entry.type), decision.pk)

    ranked = sorted(candidates, key=score, reverse=True)
    return [d for d in ranked if score(d)[0] > 0][:limit]
