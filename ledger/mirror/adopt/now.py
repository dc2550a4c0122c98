"""`identity/now.md`: the open session follows the focus and issues its front matter names."""

from __future__ import annotations

from typing import Any

from ledger import services
from ledger.mirror import fs, manifest, squad
from ledger.mirror.adopt.foreign import MAX_IMPORT_BYTES, foreign_text, remember
from ledger.mirror.paths import Layout
from ledger.mirror.reports import ImportReport
from ledger.models import MirrorFile, Project, Session


def adopt_now(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
) -> None:
    path = layout.now
    found = foreign_text(workspace, path, files.get(path), report, limit=MAX_IMPORT_BYTES)
    if found is None:
        return
    text, digest = found
    split = squad.split_front_matter(text.removeprefix("\ufeff"))
    meta: dict[str, Any] = {}
    if split is not None:
        try:
            meta = squad.load_yaml(split[0].strip().strip("-"))
        except squad.FrontMatterError as exc:
            report.skipped.append((path, f"{exc}; left untouched"))
            return
    focus = meta.get("focus_area")
    issues = meta.get("active_issues")
    values: dict[str, Any] = {}
    if isinstance(focus, str | int | float) and not isinstance(focus, bool):
        values["focus_area"] = str(focus)
    if isinstance(issues, list):
        values["active_issues"] = [str(i) for i in issues if isinstance(i, str | int | float)]
    if report.dry_run:
        report.adopted.append((path, "would adopt the current focus"))
        return
    try:
        if values:
            current = Session.objects.filter(project=project, ended_at__isnull=True).first()
            if current is None:
                services.session_start(project=project, **values, by=path)
            elif any(getattr(current, k) != v for k, v in values.items()):
                services.session_update_current(project=project, **values, by=path)
    except services.LedgerError as exc:
        report.skipped.append((path, f"{exc.message}; left untouched"))
        return
    remember(manifest.entry(project, files, path), digest=digest, parts={}, placed=set())
    report.adopted.append((path, "the current focus adopted" if values else "kept as it is (no focus in it)"))
