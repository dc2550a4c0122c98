"""Give a dashboard user a role in a project, creating the user when missing (docs/commands.md)."""

from __future__ import annotations

import json
import os
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ledger.models import MemberRole, Membership, Project


class Command(BaseCommand):
    help = "Make a user a coordinator or viewer of a project. Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True)
        parser.add_argument("--user", required=True, help="user name (created when missing)")
        parser.add_argument("--role", required=True, choices=MemberRole.values)
        parser.add_argument(
            "--password-env", metavar="VAR", help="set the password from this environment variable"
        )
        parser.add_argument("--dry-run", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']!r}", returncode=2)
        password = None
        if options["password_env"]:
            password = os.environ.get(options["password_env"])
            if not password:
                raise CommandError(
                    f"environment variable {options['password_env']} is empty or unset", returncode=2
                )
        user_model = get_user_model()
        username = options["user"].strip()
        if not username or len(username) > 150:
            raise CommandError("--user must be 1-150 characters", returncode=2)
        user = user_model.objects.filter(username=username).first()
        if password is not None:
            try:
                validate_password(password, user=user or user_model(username=username))
            except ValidationError as exc:
                raise CommandError(f"password refused: {' '.join(exc.messages)}", returncode=2) from exc
        membership = Membership.objects.filter(project=project, user=user).first() if user else None
        summary = {
            "project": project.slug,
            "user": username,
            "role": options["role"],
            "user_created": user is None,
            "previous_role": membership.role if membership else None,
            "dry_run": options["dry_run"],
        }
        if not options["dry_run"]:
            with transaction.atomic():
                if user is None:
                    user = user_model.objects.create_user(username=username)
                    if password is None:
                        user.set_unusable_password()
                if password is not None:
                    user.set_password(password)
                user.save()
                Membership.objects.update_or_create(
                    user=user, project=project, defaults={"role": options["role"]}
                )
        if options["json"]:
            self.stdout.write(json.dumps(summary, sort_keys=True))
            return
        verb = "would make" if options["dry_run"] else "made"
        created = " (new user)" if summary["user_created"] else ""
        self.stdout.write(f"{verb} {username}{created} {options['role']} of {project.slug}")
