"""Recorded import and export runs and the sync that cron runs, each under the project's lease.

The export after each ledger write is a task (`ledger.tasks`) that ends here too."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from ledger.mirror import manifest
from ledger.mirror.adopt import import_project
from ledger.mirror.export import export_project
from ledger.mirror.manifest import MirrorBusy
from ledger.mirror.reports import ExportReport, ImportReport, MirrorError
from ledger.models import MirrorKind, MirrorRun, Project

# The trigger of the export the background task runs after ledger writes (`ledger.tasks`).
BACKGROUND = "background"


@dataclass
class MirrorResult:
    """What an import or export did: its report, or the error that stopped it, and the stored run."""

    kind: str
    report: ExportReport | ImportReport | None
    error: str = ""
    run: MirrorRun | None = None
    # Another process held the project's lease for longer than this run would wait.
    busy: bool = False

    @property
    def ok(self) -> bool:
        return self.report is not None and self.report.ok

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = self.report.as_dict() if self.report is not None else {"ok": False}
        if self.error:
            body["error"] = self.error
        return body

    def summary(self) -> str:
        return f"{self.kind}: {self.report.summary() if self.report is not None else 'failed: ' + self.error}"


def run_and_record(
    project: Project,
    kind: str,
    *,
    trigger: str,
    actor: str = "",
    dry_run: bool = False,
    full: bool = False,
    progress: Callable[[str], None] | None = None,
) -> MirrorResult:
    """Import or export under the project's lease, its result stored as a MirrorRun (not for dry runs).
    An export renders the files whose inputs changed; every file with `full` (a repair).

    Never raises MirrorError: an unusable workspace, or a project another process kept busy for longer
    than CANON_MIRROR_WAIT_SECONDS, is the result's error."""
    result = MirrorResult(kind=kind, report=None)
    # The export after a write lists only the folders that changed; any other looks at every file.
    every = trigger != BACKGROUND
    try:
        with manifest.project_lock(project):
            result.report = _run(project, kind, dry_run=dry_run, full=full, every=every, progress=progress)
    except MirrorBusy as exc:
        result.error, result.busy = str(exc), True
    except MirrorError as exc:
        result.error = str(exc)
    except OSError as exc:
        result.error = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    if not dry_run:
        _record(project, result, trigger=trigger, actor=actor)
    return result


def _run(
    project: Project,
    kind: str,
    *,
    dry_run: bool,
    full: bool,
    every: bool,
    progress: Callable[[str], None] | None,
) -> ExportReport | ImportReport:
    if kind != MirrorKind.EXPORT:
        return import_project(project, dry_run=dry_run, progress=progress)
    if not dry_run:
        # This export reads every write that asked for one so far, so a queued one can stand down.
        # Writes still committing leave the request to it.
        with suppress(MirrorBusy):
            manifest.take_wanted(project.pk, wait=1)
    return export_project(project, dry_run=dry_run, full=full, every=every, progress=progress)


def _record(project: Project, result: MirrorResult, *, trigger: str, actor: str) -> None:
    if result.kind == MirrorKind.EXPORT and not result.busy:
        # A busy project is not a failing one: whoever holds it reports its own export.
        _remember_export(project, result.ok, result.error or result.summary())
    details = result.as_dict()
    warnings = [
        *details.get("skipped", []),
        *details.get("conflicts", []),
        *details.get("kept", []),
        *details.get("errors", []),
    ]
    counts = {
        key: len(value) if isinstance(value, list) else value
        for key, value in details.items()
        if key not in ("ok", "dry_run", "error")
    }
    result.run = MirrorRun.objects.create(
        project=project,
        kind=result.kind,
        trigger=trigger,
        ok=result.ok,
        counts=counts,
        report=details,
        warnings=warnings,
        error=result.error,
        actor=actor[:150],
    )


def _remember_export(project: Project, ok: bool, message: str) -> None:
    now = timezone.now()
    if ok:
        Project.objects.filter(pk=project.pk).update(exported_at=now, export_error="", export_error_at=None)
    else:
        Project.objects.filter(pk=project.pk).update(export_error=message[:10_000], export_error_at=now)


def sync_project(
    project: Project,
    *,
    trigger: str,
    actor: str = "",
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[MirrorResult]:
    """Import, then export: the cron job. Import comes first so no hand-written proposal is lost.

    Both run under one hold of the project's lease, so no background export slips in between; it needs
    no worker. When the project stays busy, both results say so."""
    kinds = (MirrorKind.IMPORT, MirrorKind.EXPORT)
    try:
        with manifest.project_lock(project):
            return [
                run_and_record(
                    project, kind, trigger=trigger, actor=actor, dry_run=dry_run, progress=progress
                )
                for kind in kinds
            ]
    except MirrorBusy as exc:
        results = [MirrorResult(kind=kind, report=None, error=str(exc), busy=True) for kind in kinds]
        if not dry_run:
            for result in results:
                _record(project, result, trigger=trigger, actor=actor)
        return results
