"""The MCP tools: each one checks who is asking the way the REST route does, then calls the services.

`build_server(caller_of)` makes a server whose tools learn their caller from `caller_of(ctx)`: a fixed
token for stdio, the request's token for HTTP.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ledger.api.base import ApiRefusal, Caller
from ledger.api.routes_decisions import decision_rows
from ledger.api.shapes import DecisionOut
from ledger.services import LedgerError

P = ParamSpec("P")
R = TypeVar("R")

CallerOf = Callable[[Context], Caller]


def _refusals_as_tool_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Run a tool the way Django runs a view: fresh database connections around it, and every refusal
    (`ApiRefusal`, `LedgerError`) returned as a tool error with its readable text."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        except ApiRefusal as exc:
            raise ToolError(exc.message) from exc
        except LedgerError as exc:
            raise ToolError(exc.message) from exc
        finally:
            close_old_connections()

    return wrapper


def build_server(caller_of: CallerOf) -> MCPServer:
    server = MCPServer(
        "canon",
        instructions=(
            "Canon is the team's decision ledger and memory. Propose decisions and learnings into the "
            "inbox; coordinators merge or reject them. Read the accepted decisions before you act."
        ),
    )

    def tool(description: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
        def register(fn: Callable[P, R]) -> Callable[P, R]:
            wrapped = _refusals_as_tool_errors(fn)
            server.add_tool(wrapped, name=fn.__name__, description=description)
            return wrapped

        return register

    @tool("List the project's decisions, newest first (status: active by default, or all).")
    def list_decisions(ctx: Context, status: str = "active", limit: int = 50) -> list[dict[str, Any]]:
        caller = caller_of(ctx)
        rows = decision_rows(caller.project)
        if status != "all":
            rows = rows.filter(status=status)
        return [DecisionOut.from_orm(d).model_dump(mode="json") for d in rows[:limit]]

    return server
