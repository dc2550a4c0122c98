"""Streamable HTTP at `/mcp/`: the API's bearer tokens, then the tools of `ledger.mcp.server`.

Stateless and JSON-answering, so that any worker process of the server can answer any request.
"""

from __future__ import annotations

import json

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ledger import selectors
from ledger.actions.frame import ApiRefusal, Caller, caller_for
from ledger.mcp.server import build_server
from ledger.models import ApiToken

PATH = "/mcp/"
TOKEN_KEY = "canon.token"


def _caller_of(ctx: Context) -> Caller:
    request = ctx.request_context.request
    token = request.scope.get(TOKEN_KEY) if request is not None else None
    if not isinstance(token, ApiToken):
        raise ApiRefusal(401, "missing or invalid bearer token")
    return caller_for(token, via="mcp")


def _lookup(secret: str) -> ApiToken | None:
    """The token for `secret`, its connection handled as Django handles a request's."""
    if not secret or len(secret) > 200:
        return None
    close_old_connections()
    try:
        return selectors.token_for_secret(secret)
    finally:
        close_old_connections()


class BearerAuth:
    """Refuse a request without a valid `Authorization: Bearer <token>` (401, JSON), as the API does;
    otherwise put the token in the scope for the tools."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, secret = header.partition(" ")
        token = await sync_to_async(_lookup)(secret.strip()) if scheme.lower() == "bearer" else None
        if token is None:
            body = json.dumps(
                {"error": "missing or invalid bearer token: send 'Authorization: Bearer <token>'"}
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="canon"'),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app({**scope, TOKEN_KEY: token}, receive, send)


def build_app() -> ASGIApp:
    """The ASGI app serving `/mcp/` (and its lifespan, which runs the session manager)."""
    server = build_server(_caller_of)
    # The Host check is Django's (ALLOWED_HOSTS, in config.asgi); the token is what admits a request.
    starlette = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        # The API's limit (1 MiB), not the transport's default of 4.
        max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    )
    return BearerAuth(starlette)
