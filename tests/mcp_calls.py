"""Calling the MCP tools as a caller through the SDK's client in process, and reading what they answered."""

from __future__ import annotations

import re
from typing import Any

from mcp import Client
from mcp_types import CallToolResult

from ledger import services
from ledger.api.base import Caller
from ledger.mcp.server import build_server
from ledger.models import ApiToken, Project
from tests.threads import run_async


def text(result: CallToolResult) -> str:
    """The text blocks of a result, joined: where a tool error says why."""
    return " ".join(getattr(block, "text", "") for block in result.content)


def answer(result: CallToolResult) -> dict[str, Any]:
    """The JSON a tool answered; the test fails with the tool's error text when it refused."""
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


# What the SDK answers when a tool raised something other than a refusal: a crash.
CRASH = re.compile(r"Error executing tool \w+")


def caller_for(project: Project, role: str = "agent", agent: str = "Alice") -> Caller:
    token, _ = services.token_issue(project=project, role=role, agent_name=agent if role == "agent" else None)
    token = ApiToken.objects.select_related("project", "agent").get(pk=token.pk)
    return Caller(token=token, project=token.project)


def call(caller: Caller, tool: str, **arguments: Any) -> CallToolResult:
    """Call one tool as `caller` through the SDK's client; never a crash."""
    server = build_server(lambda ctx: caller)

    async def run() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    result = run_async(run)
    if result.is_error:
        assert not CRASH.fullmatch(text(result)), "the tool crashed"
    return result


def refused(result: CallToolResult, *needles: str) -> str:
    assert result.is_error, result.structured_content
    message = text(result)
    for needle in needles:
        assert needle in message
    return message
