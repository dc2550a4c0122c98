"""The MCP tools, one module per part of the ledger. Importing this package registers every tool in
`ledger.mcp.frame.REGISTRY`, in the order the server lists them: who is asking first, then the inbox,
decisions, memory, episodes, sessions, search, the context block, and the Scribe and mirror."""

# isort: skip_file
from ledger.mcp.tools import identity  # noqa: F401
from ledger.mcp.tools import inbox  # noqa: F401
from ledger.mcp.tools import decisions  # noqa: F401
from ledger.mcp.tools import memory  # noqa: F401
from ledger.mcp.tools import episodes  # noqa: F401
from ledger.mcp.tools import sessions  # noqa: F401
from ledger.mcp.tools import search  # noqa: F401
from ledger.mcp.tools import context  # noqa: F401
from ledger.mcp.tools import mirror  # noqa: F401
