"""The file mirror: the ledger in a project's workspace as markdown, and the team's own files read back.

The team's files are theirs. Canon writes a path only when it owns it (the file is absent, or holds
exactly the bytes Canon last wrote or adopted there); it adopts every other Squad file into the ledger
first, keeping each line where it was, and renders it again in the team's own style.

- `paths`: where the files live (`.squad/` or the older `.ai-team/`);
- `fs`: every read and write walked from the workspace's directory handle, never following a link;
- `squad`: Squad's formats, parsed losslessly and written in its style;
- `manifest`: the workspace, its lock, and what Canon wrote or adopted at each path;
- `adopt`: import; `render` and `export`: the ledger as files;
- `runs`: recorded runs, the cron sync and the export after each write.
"""

from __future__ import annotations

from ledger.mirror.adopt import import_project
from ledger.mirror.export import export_project
from ledger.mirror.manifest import project_lock
from ledger.mirror.reports import ExportReport, ImportReport, MirrorError
from ledger.mirror.runs import (
    MirrorResult,
    export_soon,
    run_and_record,
    sync_project,
    wait_for_background_exports,
)

__all__ = [
    "ExportReport",
    "ImportReport",
    "MirrorError",
    "MirrorResult",
    "export_project",
    "export_soon",
    "import_project",
    "project_lock",
    "run_and_record",
    "sync_project",
    "wait_for_background_exports",
]
