"""Issue an API token. The secret is printed once, on the last line; only its hash is stored."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger import services
from ledger.models import Project, TokenRole


class Command(BaseCommand):
    help = "Print a new bearer token for an agent or a coordinator of a project (docs/commands.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--agent", required=True, help="the agent the token acts as (a label for coordinators)"
        )
        parser.add_argument("--role", choices=TokenRole.values, default=TokenRole.AGENT)
        parser.add_argument("--json", action="store_true", help="print a JSON object with the token")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(
                f"no project {options['project']!r}; create it with create_project", returncode=2
            )
        role = options["role"]
        try:
            token, secret = services.token_issue(
                project=project,
                role=role,
                agent_name=options["agent"] if role == TokenRole.AGENT else None,
                label=options["agent"] if role == TokenRole.COORDINATOR else "",
            )
        except services.LedgerError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        if options["json"]:
            summary = {"project": project.slug, "role": role, "agent": options["agent"], "token": secret}
            self.stdout.write(json.dumps(summary, sort_keys=True))
            return
        who = f"agent {token.agent.name}" if token.agent else f"coordinator ({token.label})"
        self.stdout.write(f"token for {who} in {project.slug} (shown once, keep it):")
        self.stdout.write(secret)
