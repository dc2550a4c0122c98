"""An entry and its file in the team's inbox (`decisions/inbox/`): merged into the team's log by someone
else, the merged decision keeping the file's own text, and a decided entry giving up the file's name."""

from __future__ import annotations

from django.db import transaction

from ledger.models import Decision, EntryStatus, InboxEntry, Project, Source
from ledger.services.effects import audit
from ledger.services.errors import Conflict, invalid
from ledger.services.inbox.review import entry_decide, locked_entry, require_pending
from ledger.values import InvalidValue, check_text


def entry_merged_outside(*, project: Project, entry_id: int, decision: Decision, by: str) -> InboxEntry:
    """Someone else merged a pending entry's file into the team's log (Squad's Scribe does, then deletes
    the file): the entry becomes merged, linked to the adopted block, instead of being written again."""
    with transaction.atomic():
        entry = locked_entry(project, entry_id)
        require_pending(entry)
        if InboxEntry.objects.filter(decision=decision).exists():
            raise Conflict(f"decision {decision.pk} is already linked to another entry")
        return entry_decide(
            project=project, entry=entry, by=by, via="import", status=EntryStatus.MERGED, decision=decision
        )


def entry_file_text_keep(*, project: Project, entry: InboxEntry, markdown: str) -> bool:
    """A merged entry came from a team's inbox file, and its decision still says what the file says: the
    file's text (`markdown`, one block of the log) becomes the decision's block in the files, word for
    word, as Squad's Scribe would append it, instead of one Canon writes from the fields.

    Compare-and-set on the decision as `entry.decision` holds it: only while it has no such text and its
    title, content and rationale are still those read. Returns whether it took the text.
    """
    decision = entry.decision
    if decision is None or entry.status != EntryStatus.MERGED:
        return False
    try:
        check_text(markdown, "the file")
    except InvalidValue as exc:
        raise invalid("file", str(exc)) from exc
    return bool(
        Decision.objects.filter(
            project=project,
            pk=decision.pk,
            source=Source.INBOX,
            markdown="",
            title=decision.title,
            content=decision.content,
            rationale=decision.rationale,
        ).update(markdown=markdown)
    )


def entry_file_release(*, project: Project, entry_id: int) -> bool:
    """A decided entry whose file Canon took out of the inbox gives up the file's name, so that a new file
    someone writes under the same name (Squad's `squad_decide` names files `{author}-{summary}.md`) is a
    new proposal. Audited with the name it held. Returns whether it gave it up (a pending entry keeps it)."""
    with transaction.atomic():
        entry = (
            InboxEntry.objects.select_for_update()
            .filter(project=project, pk=entry_id)
            .exclude(status=EntryStatus.PENDING)
            .exclude(file="")
            .first()
        )
        if entry is None:
            return False
        InboxEntry.objects.filter(pk=entry.pk).update(file="")
        audit(
            project=project,
            actor="canon",
            via="import",
            action="release_file",
            obj=entry,
            detail={"file": entry.file},
        )
        return True
