"""What the mirror's cron commands share: choosing projects, progress on a terminal, exit codes.

Exit codes (docs/commands.md): 0 success, 1 when anything failed (a skipped file is a warning, not a
failure), 2 for bad arguments.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger.mirror import MirrorResult
from ledger.models import Project


class MirrorCommand(BaseCommand):
    """Base for import_ledger, export_ledger and sync_ledger: subclasses implement `run`."""

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--project", help="project slug")
        which.add_argument("--all", action="store_true", help="every project that has a workspace")
        parser.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
        parser.add_argument("--json", action="store_true", help="print a JSON summary")

    def run(self, project: Project, *, dry_run: bool) -> list[MirrorResult]:
        raise NotImplementedError

    def projects(self, options: dict[str, Any]) -> list[Project]:
        if options["all"]:
            return list(Project.objects.exclude(workspace="").order_by("slug"))
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']!r}", returncode=2)
        return [project]

    def progress(self, path: str) -> None:
        """Shown on a terminal only; cron gets one summary line per project."""
        if self.stdout.isatty():
            self.stdout.write(f"\r\033[K  {path}", ending="")
            self.stdout.flush()

    def per_file(self, details: dict[str, Any]) -> None:
        """One line per file that was adopted, merged, indexed, proposed, retired, archived, edited,
        cleaned, read, backed up, kept, skipped or in conflict."""
        for label, key, field in (
            ("adopted", "adopted", "what"),
            ("merged", "merged", "what"),
            ("indexed", "indexed", "what"),
            ("changed", "changed", "what"),
            ("retired", "retired", "what"),
            ("proposed", "proposed", "what"),
            ("withdrawn", "withdrawn", "what"),
            ("archived", "archived", "what"),
            ("edited", "edited", "what"),
            ("cleaned", "cleaned", "what"),
            ("read", "lines", "what"),
            ("backed up", "backed_up", "backup"),
            ("kept", "kept", "reason"),
            ("warning", "skipped", "reason"),
            ("warning", "conflicts", "reason"),
        ):
            for item in details.get(key, []):
                self.stdout.write(f"  {label}: {item['path']}: {item[field]}")
        for error in details.get("errors", []):
            self.stderr.write(f"  error: {error['path']}: {error['error']}")

    def handle(self, *args: Any, **options: Any) -> None:
        summary: dict[str, Any] = {}
        failed = False
        for project in self.projects(options):
            results = self.run(project, dry_run=options["dry_run"])
            if self.stdout.isatty():
                self.stdout.write("\r\033[K", ending="")
            summary[project.slug] = {r.kind: r.as_dict() for r in results}
            failed = failed or not all(r.ok for r in results)
            if not options["json"]:
                prefix = "[dry run] " if options["dry_run"] else ""
                line = "; ".join(r.summary() for r in results)
                self.stdout.write(f"{prefix}{project.slug}: {line}")
                if options["verbosity"] >= 1:
                    for r in results:
                        self.per_file(r.as_dict())
        if options["json"]:
            self.stdout.write(json.dumps(summary, sort_keys=True))
        if failed:
            raise CommandError("the mirror could not be brought fully up to date (see above)", returncode=1)
