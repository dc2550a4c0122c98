"""The ledger as Model Context Protocol tools (docs/mcp.md).

One set of tools, two transports: stdio through `manage.py mcp`, and streamable HTTP at `/mcp/`
(`ledger.mcp.http`), authenticated by the API's bearer tokens. `ledger.mcp.frame` holds the registry and
what every call goes through; `ledger.mcp.tools` the tools, one module per part of the ledger, each
calling its action (`ledger.actions`); `ledger.mcp.turn` the prompt and the resource; `ledger.mcp.server`
builds the server from them.
"""
