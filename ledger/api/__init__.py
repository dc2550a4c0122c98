"""The agent API (docs/api.md). Each module registers its routes on `api` when imported here."""

from __future__ import annotations

from ledger.api import (
    routes_context,
    routes_decisions,
    routes_episodes,
    routes_inbox,
    routes_memory,
    routes_mirror,
    routes_search,
    routes_sessions,
)
from ledger.api.base import api, route_unknown_paths

# Last: it answers only for paths that no route above matches.
route_unknown_paths()

__all__ = [
    "api",
    "routes_context",
    "routes_decisions",
    "routes_episodes",
    "routes_inbox",
    "routes_memory",
    "routes_mirror",
    "routes_search",
    "routes_sessions",
]
