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

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "written": self.written,
            "unchanged": len(self.unchanged),
            "removed": self.removed,
            "kept": _pairs(self.kept, "reason"),
            "backed_up": _pairs(self.backed_up, "backup"),
            "errors": _pairs(self.errors, "error"),
        }

    def summary(self) -> str:
        verb = "would be " if self.dry_run else ""
        return (
            f"{len(self.written)} {verb}written, {len(self.unchanged)} unchanged, {len(self.removed)} "
            f"{verb}removed, {len(self.kept)} kept, {len(self.backed_up)} {verb}backed up, "
            f"{len(self.errors)} errors"
        )


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    adopted: list[tuple[str, str]] = field(default_factory=list)
    merged: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
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
        }

    def summary(self) -> str:
        verb = "would be " if self.dry_run else ""
        return (
            f"{len(self.created)} {verb}created, {len(self.adopted)} files {verb}adopted, "
            f"{len(self.merged)} {verb}marked merged, {len(self.unchanged)} unchanged, "
            f"{len(self.skipped)} skipped, {len(self.conflicts)} conflicts"
        )
