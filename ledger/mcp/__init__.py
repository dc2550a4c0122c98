"""The ledger as Model Context Protocol tools (docs/mcp.md).

One set of tools (`ledger.mcp.server`), two transports: stdio through `manage.py mcp`, and streamable
HTTP at `/mcp/` (`ledger.mcp.http`), authenticated by the API's bearer tokens.
"""
