"""The production entry point (`make serve`): Django for the dashboard, the API and static files, and
the MCP server at `/mcp/` (docs/mcp.md), in one ASGI application."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import django
from django.conf import settings
from django.core.asgi import get_asgi_application
from django.http.request import split_domain_port, validate_host
from starlette.types import Receive, Scope, Send

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)
django_app = get_asgi_application()

from ledger.mcp.http import PATH, build_app  # noqa: E402  (needs the apps loaded)

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def _refuse_host(send: Send) -> None:
    body = b'{"error": "this host name is not served here"}'
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_application() -> ASGIApp:
    """A new application with its own MCP session manager, which can run (one lifespan) only once."""
    mcp_app = build_app()

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        """`/mcp` and `/mcp/` go to the MCP server, once the Host is one Django would serve; the lifespan
        starts and stops its session manager; everything else is Django's."""
        if scope["type"] == "lifespan":
            await mcp_app(scope, receive, send)
            return
        if scope["type"] == "http" and scope["path"] in (PATH, PATH.rstrip("/")):
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            domain, _ = split_domain_port(host)
            if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
                await _refuse_host(send)
                return
            await mcp_app({**scope, "path": PATH, "raw_path": PATH.encode()}, receive, send)
            return
        await django_app(scope, receive, send)  # type: ignore[arg-type]  # Django's stricter ASGI types

    return application


application = build_application()
