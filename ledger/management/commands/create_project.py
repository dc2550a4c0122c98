"""Create a project, or update the one with this slug: the first step of setting Canon up for a team."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger import services
from ledger.models import Project


class Command(BaseCommand):
    help = "Create or update a project (docs/commands.md). Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="lower-case letters, digits and '-'")
        parser.add_argument("--name", help="display name (defaults to the slug for a new project)")
        parser.add_argument("--workspace", help="directory the ledger is mirrored into")
        parser.add_argument("--coordinator", help="the coordinator agent's name (default 'coordinator')")
        parser.add_argument(
            "--squad-type",
            choices=["architectural", "scope", "process", "technical"],
            help="type given to decisions adopted from a team's .squad/decisions.md that name none "
            "(default technical: an adopted log stays out of the boundaries layer until retyped)",
        )
        parser.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
        parser.add_argument("--json", action="store_true", help="print a JSON summary")

    def handle(self, *args: Any, **options: Any) -> None:
        slug: str = options["slug"]
        if options["dry_run"]:
            exists = Project.objects.filter(slug=slug).exists()
            self._report(options, {"slug": slug, "created": not exists, "dry_run": True})
            return
        try:
            project, created = services.project_create_or_update(
                slug=slug,
                name=options["name"],
                workspace=options["workspace"],
                coordinator=options["coordinator"],
                squad_type=options["squad_type"],
            )
        except services.LedgerError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        self._report(
            options,
            {
                "slug": project.slug,
                "name": project.name,
                "workspace": project.workspace,
                "coordinator": project.coordinator_agent,
                "squad_type": project.squad_type,
                "created": created,
                "dry_run": False,
            },
        )

    def _report(self, options: dict[str, Any], summary: dict[str, Any]) -> None:
        if options["json"]:
            self.stdout.write(json.dumps(summary, sort_keys=True))
            return
        verb = (
            "would create"
            if summary["dry_run"] and summary["created"]
            else ("would update" if summary["dry_run"] else ("created" if summary["created"] else "updated"))
        )
        self.stdout.write(f"{verb} project {summary['slug']}")
