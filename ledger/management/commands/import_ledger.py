"""Import proposals written by hand into `.squad/decisions/inbox/` (SPEC §5)."""

from __future__ import annotations

from ledger.management.mirrorcommand import MirrorCommand
from ledger.mirror import MirrorResult, run_and_record
from ledger.models import MirrorKind, Project


class Command(MirrorCommand):
    help = "Import inbox files from the workspace as pending entries; existing entries are never changed."

    def run(self, project: Project, *, dry_run: bool) -> list[MirrorResult]:
        return [
            run_and_record(
                project, MirrorKind.IMPORT, trigger="command", dry_run=dry_run, progress=self.progress
            )
        ]
