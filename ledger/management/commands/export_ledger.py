"""Write the ledger as markdown into the workspace (SPEC §5)."""

from __future__ import annotations

from ledger.management.mirrorcommand import MirrorCommand
from ledger.mirror import MirrorResult, run_and_record
from ledger.models import MirrorKind, Project


class Command(MirrorCommand):
    help = "Export the ledger into the workspace; only changed files are written, atomically."

    def run(self, project: Project, *, dry_run: bool) -> list[MirrorResult]:
        return [
            run_and_record(
                project, MirrorKind.EXPORT, trigger="command", dry_run=dry_run, progress=self.progress
            )
        ]
