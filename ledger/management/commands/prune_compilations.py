"""Remove old compilation records: every compile with a run id records what the agent was told, so the
table grows with every turn of every agent. Run it from cron; what the ledger decided is not touched."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ledger import services
from ledger.models import Project


class Command(BaseCommand):
    help = "Remove compilations recorded more than --days ago (default CANON_COMPILATIONS_KEEP_DAYS)."

    def add_arguments(self, parser: CommandParser) -> None:
        scope = parser.add_mutually_exclusive_group(required=True)
        scope.add_argument("--project", help="project slug")
        scope.add_argument("--all", action="store_true", help="every project")
        parser.add_argument(
            "--days",
            type=int,
            help="keep the compilations of the last N days (default CANON_COMPILATIONS_KEEP_DAYS)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be removed, remove nothing"
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["days"] if options["days"] is not None else settings.CANON_COMPILATIONS_KEEP_DAYS
        if days < 0:
            raise CommandError("--days must be 0 or more", returncode=2)
        project = None
        if options["project"]:
            project = Project.objects.filter(slug=options["project"]).first()
            if project is None:
                raise CommandError(f"no project {options['project']!r}", returncode=2)
        before = timezone.now() - timedelta(days=days)
        removed = services.compilations_prune(before=before, project=project, dry_run=options["dry_run"])
        if options["json"]:
            summary = {"removed": removed, "before": before.isoformat(), "dry_run": options["dry_run"]}
            self.stdout.write(json.dumps(summary, sort_keys=True))
            return
        verb = "[dry run] would remove" if options["dry_run"] else "removed"
        self.stdout.write(f"{verb} {removed} compilations recorded before {before:%Y-%m-%d %H:%M} UTC")
