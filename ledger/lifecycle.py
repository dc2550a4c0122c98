"""How long a memory lives and how much its age counts (docs/ledger.md "Memory").

Every memory is written with `expires_at` from its source's time-to-live (`CANON_MEMORY_TTL_DAYS`;
None: never). An expired memory keeps status `active`, so nothing about it is lost: it is only left
out of context and search (`live()`), and the dashboard shows it as expired. A pinned memory has no
expiry. In relevance ranking a memory's weight halves every half-life of its source
(`CANON_MEMORY_HALF_LIFE_DAYS`), except a coordinator's and a pinned one, which never decay.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Expression, Q
from django.utils import timezone

from ledger.models import MemoryStatus, Source

DAY_SECONDS = 86_400.0


def expires_at_for(source: str, start: datetime, *, pinned: bool = False) -> datetime | None:
    """When a memory from `source`, written at `start`, expires (None: never)."""
    days = settings.CANON_MEMORY_TTL_DAYS.get(source)
    if pinned or days is None:
        return None
    return start + timedelta(days=days)


def live(now: datetime | Expression | None = None, prefix: str = "") -> Q:
    """Memories an agent may still be told: active and not expired at `now` (default: the current time;
    an expression stands for a time given when the query runs, as the compiler's statements take it).
    `prefix` reaches a related memory (`"memory__"`). The one definition of the rule: the compiler's
    statements are built from it too (`ledger.context.layers`)."""
    now = timezone.now() if now is None else now
    return Q(**{f"{prefix}status": MemoryStatus.ACTIVE}) & (
        Q(**{f"{prefix}expires_at__isnull": True}) | Q(**{f"{prefix}expires_at__gt": now})
    )


def decay(source: str, age_seconds: float, *, pinned: bool = False) -> float:
    """The recency factor in (0, 1]: 1 when new, halved each half-life of `source`; always 1 for a
    coordinator's or a pinned memory, and for a source without a half-life."""
    half_life = settings.CANON_MEMORY_HALF_LIFE_DAYS.get(source)
    if pinned or source == Source.COORDINATOR or not half_life:
        return 1.0
    return float(0.5 ** (max(age_seconds, 0.0) / (half_life * DAY_SECONDS)))


def source_weight(source: str) -> float:
    """How much a memory's source counts in relevance ranking (1.0 when not configured)."""
    return float(settings.CANON_MEMORY_SOURCE_WEIGHTS.get(source, 1.0))
