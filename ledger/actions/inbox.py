"""The inbox: agents propose, coordinators merge, reject, resolve and undo (docs/ledger.md)."""

from __future__ import annotations

from django.db.models import QuerySet

from ledger import services, visibility
from ledger.actions.answers import MergeOut
from ledger.actions.frame import ApiRefusal, Caller
from ledger.actions.shapes import EntryEditIn, EntrySubmitIn, MergeIn, RejectIn
from ledger.models import InboxEntry, Source


def entry_submit_as(caller: Caller, payload: EntrySubmitIn) -> services.SubmitResult:
    """Propose as `caller`: an agent token as its own agent (naming another is refused), a coordinator
    for the agent it must name; the entry's `source` says which kind of caller proposed it."""
    agent_name = caller.agent_named(payload.agent_name, "a coordinator token must say which agent proposes")
    return services.entry_submit(
        project=caller.project,
        **payload.model_dump(exclude={"agent_name"}),
        agent_name=agent_name,
        agent=caller.agent,  # the token's own agent, already loaded: the service need not look it up
        source=Source.COORDINATOR if caller.is_coordinator else Source.AGENT,
    )


def inbox_rows(caller: Caller) -> QuerySet[InboxEntry]:
    """The project's entries `caller` may see, newest first."""
    rows = (
        InboxEntry.objects.filter(project=caller.project)
        .select_related("agent")
        .order_by("-created_at", "-id")
    )
    return visibility.entries_visible_to(rows, caller.agent)


def visible_entry(caller: Caller, entry_id: int) -> InboxEntry:
    """One entry the caller may see: another agent's private learning is not found, as if absent."""
    qs = InboxEntry.objects.select_related("agent").filter(project=caller.project, pk=entry_id)
    entry = visibility.entries_visible_to(qs, caller.agent).first()
    if entry is None:
        raise ApiRefusal(404, f"no inbox entry {entry_id} in this project")
    return entry


def edit_as(caller: Caller, entry_id: int, payload: EntryEditIn) -> InboxEntry:
    """A coordinator's version of a pending entry's text; the previous text is kept as a revision."""
    caller.require_coordinator()
    return services.entry_edit(
        project=caller.project, entry_id=entry_id, by=caller.name, via=caller.via, **payload.model_dump()
    )


def merge(caller: Caller, entry_id: int, payload: MergeIn) -> services.Merged:
    """Merge as a coordinator, with the reviewer's choices (`confirm_flagged`, `keep_both`, the
    decisions to supersede, the entries to reject) and the `version` they read."""
    caller.require_coordinator()
    return services.entry_merge_outcome(
        project=caller.project,
        entry_id=entry_id,
        by=caller.name,
        via=caller.via,
        seen=payload.version,
        **payload.model_dump(exclude={"version"}),
    )


def merge_as(caller: Caller, entry_id: int, payload: MergeIn) -> MergeOut:
    """`merge`, answered as the merge routes and tools answer it."""
    return merged_out(merge(caller, entry_id, payload))


def merged_out(outcome: services.Merged) -> MergeOut:
    return MergeOut.model_validate(
        {
            **MergeOut.from_orm(outcome.entry).model_dump(),
            "already_recorded": outcome.already_recorded,
            "superseded": outcome.superseded,
            "rejected": outcome.rejected,
            "message": outcome.message,
        }
    )


def reject_as(caller: Caller, entry_id: int, payload: RejectIn) -> InboxEntry:
    """Reject a pending entry as a coordinator, with the reason given."""
    caller.require_coordinator()
    return services.entry_reject(
        project=caller.project, entry_id=entry_id, by=caller.name, reason=payload.reason, via=caller.via
    )


def undo_as(caller: Caller, entry_id: int) -> InboxEntry:
    """Take back the last decision on an entry, as a coordinator, within the undo window."""
    caller.require_coordinator()
    return services.entry_undo(project=caller.project, entry_id=entry_id, by=caller.name, via=caller.via)


def resolve_as(
    caller: Caller,
    entry_id: int,
    *,
    reject: list[int],
    reason: str,
    supersede: int | None = None,
    confirm_flagged: bool = False,
    seen: str | None = None,
) -> InboxEntry:
    """Merge this entry and reject the competitors named, all or nothing, as a coordinator."""
    caller.require_coordinator()
    return services.entry_resolve(
        project=caller.project,
        entry_id=entry_id,
        reject_ids=reject,
        reason=reason,
        supersede=supersede,
        confirm_flagged=confirm_flagged,
        seen=seen,
        by=caller.name,
        via=caller.via,
    )
