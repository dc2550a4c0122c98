"""The inbox as tools: agents propose, coordinators merge or reject (docs/ledger.md "Inbox")."""

from __future__ import annotations

from ledger.actions.answers import EntryOut, RejectOut
from ledger.actions.frame import Caller
from ledger.actions.inbox import entry_submit_as, inbox_rows, merge_as, reject_as
from ledger.actions.shapes import EntrySubmitIn, InboxQuery, MergeIn, RejectIn
from ledger.filters import InboxFilter
from ledger.mcp import lists, shapes
from ledger.mcp.agents import known_filter
from ledger.mcp.frame import Answer, also_as, tool
from ledger.mcp.params import (
    DEFAULT_LIMIT,
    Compact,
    EntryId,
    Limit,
    Offset,
)


@tool(title="Propose to the inbox", output=shapes.Entry, idempotent=True, takes=EntrySubmitIn)
def submit_inbox_entry(caller: Caller, payload: EntrySubmitIn) -> Answer:
    """Propose a decision or learning into the inbox for a coordinator to review; the same slug again
    updates your pending entry."""
    result = entry_submit_as(caller, payload)
    return EntryOut.from_orm(result.entry).model_dump(mode="json")


also_as(
    submit_inbox_entry,
    name="squad_decide",
    title="Propose to the inbox (Squad's name)",
    description="The same as submit_inbox_entry, under the name Squad's agents call: propose a decision or "
    "learning into the inbox for a coordinator to review.",
    setting="CANON_MCP_SQUAD_ALIAS",
)


@tool(title="List inbox entries", output=lists.ENTRIES.page, read_only=True, takes=InboxQuery)
def list_inbox(
    caller: Caller,
    payload: InboxQuery,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    compact: Compact = False,
) -> Answer:
    """List inbox entries newest first (status pending by default, or merged, rejected, all)."""
    filters = known_filter(caller, payload)
    rows = inbox_rows(caller)
    return lists.listing(
        lists.ENTRIES, InboxFilter, rows, filters, limit=limit, offset=offset, compact=compact
    )


@tool(
    title="Merge an inbox entry",
    output=shapes.Merge,
    destructive=True,
    idempotent=True,
    coordinator=True,
    takes=MergeIn,
)
def merge_inbox_entry(caller: Caller, entry_id: EntryId, payload: MergeIn) -> Answer:
    """Merge a pending inbox entry into a decision or a memory (coordinators only). Send the entry's
    version as read: the merge is refused when it changed since. A flagged entry needs confirm_flagged; a
    boundary competing with another needs supersede, reject or keep_both."""
    return merge_as(caller, entry_id, payload).model_dump(mode="json", exclude_none=True)


@tool(
    title="Reject an inbox entry",
    output=shapes.Reject,
    destructive=True,
    idempotent=True,
    coordinator=True,
    takes=RejectIn,
)
def reject_inbox_entry(caller: Caller, entry_id: EntryId, payload: RejectIn) -> Answer:
    """Reject a pending inbox entry, with an optional reason (coordinators only)."""
    return RejectOut.from_orm(reject_as(caller, entry_id, payload)).model_dump(mode="json")
