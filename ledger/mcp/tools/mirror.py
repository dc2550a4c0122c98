"""The Scribe after a run, and the workspace mirror now, as tools (docs/ledger.md "Scribe",
docs/mirror.md)."""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

from ledger.actions.frame import Caller
from ledger.actions.mirror import mirror_run_as, scribe_run_as
from ledger.actions.shapes import ScribeIn
from ledger.mcp import shapes
from ledger.mcp.frame import Answer, tool
from ledger.models import MirrorKind


def _mirrored(caller: Caller, kind: str) -> Answer:
    result = mirror_run_as(caller, kind)
    if result.report is None:
        raise ToolError(f"the {kind} could not run: {result.error}")
    return result.as_dict()


@tool(title="Export to the workspace", output=shapes.ExportReport, idempotent=True, coordinator=True)
def export_memory(caller: Caller) -> Answer:
    """Write the ledger's files into the project's workspace now (coordinators only)."""
    return _mirrored(caller, MirrorKind.EXPORT)


@tool(
    title="Import from the workspace",
    output=shapes.ImportReport,
    destructive=True,
    idempotent=True,
    coordinator=True,
)
def import_memory(caller: Caller) -> Answer:
    """Adopt the team's files from the project's workspace into the ledger now (coordinators only)."""
    return _mirrored(caller, MirrorKind.IMPORT)


@tool(
    title="Close a run (Scribe)",
    output=shapes.ScribeReport,
    destructive=True,
    idempotent=True,
    takes=ScribeIn,
)
def scribe_run(caller: Caller, payload: ScribeIn) -> Answer:
    """After a run: merge its learnings, list its decisions for review, note it in the session."""
    return scribe_run_as(caller, payload)
