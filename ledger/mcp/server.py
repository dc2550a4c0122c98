"""The MCP server (docs/mcp.md): every tool of `ledger.mcp.tools`, the prompt `start_of_turn` and the
resource `canon://context`, acting as the caller each call comes from.

`build_server(caller_of)` makes a server whose tools learn their caller from `caller_of(ctx)`: a fixed
token for stdio, the request's token for HTTP. Every refusal is a tool error whose text says why: a
refusal of the frame or of the ledger, arguments outside the tool's schema (a wrong type, an id that is
not an integer, an argument the tool does not take), or a body the actions' request shapes refuse.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from importlib.metadata import version
from typing import Any

import anyio.to_thread
from django.conf import settings
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.resources import Resource
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import AnyUrl, ValidationError

from ledger.mcp import tools  # noqa: F401  (registers every tool)
from ledger.mcp.frame import REGISTRY, CallerOf, ToolSpec, bind, readable
from ledger.mcp.stdio import SurrogatesReadAgain
from ledger.mcp.turn import (
    CONTEXT_DESCRIPTION,
    CONTEXT_NAME,
    CONTEXT_TITLE,
    CONTEXT_URI,
    read_context,
    start_of_turn_prompt,
)

# The project's distribution (pyproject.toml `name`), whose version the server reports.
DISTRIBUTION = "canon"

INSTRUCTIONS = (
    "Canon is the team's decision ledger and memory. Call whoami to learn your project, agent and role. "
    "At the start of each turn compile your context (compile_context, or the start_of_turn prompt): it "
    "holds the accepted decisions you work within. Propose decisions and team learnings into the inbox "
    "(submit_inbox_entry); coordinators merge or reject them. Record what you learn with record_memory, "
    "and close each run with record_episode and scribe_run."
)


class CallerResource(Resource):
    """A resource listed like any other, read for the caller of each request by `LedgerServer`."""

    async def read(self) -> str:
        raise RuntimeError(f"{self.uri} is read for a caller, through LedgerServer.read_resource")


class LedgerServer(MCPServer):
    """An MCPServer whose answer to arguments outside a tool's schema names each field at fault in one
    line, like the API's 400, instead of pydantic's multi-line report; an argument the tool does not
    take is refused by name rather than ignored. Its resources are read for the caller of the request."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.readers: dict[str, Callable[[Context], str]] = {}

    def add_caller_resource(
        self, uri: str, read: Callable[[Context], str], *, name: str, title: str, description: str
    ) -> None:
        """List a markdown resource whose text `read` gives for the request's context."""
        self.add_resource(
            CallerResource(
                uri=uri, name=name, title=title, description=description, mime_type="text/markdown"
            )
        )
        self.readers[uri] = read

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        read = self.readers.get(str(uri))
        if read is None or context is None:
            return await super().read_resource(uri, context)
        text = await anyio.to_thread.run_sync(functools.partial(read, context))
        return [ReadResourceContents(content=text, mime_type="text/markdown")]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        takes = next(
            (t.input_schema.get("properties", {}) for t in await self.list_tools() if t.name == name), None
        )
        if takes is None:
            raise ToolError(f"Unknown tool: {_shown(name)}")
        unknown = [key for key in arguments if key not in takes]
        if unknown:
            raise ToolError(
                f"Error executing tool {name}: unknown argument(s): {_names(unknown)}; "
                f"this tool takes: {', '.join(takes) or 'no arguments'}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: invalid arguments: {readable(cause)}") from cause

    async def run_stdio_async(self) -> None:
        """Serve stdio as the SDK does, but for arguments holding an unpaired surrogate
        (`ledger.mcp.stdio`)."""
        async with stdio_server() as (read_stream, write_stream):
            await self._lowlevel_server.run(
                SurrogatesReadAgain(read_stream),
                write_stream,
                self._lowlevel_server.create_initialization_options(),
            )


def _shown(text: str) -> str:
    """`text` as it can be written back in an answer: an unpaired surrogate as its escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _names(names: list[str], most: int = 10) -> str:
    shown = ", ".join(_shown(name) for name in names[:most])
    return f"{shown}, … ({len(names)} in all)" if len(names) > most else shown


def listed_tools() -> list[ToolSpec]:
    """The tools a server lists now: every registered one whose setting, if it has one, is on."""
    return [spec for spec in REGISTRY if spec.setting is None or getattr(settings, spec.setting)]


def build_server(caller_of: CallerOf) -> LedgerServer:
    server = LedgerServer(
        name="canon",
        title="Canon",
        version=version(DISTRIBUTION),
        instructions=INSTRUCTIONS,
    )
    for spec in listed_tools():
        server.add_tool(
            bind(spec, caller_of),
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=spec.annotations,
        )
    server.add_prompt(start_of_turn_prompt(caller_of))
    server.add_caller_resource(
        CONTEXT_URI,
        functools.partial(read_context, caller_of),
        name=CONTEXT_NAME,
        title=CONTEXT_TITLE,
        description=CONTEXT_DESCRIPTION,
    )
    return server
