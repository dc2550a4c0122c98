"""What changed since a project's last export: the rows the database's triggers recorded.

Every insert, update and delete of a decision, memory, inbox entry or session of a project that has a
workspace adds a `MirrorChange` row in the write's own transaction (migration 0019), whichever code made
it (a service, an import, the admin): committed or rolled back with the write, and never lost whatever
order concurrent writes commit in. So does every file an import adopts (a manifest row's
`adopted_sha256`, which no export writes).

An export reads them first and renders the files of the kinds that changed (`KINDS`: the log and
`boundaries.md` follow the decisions, `patterns.md` and the histories the memories, each inbox file its
entry, `now.md` the sessions); the files of the other kinds are as the last export left them, unless
the workspace shows one changed (`ledger.mirror.export`). At its end it removes the rows it read (and
only those: a write that committed meanwhile is left for the next export), and records what it left
(`MirrorState.exported`). A file an import adopted since, a new rendering code, another workspace or
team folder, or a trigger missing: every kind is looked at again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Q

from ledger.mirror.paths import BOUNDARIES, PATTERNS, Layout
from ledger.mirror.pieces import Cache
from ledger.models import MirrorChange, MirrorState, Project

logger = logging.getLogger("canon.mirror")

# The kinds of file, by the rows they show.
DECISION, MEMORY, ENTRY, SESSION = "decision", "memory", "entry", "session"
KINDS = frozenset({DECISION, MEMORY, ENTRY, SESSION})
# A manifest row an import adopted or removed.
FILE = "file"
# The triggers migration 0019 creates.
TRIGGERS = {"sqlite": 14, "postgresql": 5}


@dataclass
class Changes:
    """The change rows an export read: their ids, and the rows they name by kind."""

    ids: list[int] = field(default_factory=list)
    rows: dict[str, set[int]] = field(default_factory=dict)

    @property
    def kinds(self) -> set[str]:
        return set(self.rows)

    def mark(self, kind: str) -> str:
        """What tells these changes of `kind` from any other: the last change row's id."""
        return str(max(self.ids)) + kind if self.ids else kind


def read(project: Project) -> Changes:
    found = Changes()
    for pk, kind, row_id in MirrorChange.objects.filter(project=project).values_list("pk", "kind", "row_id"):
        found.ids.append(pk)
        found.rows.setdefault(kind, set()).add(row_id)
    return found


def forget(project: Project, changes: Changes) -> None:
    """Remove the change rows the export read, by runs of consecutive ids: a row committed meanwhile has
    an id none of the runs holds."""
    ids = sorted(changes.ids)
    runs: list[tuple[int, int]] = []
    for pk in ids:
        if runs and runs[-1][1] == pk - 1:
            runs[-1] = (runs[-1][0], pk)
        else:
            runs.append((pk, pk))
    for start in range(0, len(runs), 100):
        within = Q()
        for low, high in runs[start : start + 100]:
            within |= Q(pk__gte=low, pk__lte=high)
        MirrorChange.objects.filter(within, project=project).delete()


def _triggers_present() -> bool:
    vendor = connection.vendor
    if vendor not in TRIGGERS:
        return False
    if vendor == "sqlite":
        sql = "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'ledger_mirror_%'"
    else:
        sql = "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'ledger_mirror_%' AND NOT tgisinternal"
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return row is not None and row[0] == TRIGGERS[vendor]


def left_by_last(project: Project) -> dict[str, Any]:
    found = MirrorState.objects.filter(pk=project.pk).values_list("exported", flat=True).first()
    return found or {}


def trusted(project: Project, layout: Layout, last: dict[str, Any], changes: Changes) -> bool:
    """Whether the change rows tell all that changed since the last export: it wrote with this rendering
    code into this workspace and team folder, no import changed the manifest since, and the triggers that
    record changes are all there."""
    if last.get("rendering") != Cache.RENDERING or last.get("workspace") != project.workspace:
        return False
    if last.get("team") != layout.team or FILE in changes.kinds:
        return False
    if not _triggers_present():
        logger.warning("the mirror's triggers are missing (migration 0019): every file is looked at")
        return False
    return True


def remember(
    project: Project,
    layout: Layout,
    recheck: set[str],
    homes: dict[str, str] | None,
    folders: dict[str, str],
) -> None:
    """What this export leaves: the next one trusts the change rows if nothing else changed, and looks
    again at the kinds of file in `recheck` (one was kept or could not be written); each agent's home
    history, to tell when one moved; and what each folder showed as it ended, to tell whether a file
    was created, removed or renamed in it since (`ledger.mirror.export`)."""
    exported = {
        "rendering": Cache.RENDERING,
        "workspace": project.workspace,
        "team": layout.team,
        "recheck": sorted(recheck),
        "homes": homes,
        "folders": folders,
    }
    MirrorState.objects.filter(pk=project.pk).update(exported=exported)


def kind_of(path: str, layout: Layout) -> str | None:
    """The kind of file at `path`, by the rows it shows; None for a file no export writes."""
    return kinds_of([path], layout)[path]


def kinds_of(paths: Iterable[str], layout: Layout) -> dict[str, str | None]:
    """`kind_of` of each path."""
    inbox, agents, log, now = layout.inbox + "/", layout.agents + "/", layout.decisions, layout.now
    found: dict[str, str | None] = {}
    for path in paths:
        if path.startswith(inbox):
            found[path] = ENTRY
        elif path in (log, BOUNDARIES):
            found[path] = DECISION
        elif path == PATTERNS or (path.startswith(agents) and path.endswith("/history.md")):
            found[path] = MEMORY
        else:
            found[path] = SESSION if path == now else None
    return found
