"""A pending entry merged into a decision or a memory, all or nothing, and what refuses a merge until
the reviewer chooses: a flagged text, a competing boundary, a text changed since the reviewer read it.
Competing proposals are settled in one step (`entry_resolve`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from ledger import untrusted
from ledger.competition import Competitor, competitors, entry_title
from ledger.models import (
    BOUNDARY_TYPES,
    DECISION_ENTRY_TYPES,
    Decision,
    EntryStatus,
    InboxEntry,
    Project,
    Source,
)
from ledger.services.decisions import decision_insert, decision_supersede
from ledger.services.errors import Conflict, NotFound, invalid
from ledger.services.fields import MAX_ID, REASON_MAX_LENGTH, checked_text, locked
from ledger.services.inbox.review import entry_decide, require_pending
from ledger.services.memory import memory_store


class FlaggedEntry(Conflict):
    """A merge of an entry whose text is flagged (`ledger.untrusted.flags`, the detector the dashboard
    shows), sent without `confirm_flagged`: merging puts the text in front of every agent."""

    def __init__(self, entry: InboxEntry, flags: list[str]) -> None:
        super().__init__(
            f"entry {entry.slug!r} is flagged: {'; '.join(flags)}. Merging puts its text in front of "
            "every agent: read it whole, then merge again with confirm_flagged: true"
        )
        self.flags = flags
        self.details = [{"field": "confirm_flagged", "message": flag} for flag in flags]


class CompetingBoundary(Conflict):
    """A merge of a boundary proposal while another boundary answers the same question (a pending
    `architectural` or `scope` entry, or an active decision of those types), with no choice made
    about it: supersede the decision, reject the entry, or keep both. `competitors` are the rows."""

    def __init__(self, entry: InboxEntry, rivals: list[Competitor]) -> None:
        named = "; ".join(_rival_name(rival) for rival in rivals)
        decisions = [r.pk for r in rivals if isinstance(r, Decision)]
        entries = [r.pk for r in rivals if isinstance(r, InboxEntry)]
        choices = [
            *([f"supersede: {decisions} to replace the decision"] if decisions else []),
            *([f"reject: {entries} to turn the proposal down"] if entries else []),
            "keep_both: true to keep them all as boundaries",
        ]
        super().__init__(
            f"entry {entry.slug!r} would be a second boundary on the same question: it competes with "
            f"{named}. Choose {', or '.join(choices)}"
        )
        self.competitors = rivals
        self.details = [
            {
                "field": "supersede" if isinstance(rival, Decision) else "reject",
                "message": f"competes with {_rival_name(rival)}",
                "kind": "decision" if isinstance(rival, Decision) else "entry",
                "id": rival.pk,
                "type": rival.type,
                "title": _rival_title(rival),
                "status": rival.status,
            }
            for rival in rivals
        ]


def _rival_title(rival: Competitor) -> str:
    return rival.title if isinstance(rival, Decision) else entry_title(rival)


def _rival_name(rival: Competitor) -> str:
    kind = "active decision" if isinstance(rival, Decision) else "pending entry"
    return f"{kind} #{rival.pk} {_rival_title(rival)!r} ({rival.type})"


def entry_flags(entry: InboxEntry) -> list[str]:
    """What a reviewer is warned about in an entry's text (its title, content and rationale read
    together): the detector the dashboard shows flags with."""
    return untrusted.flags("\n".join((entry.title, entry.content, entry.rationale)))


# How long a version is (`entry_version`): a SHA-256 digest, in hexadecimal.
VERSION_LENGTH = 64


def entry_version(entry: InboxEntry) -> str:
    """What a reviewer reads of an entry, as one string: the SHA-256 of every field a merge takes (type,
    title, content, rationale, tags, importance). A merge that carries the version it was read at is
    refused once it differs (`ChangedSinceRead`). A digest of the text, not a time: it changes with
    what the reviewer reads and only then, and a clock plays no part. The whole digest, since the agent
    who writes the text is the one a short one would invite to craft a second text that matches it."""
    read = [entry.type, entry.title, entry.content, entry.rationale, list(entry.tags), entry.importance]
    return hashlib.sha256(json.dumps(read, separators=(",", ":")).encode()).hexdigest()


class ChangedSinceRead(Conflict):
    """A merge of an entry whose text is no longer the one the reviewer read (`seen`, its
    `entry_version` then): its agent submitted it again, or another coordinator edited it, meanwhile.
    Nothing was merged; the reviewer reads it again and merges the version they read then."""

    def __init__(self, entry: InboxEntry) -> None:
        last = entry.revisions.order_by("-changed_at", "-id").values_list("changed_by", flat=True).first()
        who = f"coordinator {last}" if last is not None else f"its agent {entry.agent.name}"
        when = entry.updated_at.isoformat(timespec="seconds")
        super().__init__(
            f"entry {entry.slug!r} changed since you read it: last changed by {who} at {when}. "
            "Nothing was merged: read it again, then merge the version you read"
        )
        # Who changed it and when, for a page to say in its own words.
        self.edited_by: str | None = last
        self.agent_name = entry.agent.name
        self.changed_at = entry.updated_at
        # Not the new version: it is had by reading the entry again, with its new text.
        self.details = [
            {
                "field": "version",
                "message": "the entry changed since this version was read",
                "updated_at": when,
            }
        ]


@dataclass
class Merged:
    """What merging an entry did: the entry, now merged; whether its memory was already recorded (the
    agent held the same learning: nothing new was written); the decisions it superseded and the
    entries it rejected."""

    entry: InboxEntry
    already_recorded: bool = False
    superseded: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)

    @property
    def message(self) -> str:
        entry = self.entry
        if entry.decision_id is not None:
            said = [f"merged as decision {entry.decision_id}"]
        elif self.already_recorded:
            said = [f"already recorded as memory {entry.memory_id}: nothing new was written"]
        else:
            said = [f"merged as memory {entry.memory_id}"]
        memory = entry.memory if entry.memory_id is not None else None
        if memory is not None and memory.similar_to_id is not None and not self.already_recorded:
            said.append(
                f"it closely repeats memory {memory.similar_to_id} (similarity {memory.similarity}), "
                "flagged for review"
            )
        if self.superseded:
            said.append(f"superseded decision {', '.join(f'#{pk}' for pk in self.superseded)}")
        if self.rejected:
            said.append(f"rejected entry {', '.join(f'#{pk}' for pk in self.rejected)}")
        return "; ".join(said)


def entry_merge(**kwargs: Any) -> InboxEntry:
    """Merge a pending entry (`entry_merge_outcome`, same arguments) when the caller needs only the
    merged entry, not what the merge did besides."""
    return entry_merge_outcome(**kwargs).entry


def entry_merge_outcome(
    *,
    project: Project,
    entry_id: int,
    by: str,
    via: str = "api",
    confirm_flagged: bool = False,
    keep_both: bool = False,
    supersede: Iterable[int] = (),
    reject: Iterable[int] = (),
    reason: str = "",
    seen: str | None = None,
) -> Merged:
    """Merge a pending entry: a decision for decision types, a memory for the others. All or nothing,
    in one transaction (docs/ledger.md "Inbox: review").

    - `seen` is the entry's version (`entry_version`) as the reviewer read it: when the entry changed
      since, the merge is refused (`ChangedSinceRead`), so what is merged is what a person read. None
      checks nothing (an API caller that does not send it); the dashboard always sends it.

    - A flagged entry (`entry_flags`) is refused (`FlaggedEntry`) unless `confirm_flagged`.
    - A boundary entry (`architectural`, `scope`) competing with a pending boundary entry or an active
      boundary decision (`ledger.competition`) is refused (`CompetingBoundary`, naming each) unless
      each is settled: `supersede` names active decisions the new decision replaces, `reject` pending
      entries rejected with `reason` ("superseded by the merge of entry N" when blank); `keep_both`
      keeps those left. Any entry may supersede and reject so; only a decision type supersedes.
    - A `learning`, `pattern` or `update` is recorded as `memory_store` records a memory: when its
      agent already holds it as an active memory nothing new is written, the entry links to that one
      and the outcome says `already_recorded`; a near repeat is flagged (`similar_to`).
    """
    for name, value in (("confirm_flagged", confirm_flagged), ("keep_both", keep_both)):
        if not isinstance(value, bool):
            raise invalid(name, "must be true or false")
    superseded = _ids("supersede", supersede)
    others = _ids("reject", reject)
    if entry_id in others:
        raise invalid("reject", f"entry {entry_id} is the one merged")
    if seen is not None and not isinstance(seen, str):
        raise invalid("version", "must be the version the entry was read at")
    reason = checked_text("reason", reason, max_length=REASON_MAX_LENGTH).strip()
    with transaction.atomic():
        # Every entry named, locked in id order so that two merges never wait on each other.
        wanted = InboxEntry.objects.filter(project=project, pk__in=[entry_id, *others]).order_by("pk")
        named = {e.pk: e for e in locked(wanted.select_related("agent"))}
        if entry_id not in named:
            raise NotFound(f"no inbox entry {entry_id} in project {project.slug}")
        for pk in [entry_id, *others]:
            if pk not in named:
                raise Conflict(f"project {project.slug} has no inbox entry {pk}; nothing was changed")
            require_pending(named[pk])
        entry = named[entry_id]
        # Under the row's lock: neither a re-submission nor an edit comes in between this and the merge.
        if seen is not None and seen != entry_version(entry):
            raise ChangedSinceRead(entry)
        if superseded:
            if entry.type not in DECISION_ENTRY_TYPES:
                raise invalid(
                    "supersede", f"entry {entry.slug!r} becomes a {entry.type} memory, not a decision"
                )
            known = set(
                Decision.objects.filter(project=project, pk__in=superseded).values_list("pk", flat=True)
            )
            for pk in superseded:
                if pk not in known:
                    raise invalid("supersede", f"no decision {pk} in project {project.slug}")
        flagged = entry_flags(entry)
        if flagged and not confirm_flagged:
            raise FlaggedEntry(entry, flagged)
        if entry.type in BOUNDARY_TYPES and not keep_both:
            rivals = competitors(project, [entry], types=BOUNDARY_TYPES)[entry.pk]
            unsettled = [
                rival
                for rival in rivals
                if rival.pk not in (superseded if isinstance(rival, Decision) else others)
            ]
            if unsettled:
                raise CompetingBoundary(entry, unsettled)
        outcome = _merge(project=project, entry=entry, by=by, via=via)
        for pk in superseded:
            assert outcome.entry.decision_id is not None  # only a decision type supersedes
            decision_supersede(
                project=project, decision_id=pk, superseded_by_id=outcome.entry.decision_id, by=by, via=via
            )
        reason = reason or f"superseded by the merge of entry {entry.pk}"
        for pk in others:
            entry_decide(
                project=project, entry=named[pk], by=by, via=via, status=EntryStatus.REJECTED, reason=reason
            )
        outcome.superseded, outcome.rejected = superseded, others
        return outcome


def _ids(name: str, ids: Iterable[int]) -> list[int]:
    """The ids a merge names, each once, in order; anything but a list of ids is invalid."""
    found = list(ids) if not isinstance(ids, str | bytes) else None
    if found is None or any(
        not isinstance(pk, int) or isinstance(pk, bool) or not 1 <= pk <= MAX_ID for pk in found
    ):
        raise invalid(name, f"must be a list of ids (whole numbers from 1 to {MAX_ID})")
    return list(dict.fromkeys(found))


def _merge(*, project: Project, entry: InboxEntry, by: str, via: str) -> Merged:
    """What the entry becomes (a decision, or its agent's memory once), and the entry marked merged."""
    if entry.type in DECISION_ENTRY_TYPES:
        decision = decision_insert(
            project=project,
            agent=entry.agent,
            type=entry.type,
            title=entry.title or entry.slug,
            content=entry.content,
            rationale=entry.rationale,
            tags=entry.tags,
            source=Source.INBOX,
        )
        merged = entry_decide(
            project=project, entry=entry, by=by, via=via, status=EntryStatus.MERGED, decision=decision
        )
        return Merged(merged)
    recorded = memory_store(
        project=project,
        agent_name=entry.agent.name,
        type=entry.type,
        importance=entry.importance,
        content=entry.content,
        tags=entry.tags,
        source=Source.INBOX,
        by=by,
        via=via,
    )
    repeat = not recorded.created
    merged = entry_decide(
        project=project,
        entry=entry,
        by=by,
        via=via,
        status=EntryStatus.MERGED,
        detail={"already_recorded": True} if repeat else None,
        memory=recorded.memory,
    )
    return Merged(merged, already_recorded=repeat)


def entry_resolve(
    *,
    project: Project,
    entry_id: int,
    reject_ids: Iterable[int],
    reason: str,
    by: str,
    via: str = "dashboard",
    supersede: int | None = None,
    confirm_flagged: bool = False,
    seen: str | None = None,
) -> InboxEntry:
    """Settle competing proposals in one step, as the entry's page offers: merge this entry and reject
    the others with `reason` (required when there are any); with `supersede`, the decision the merge
    creates also replaces that active decision. The reviewer chose what to reject and supersede, so
    what they left is kept (`keep_both`). All or nothing, and refused when the entry changed since
    the reviewer read it (`seen`), as `entry_merge` is."""
    others = sorted(set(reject_ids) - {entry_id})
    reason = checked_text("reason", reason, required=bool(others), max_length=REASON_MAX_LENGTH).strip()
    return entry_merge(
        project=project,
        entry_id=entry_id,
        by=by,
        via=via,
        confirm_flagged=confirm_flagged,
        keep_both=True,
        supersede=[supersede] if supersede is not None else [],
        reject=others,
        reason=reason,
        seen=seen,
    )
