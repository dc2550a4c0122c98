"""Calling the MCP tools as a caller through the SDK's client in process, and reading what they answered.

Every answer is checked against the output schema the tool lists (with jsonschema, independently of the
SDK's own checks), and its text against its structured content: the same JSON, or, for the context
block, the block itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from mcp import Client
from mcp_types import CallToolResult, Tool

from ledger import services
from ledger.actions.frame import Caller
from ledger.mcp.server import build_server
from ledger.mcp.tools.context import EMPTY
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


def recorded(result: CallToolResult) -> dict[str, Any]:
    """The memory `record_memory` answered (`kind` `memory`)."""
    found = answer(result)
    assert found["kind"] == "memory", found
    return found["memory"]


# What the SDK answers when a tool raised something other than a refusal: a crash.
CRASH = re.compile(r"Error executing tool \w+")


def caller_for(project: Project, role: str = "agent", agent: str = "Alice") -> Caller:
    token, _ = services.token_issue(project=project, role=role, agent_name=agent if role == "agent" else None)
    token = ApiToken.objects.select_related("project", "agent").get(pk=token.pk)
    return Caller(token=token, project=token.project)


def conforms(tool: Tool, result: CallToolResult) -> None:
    """`result` is what `tool` says it answers: its structured content valid against the listed output
    schema (an object schema that names its properties), its text that content or the block."""
    schema = tool.output_schema
    assert schema is not None and schema.get("type") == "object" and schema.get("properties"), tool.name
    jsonschema.validate(
        result.structured_content, schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    [block] = result.content
    shown = getattr(block, "text", None)
    if tool.name == "compile_context":
        assert shown == (result.structured_content["text"] or EMPTY)  # type: ignore[index]
    else:
        assert json.loads(shown or "") == result.structured_content


def call(caller: Caller, tool: str, **arguments: Any) -> CallToolResult:
    """Call one tool as `caller` through the SDK's client; never a crash, and every answer as the tool's
    listing says it answers."""
    server = build_server(lambda ctx: caller)

    async def run() -> tuple[dict[str, Tool], CallToolResult]:
        async with Client(server) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            return listed, await client.call_tool(tool, arguments)

    listed, result = run_async(run)
    if result.is_error:
        assert not CRASH.fullmatch(text(result)), "the tool crashed"
    else:
        conforms(listed[tool], result)
    return result


def refused(result: CallToolResult, *needles: str) -> str:
    assert result.is_error, result.structured_content
    message = text(result)
    for needle in needles:
        assert needle in message
    return message
