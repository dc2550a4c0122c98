"""Import: the team's files read into the ledger before anything is rendered.

A file Canon last wrote or adopted, byte for byte, has nothing new and is not parsed. Any other file is
someone else's: its parts Canon already knows (by the sha256 of their text) are matched, and each new
part becomes a row whose text is kept verbatim:

- `decisions.md`: one decision per block;
- `decisions/inbox/*.md`: one pending entry per file, with or without front matter; the file keeps its
  name and stays the entry's file. An inbox file that disappeared after Squad's Scribe merged it into
  `decisions.md` marks its entry merged, linked to the block that took it in;
- `agents/{folder}/history.md`: one memory per bullet or paragraph of a typed section;
- `identity/now.md`: the open session's focus and issues from the front matter;
- notes files, `agents/{folder}/memory/*.md` and `memory/*.md`: read only (`ledger.mirror.notes`).

Rows are created only for content the ledger does not have (union); existing rows are never changed by
import, except that the open session follows `now.md`. A file that cannot be read safely (a link, too
large, not UTF-8, a NUL character, YAML aliases) is skipped, reported, and left untouched by the export.

One module per kind of file, on what they share (`foreign`: a file read safely, and remembered once
adopted):

- `decisions`: `decisions.md` and `decisions-archive.md`;
- `proposals`: an inbox file read as a proposal, whatever its shape; `inbox`: those proposals imported,
  and the inbox files that left (merged into the log by Squad's Scribe, or removed);
- `histories`: `agents/{folder}/history.md` and `history-archive.md`; `now`: `identity/now.md`.
"""

from __future__ import annotations

from collections.abc import Callable

from ledger.mirror import fs, manifest, notes
from ledger.mirror.adopt.decisions import adopt_archive, adopt_decisions
from ledger.mirror.adopt.foreign import MAX_IMPORT_BYTES
from ledger.mirror.adopt.histories import adopt_histories
from ledger.mirror.adopt.inbox import import_inbox
from ledger.mirror.adopt.now import adopt_now
from ledger.mirror.paths import Layout
from ledger.mirror.reports import ImportReport
from ledger.models import Agent, Project


def _known_people(project: Project, workspace: fs.Workspace, layout: Layout) -> list[str]:
    """The names a `— Name:` part of a block heading may be: the agent folders and the ledger's agents."""
    folders = workspace.folders(layout.agents) if workspace.kind(layout.agents) == "dir" else []
    return sorted({*folders, *Agent.objects.filter(project=project).values_list("name", flat=True)})


def import_project(
    project: Project, *, dry_run: bool = False, progress: Callable[[str], None] | None = None
) -> ImportReport:
    """Read the team's files into the ledger (see the module docstring). MirrorError if the workspace
    is unusable."""
    root = manifest.workspace_root(project)
    report = ImportReport(dry_run=dry_run)
    with manifest.project_lock(project), fs.Workspace(root) as workspace:
        layout = Layout.of(workspace)
        if workspace.kind(layout.team) == "link":
            report.skipped.append((layout.team, "a symbolic link; nothing under it is read"))
            return report
        files = manifest.load(project, workspace, dry_run=dry_run)
        if progress:
            progress(layout.decisions)
        people = _known_people(project, workspace, layout)
        adopted, moved = adopt_decisions(project, workspace, layout, files, report, people)
        adopt_archive(project, workspace, layout, files, report, people, moved)
        import_inbox(project, workspace, layout, files, report, adopted, progress)
        adopt_histories(project, workspace, layout, files, report, progress)
        adopt_now(project, workspace, layout, files, report)
        notes.index_private_notes(
            project, workspace, layout, files, report, limit=MAX_IMPORT_BYTES, progress=progress
        )
        notes.index_team_notes(project, workspace, layout, report, limit=MAX_IMPORT_BYTES, progress=progress)
    return report
