"""Write the ledger as markdown into the workspace, only where Canon owns the file (docs/mirror.md)."""

from __future__ import annotations

from ledger.management.mirrorcommand import MirrorCommand
from ledger.mirror import MirrorResult, run_and_record
from ledger.models import MirrorKind, Project


class Command(MirrorCommand):
    help = "Write the files Canon owns; changed ones only, atomically; the team's files are left alone."

    def run(self, project: Project, *, dry_run: bool) -> list[MirrorResult]:
        return [
            run_and_record(
                project, MirrorKind.EXPORT, trigger="command", dry_run=dry_run, progress=self.progress
            )
        ]
