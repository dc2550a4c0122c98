"""Import, then export: the cron job that keeps a workspace and the ledger in step (docs/commands.md)."""

from __future__ import annotations

from ledger.management.mirrorcommand import MirrorCommand
from ledger.mirror import MirrorResult, sync_project
from ledger.models import Project


class Command(MirrorCommand):
    help = (
        "Adopt what the team changed in its files and index its notes files, then write the files Canon "
        "owns (the cron job)."
    )

    def run(self, project: Project, *, dry_run: bool) -> list[MirrorResult]:
        return sync_project(project, trigger="command", dry_run=dry_run, progress=self.progress)
