"""Write the ledger as markdown into the workspace, only where Canon owns the file (docs/mirror.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from ledger.management.mirrorcommand import MirrorCommand
from ledger.mirror import MirrorResult, run_and_record
from ledger.models import MirrorKind, Project


class Command(MirrorCommand):
    help = "Write the files Canon owns; changed ones only, atomically; the team's files are left alone."
    full = False

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--full",
            action="store_true",
            help="render and check every file, not only those whose inputs changed (a repair)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.full = options["full"]
        super().handle(*args, **options)

    def run(self, project: Project, *, dry_run: bool) -> list[MirrorResult]:
        return [
            run_and_record(
                project,
                MirrorKind.EXPORT,
                trigger="command",
                dry_run=dry_run,
                full=self.full,
                progress=self.progress,
            )
        ]
