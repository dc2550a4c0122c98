"""Print the context block an agent would get now: for debugging a prompt, or for runtimes without HTTP."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger import context
from ledger.models import Project
from ledger.values import InvalidValue, clean_agent_name


class Command(BaseCommand):
    help = "Print the compiled context block for an agent (docs/compiler.md): plain text, or --json."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--agent", required=True, help="agent name (any case)")
        parser.add_argument("--child", action="store_true", help="a child worker: boundaries only")
        parser.add_argument(
            "--max-items", type=int, help="memories at most (default CANON_CONTEXT_MAX_ITEMS)"
        )
        parser.add_argument(
            "--max-tokens", type=int, help="memory token budget (default CANON_CONTEXT_MAX_TOKENS)"
        )
        parser.add_argument("--task", help="the run's task: adds the past knowledge most relevant to it")
        parser.add_argument(
            "--relevant-tokens",
            type=int,
            help="relevant layer budget (default CANON_CONTEXT_RELEVANT_TOKENS)",
        )
        parser.add_argument(
            "--session-tokens", type=int, help="session layer budget (default CANON_CONTEXT_SESSION_TOKENS)"
        )
        parser.add_argument("--run-id", help="record this compilation for the run")
        parser.add_argument("--json", action="store_true", help="print the API's JSON answer")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']!r}", returncode=2)
        try:
            clean_agent_name(options["agent"])
        except InvalidValue as exc:
            raise CommandError(f"--agent: {exc}", returncode=2) from exc
        bounds = (
            ("max_items", context.MAX_ITEMS_LIMIT),
            ("max_tokens", context.MAX_TOKENS_LIMIT),
            ("relevant_tokens", context.MAX_TOKENS_LIMIT),
            ("session_tokens", context.MAX_TOKENS_LIMIT),
        )
        for name, upper in bounds:
            value = options[name]
            if value is not None and not 0 <= value <= upper:
                raise CommandError(f"--{name.replace('_', '-')} must be between 0 and {upper}", returncode=2)
        task = options["task"]
        if task is not None and len(task) > context.TASK_MAX_LENGTH:
            raise CommandError(f"--task must be at most {context.TASK_MAX_LENGTH} characters", returncode=2)
        result = context.compile(
            project,
            options["agent"],
            child=options["child"],
            max_items=options["max_items"],
            max_tokens=options["max_tokens"],
            run_id=options["run_id"],
            task=task,
            relevant_tokens=options["relevant_tokens"],
            session_tokens=options["session_tokens"],
        )
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), sort_keys=True))
        elif result.text is not None:
            self.stdout.write(result.text, ending="")
        if result.error is not None:
            raise CommandError(result.error, returncode=1)
