"""What an import or an export did, per file: the reports the commands, the API and the dashboard show."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class MirrorError(Exception):
    """The workspace as a whole cannot be used (missing, not a folder, not writable)."""


def _pairs(items: list[tuple[str, str]], second: str) -> list[dict[str, str]]:
    return [{"path": path, second: value} for path, value in items]


@dataclass
class ExportReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    backed_up: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    dry_run: bool = False
    # Inbox files left as they were without being looked at (by the export after a write), counted with
    # `unchanged`.
    unread: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "written": self.written,
            "unchanged": len(self.unchanged) + self.unread,
            "removed": self.removed,
            "kept": _pairs(self.kept, "reason"),
            "backed_up": _pairs(self.backed_up, "backup"),
            "errors": _pairs(self.errors, "error"),
        }

    def summary(self) -> str:
        verb = "would be " if self.dry_run else ""
        return (
            f"{len(self.written)} {verb}written, {len(self.unchanged) + self.unread} unchanged, "
            f"{len(self.removed)} {verb}removed, {len(self.kept)} kept, "
            f"{len(self.backed_up)} {verb}backed up, {len(self.errors)} errors"
        )


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    adopted: list[tuple[str, str]] = field(default_factory=list)
    merged: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    # Notes files (`ledger.mirror.notes`): private notes indexed as memories, new versions of them,
    # memories retired with their file, team notes proposed for review and proposals withdrawn.
    indexed: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    retired: list[tuple[str, str]] = field(default_factory=list)
    proposed: list[tuple[str, str]] = field(default_factory=list)
    withdrawn: list[tuple[str, str]] = field(default_factory=list)
    # Decisions whose blocks Squad's `nap` moved to `decisions-archive.md` (archived in the ledger),
    # memories whose lines someone edited in place (the edited text supersedes them), control
    # characters dropped from a file before it was read, and how much of each file became rows.
    archived: list[tuple[str, str]] = field(default_factory=list)
    edited: list[tuple[str, str]] = field(default_factory=list)
    cleaned: list[tuple[str, str]] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)
    # How many of `skipped` are notes files.
    notes_skipped: int = 0
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return True  # skipped files and conflicts are warnings, not failures

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "created": self.created,
            "adopted": _pairs(self.adopted, "what"),
            "merged": _pairs(self.merged, "what"),
            "unchanged": len(self.unchanged),
            "skipped": _pairs(self.skipped, "reason"),
            "conflicts": _pairs(self.conflicts, "reason"),
            "indexed": _pairs(self.indexed, "what"),
            "changed": _pairs(self.changed, "what"),
            "retired": _pairs(self.retired, "what"),
            "proposed": _pairs(self.proposed, "what"),
            "withdrawn": _pairs(self.withdrawn, "what"),
            "archived": _pairs(self.archived, "what"),
            "edited": _pairs(self.edited, "what"),
            "cleaned": _pairs(self.cleaned, "what"),
            "lines": _pairs(self.lines, "what"),
        }

    def summary(self) -> str:
        verb = "would be " if self.dry_run else ""
        return (
            f"{len(self.created)} {verb}created, {len(self.adopted)} files {verb}adopted, "
            f"{len(self.merged)} {verb}marked merged, {len(self.unchanged)} unchanged, "
            f"{len(self.skipped)} skipped, {len(self.conflicts)} conflicts{self.notes_summary()}"
        )

    def notes_summary(self) -> str:
        """`, notes: 3 indexed, 1 changed, …` when the import met any notes file; else nothing."""
        counts = [
            (len(self.indexed), "indexed"),
            (len(self.changed), "changed"),
            (len(self.retired), "retired"),
            (len(self.proposed), "proposed"),
            (len(self.withdrawn), "withdrawn"),
            (self.notes_skipped, "skipped"),
        ]
        if not any(n for n, _ in counts):
            return ""
        verb = "would be " if self.dry_run else ""
        return ", notes: " + ", ".join(f"{n} {verb}{what}" for n, what in counts)
