"""Decisions as tools: every agent reads them, coordinators record them (docs/ledger.md "Decisions")."""

from __future__ import annotations

from ledger.actions.answers import DecisionOut
from ledger.actions.decisions import create_as, decision_rows, project_decision
from ledger.actions.frame import Caller
from ledger.actions.shapes import DecisionCreateIn, DecisionQuery
from ledger.filters import DecisionFilter
from ledger.mcp import lists, shapes
from ledger.mcp.agents import known_filter
from ledger.mcp.frame import Answer, tool
from ledger.mcp.params import (
    DEFAULT_LIMIT,
    Compact,
    DecisionId,
    Limit,
    Offset,
)


@tool(
    title="Record a decision",
    output=shapes.Decision,
    destructive=True,
    coordinator=True,
    takes=DecisionCreateIn,
)
def submit_decision(caller: Caller, payload: DecisionCreateIn) -> Answer:
    """Record an active decision directly, optionally superseding others (coordinators only)."""
    decision = create_as(caller, payload)
    return DecisionOut.from_orm(project_decision(caller.project, decision.pk)).model_dump(mode="json")


@tool(title="List decisions", output=lists.DECISIONS.page, read_only=True, takes=DecisionQuery)
def list_decisions(
    caller: Caller,
    payload: DecisionQuery,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    compact: Compact = False,
) -> Answer:
    """List the project's decisions newest first (status active by default, or superseded, archived,
    all)."""
    filters = known_filter(caller, payload)
    rows = decision_rows(caller.project)
    return lists.listing(
        lists.DECISIONS, DecisionFilter, rows, filters, limit=limit, offset=offset, compact=compact
    )


@tool(title="Read a decision", output=shapes.Decision, read_only=True)
def get_decision(caller: Caller, decision_id: DecisionId) -> Answer:
    """Read one decision with its revisions and supersession links."""
    return DecisionOut.from_orm(project_decision(caller.project, decision_id)).model_dump(mode="json")
