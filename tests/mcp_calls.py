"""Reading what an MCP client got back from a tool call, for the MCP tests."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult


def text(result: CallToolResult) -> str:
    """The text blocks of a result, joined: where a tool error says why."""
    return " ".join(getattr(block, "text", "") for block in result.content)


def answer(result: CallToolResult) -> dict[str, Any]:
    """The JSON a tool answered; the test fails with the tool's error text when it refused."""
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content
