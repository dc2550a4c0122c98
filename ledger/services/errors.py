"""What a refused write raises. The messages are safe to show to whoever sent the request; what
an error means to an HTTP client (a status) or a shell (an exit code) is decided where it came in."""

from __future__ import annotations

from typing import Any


class LedgerError(Exception):
    """A request the ledger refuses. `message` is safe to show; `details` names the fields at fault
    (`field`, `message`), and may say more about each (a competing proposal's `id`, `kind`, `title`)."""

    def __init__(self, message: str, *, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []


class Invalid(LedgerError):
    """The input is wrong: a retry of the same request fails the same way."""


class NotFound(LedgerError):
    """A row the request names is not in this project."""


class Conflict(LedgerError):
    """The ledger's state forbids it now (already decided, a look-alike name); `retryable` when only a
    race stood in the way and the same request may pass on retry."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


def invalid(field_name: str, message: str) -> Invalid:
    """Invalid input in one field: the message names it, and `details` carries it for machines."""
    return Invalid(f"{field_name}: {message}", details=[{"field": field_name, "message": message}])
