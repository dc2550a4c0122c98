"""Recorded import and export runs, the sync that cron runs, and the best-effort export after writes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from ledger.mirror.adopt import import_project
from ledger.mirror.export import export_project
from ledger.mirror.reports import ExportReport, ImportReport, MirrorError
from ledger.models import MirrorKind, MirrorRun, Project

logger = logging.getLogger("canon.mirror")


@dataclass
class MirrorResult:
    """What an import or export did: its report, or the error that stopped it, and the stored run."""

    kind: str
    report: ExportReport | ImportReport | None
    error: str = ""
    run: MirrorRun | None = None

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
    progress: Callable[[str], None] | None = None,
) -> MirrorResult:
    """Import or export, its result stored as a MirrorRun (not for dry runs). Never raises MirrorError."""
    action = export_project if kind == MirrorKind.EXPORT else import_project
    result = MirrorResult(kind=kind, report=None)
    try:
        result.report = action(project, dry_run=dry_run, progress=progress)
    except MirrorError as exc:
        result.error = str(exc)
    except OSError as exc:
        result.error = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    if dry_run:
        return result
    if kind == MirrorKind.EXPORT:
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
        kind=kind,
        trigger=trigger,
        ok=result.ok,
        counts=counts,
        report=details,
        warnings=warnings,
        error=result.error,
        actor=actor[:150],
    )
    return result


def _remember_export(project: Project, ok: bool, message: str) -> None:
    now = timezone.now()
    if ok:
        Project.objects.filter(pk=project.pk).update(exported_at=now, export_error="", export_error_at=None)
    else:
        Project.objects.filter(pk=project.pk).update(export_error=message[:10_000], export_error_at=now)


_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="canon-export")
_queued: set[int] = set()
_futures: list[Future[None]] = []
_queue_lock = threading.Lock()


def export_after_write(sender: Any, *, project: Project, **kwargs: Any) -> None:
    """A write changed what `project`'s files show: export it once the write commits."""
    if not settings.CANON_EXPORT_ON_WRITE or not project.workspace:
        return
    project_id = project.pk
    transaction.on_commit(lambda: export_soon(project_id), robust=True)


def export_soon(project_id: int) -> None:
    """Export a project in the background after a write. Repeated requests while one waits coalesce."""
    with _queue_lock:
        if project_id in _queued:
            return
        _queued.add(project_id)
        _futures.append(_executor.submit(_background_export, project_id))


def _background_export(project_id: int) -> None:
    with _queue_lock:
        _queued.discard(project_id)
    try:
        close_old_connections()
        project = Project.objects.filter(pk=project_id).first()
        if project is None or not project.workspace:
            return
        result = run_and_record(project, MirrorKind.EXPORT, trigger="background")
        if not result.ok:
            logger.warning(
                "background export of %s failed: %s", project.slug, result.error or result.summary()
            )
    except Exception:
        logger.exception("background export of project %s failed", project_id)
    finally:
        connection.close()


def wait_for_background_exports(timeout: float = 30) -> None:
    """Block until every queued background export has finished (for tests and commands)."""
    while True:
        with _queue_lock:
            pending = [f for f in _futures if not f.done()]
            _futures[:] = pending
        if not pending:
            return
        for future in pending:
            future.result(timeout=timeout)


def sync_project(
    project: Project,
    *,
    trigger: str,
    actor: str = "",
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[MirrorResult]:
    """Import, then export: the cron job. Import comes first so no hand-written proposal is lost."""
    imported = run_and_record(
        project, MirrorKind.IMPORT, trigger=trigger, actor=actor, dry_run=dry_run, progress=progress
    )
    exported = run_and_record(
        project, MirrorKind.EXPORT, trigger=trigger, actor=actor, dry_run=dry_run, progress=progress
    )
    return [imported, exported]
