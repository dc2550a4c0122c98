"""Run the post-run Scribe for one finished run (docs/ledger.md), from a post-run hook or by hand."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ledger import services
from ledger.models import Project
from ledger.scribe import scribe_run


class Command(BaseCommand):
    help = "Merge a finished run's learnings, list its decisions for review, note the run in the session."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True)
        parser.add_argument("--agent", required=True)
        parser.add_argument("--run-id", required=True)
        parser.add_argument("--started-at", required=True, help="ISO 8601 with a time zone")
        parser.add_argument("--outcome", default="completed")
        parser.add_argument(
            "--approved", action="store_true", help="the run was approved (coordinator backstop)"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="report what would be merged, merge nothing"
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']!r}", returncode=2)
        try:
            started_at = datetime.fromisoformat(options["started_at"].replace("Z", "+00:00"))
        except ValueError as exc:
            raise CommandError(
                f"--started-at: not an ISO 8601 time: {options['started_at']!r}", returncode=2
            ) from exc
        try:
            with transaction.atomic():
                result = scribe_run(
                    project=project,
                    agent_name=options["agent"],
                    run_id=options["run_id"],
                    started_at=started_at,
                    outcome=options["outcome"],
                    approved=options["approved"],
                    # An operator's command is a person's act, as a coordinator token is.
                    coordinator=True,
                    by="scribe",
                    via="command",
                )
                if options["dry_run"]:
                    transaction.set_rollback(True)
        except services.LedgerError as exc:
            raise CommandError(exc.message, returncode=2 if isinstance(exc, services.Invalid) else 1) from exc
        if options["json"]:
            self.stdout.write(json.dumps({**result.as_dict(), "dry_run": options["dry_run"]}, sort_keys=True))
            return
        prefix = "[dry run] would merge" if options["dry_run"] else "merged"
        self.stdout.write(
            f"{prefix} {len(result.merged)}, {len(result.needs_review)} need review: "
            + ", ".join(e.slug for e in result.needs_review)
        )
