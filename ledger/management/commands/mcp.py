"""Serve the MCP tools over stdio, for an agent runtime that starts Canon beside its database."""

from __future__ import annotations

import functools
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.mcpserver import Context

from ledger import selectors
from ledger.actions.frame import ApiRefusal, Caller, caller_for
from ledger.mcp.server import build_server


class Command(BaseCommand):
    help = (
        "Serve the ledger's MCP tools over stdio (docs/mcp.md), acting as the token read from the "
        "environment variable --token-env names."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug; the token must belong to it")
        parser.add_argument(
            "--token-env",
            default="CANON_TOKEN",
            help="environment variable holding the API token (default CANON_TOKEN), never the token itself",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        variable = options["token_env"]
        secret = os.environ.get(variable, "").strip()
        if not secret:
            raise CommandError(f"the environment variable {variable} holds no token", returncode=2)
        token = selectors.token_for_secret(secret) if len(secret) <= 200 else None
        if token is None:
            raise CommandError(f"the token in {variable} is not a valid Canon token", returncode=2)
        if token.project.slug != options["project"]:
            raise CommandError(
                f"the token in {variable} is not for project {options['project']!r}", returncode=2
            )
        build_server(functools.partial(_caller_of, secret, variable)).run("stdio")


def _caller_of(secret: str, variable: str, ctx: Context) -> Caller:
    """The token read again for each call, so that a token revoked (or a project changed) while the
    server runs takes effect at once, as it does over HTTP."""
    token = selectors.token_for_secret(secret)
    if token is None:
        raise ApiRefusal(401, f"the token in {variable} is no longer valid (revoked)")
    return caller_for(token, via="mcp")
