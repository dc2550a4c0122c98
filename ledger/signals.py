"""What the ledger announces to the layers above it, so that it never has to import them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent by every write that changes what a project's workspace files show, inside the write's
# transaction, with `project=`. The mirror listens (`ledger.mirror.runs`) and schedules an export.
ledger_changed = Signal()
