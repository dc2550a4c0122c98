"""What the ledger announces to the layers above it, so that it never has to import them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent by every write that changes what a project's workspace files show, inside the write's
# transaction, with `project=`. `ledger.tasks` listens and queues an export in that transaction.
ledger_changed = Signal()
