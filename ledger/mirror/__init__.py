"""The file mirror: the ledger in a project's workspace as markdown, and the team's own files read back.

The team's files are theirs. Canon writes a path only when it owns it (the file is absent, or holds
exactly the bytes Canon last wrote or adopted there); it adopts every other Squad file into the ledger
first, keeping each line where it was, and renders it again in the team's own style.

- `paths`: where the files live (`.squad/` or the older `.ai-team/`);
- `fs`: every read and write walked from the workspace's directory handle, never following a link;
- `squad`: Squad's formats, parsed losslessly and written in its style;
- `manifest`: the workspace, the lease that keeps one process at a time on a project, and what Canon
  wrote or adopted at each path;
- `adopt`: import; `render` and `export`: the ledger as files, at the cost of what changed: `changes`
  (the rows written since the last export), `targets` and `partial` (the files they touch), `sources`
  (the rows read light), `pieces` and `splice` (a file rendered again from the one Canon wrote),
  `decided` (the team's inbox files a coordinator decided);
- `runs`: recorded runs and the cron sync (the export after each write is a task: `ledger.tasks`).
"""

from __future__ import annotations

from ledger.mirror.adopt import import_project
from ledger.mirror.export import export_project
from ledger.mirror.manifest import MirrorBusy, claim_lease, project_lock, release_lease, take_wanted
from ledger.mirror.reports import ExportReport, ImportReport, MirrorError
from ledger.mirror.runs import BACKGROUND, MirrorResult, run_and_record, sync_project

__all__ = [
    "BACKGROUND",
    "ExportReport",
    "ImportReport",
    "MirrorBusy",
    "MirrorError",
    "MirrorResult",
    "claim_lease",
    "export_project",
    "import_project",
    "project_lock",
    "release_lease",
    "run_and_record",
    "sync_project",
    "take_wanted",
]
