"""Canon's side of the interop tests: a project pointed at a team's folder, and the mirror's runs."""

from __future__ import annotations

from pathlib import Path

from ledger import mirror
from ledger.models import Project

# Who reviews proposals and writes decisions in Canon, in the tests.
COORDINATOR = "coordinator"


def mirrored(project: Project, root: Path) -> Project:
    """`project` with the repository at `root` as its workspace."""
    project.workspace = str(root)
    project.save()
    return project


def sync(project: Project) -> tuple[mirror.ImportReport, mirror.ExportReport]:
    """`manage.py sync_ledger` for the project: import, then export. Both must succeed."""
    results = mirror.sync_project(project, trigger="command")
    assert all(r.ok for r in results), [r.as_dict() for r in results]
    imported, exported = (r.report for r in results)
    assert isinstance(imported, mirror.ImportReport) and isinstance(exported, mirror.ExportReport)
    return imported, exported


def export(project: Project) -> mirror.ExportReport:
    """An export alone, as the worker runs one after a ledger write. It must succeed."""
    report = mirror.export_project(project)
    assert report.ok, report.errors
    return report
