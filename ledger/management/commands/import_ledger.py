"""Adopt the team's files into the ledger: decision log, inbox, histories, now.md, notes (docs/mirror.md)."""

from __future__ import annotations

from ledger.management.mirrorcommand import MirrorCommand
from ledger.mirror import MirrorResult, run_and_record
from ledger.models import MirrorKind, Project


class Command(MirrorCommand):
    help = "Adopt the team's files (decisions.md, inbox, histories, now.md) and index its notes files."

    def run(self, project: Project, *, dry_run: bool) -> list[MirrorResult]:
        return [
            run_and_record(
                project, MirrorKind.IMPORT, trigger="command", dry_run=dry_run, progress=self.progress
            )
        ]
