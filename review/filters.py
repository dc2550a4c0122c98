"""The dashboard's list filters: the ledger's own, shared with the agent API (ledger/filters.py)."""

from __future__ import annotations

from ledger.filters import DecisionFilter, InboxFilter, MemoryFilter

__all__ = ["DecisionFilter", "InboxFilter", "MemoryFilter"]
