"""Undoing a merge or a rejection (docs/ledger.md "Undo"): the entry is pending again, what the merge
created is archived, the undo is audited, and it is refused once something depends on the result."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ledger import context, services
from ledger.mirror import render
from ledger.models import (
    AgentMemory,
    AuditEvent,
    Decision,
    DecisionStatus,
    EntryStatus,
    InboxEntry,
    MemoryStatus,
    Project,
    Source,
)
from ledger.services.projects import agent_get_or_create
from ledger.signals import ledger_changed
from tests.threads import race

pytestmark = pytest.mark.django_db


def propose(
    project: Project, slug: str = "use-postgres", type: str = "architectural", **kw: Any
) -> InboxEntry:
    fields = {"title": slug.replace("-", " ").title(), "content": f"We {slug}.", **kw}
    return services.entry_submit(project=project, agent_name="Alice", slug=slug, type=type, **fields).entry


def merged(project: Project, **kw: Any) -> InboxEntry:
    entry = propose(project, **kw)
    return services.entry_merge(project=project, entry_id=entry.pk, by="lead", via="dashboard")


def undo(project: Project, entry: InboxEntry) -> InboxEntry:
    return services.entry_undo(project=project, entry_id=entry.pk, by="lead")


def trail(entry: InboxEntry) -> list[str]:
    events = AuditEvent.objects.filter(object_type="inboxentry", object_id=entry.pk).order_by("id")
    return [event.action for event in events]


@pytest.fixture
def changes() -> Iterator[list[Project]]:
    """The projects whose workspace files a write marked stale."""
    seen: list[Project] = []

    def note(sender: Any, project: Project, **kw: Any) -> None:
        seen.append(project)

    ledger_changed.connect(note, dispatch_uid="test-undo")
    yield seen
    ledger_changed.disconnect(dispatch_uid="test-undo")


def test_undoing_a_merge_makes_the_entry_pending_and_archives_its_decision(project, changes):
    entry = merged(project)
    decision_id = entry.decision_id
    changes.clear()

    undone = undo(project, entry)

    assert undone.status == EntryStatus.PENDING
    assert (undone.reviewed_by, undone.reviewed_at, undone.merged_at, undone.decision_id) == (
        "",
        None,
        None,
        None,
    )
    decision = Decision.objects.get(pk=decision_id)
    assert decision.status == DecisionStatus.ARCHIVED
    assert decision.status_changed_at is not None
    assert trail(entry) == ["merge", "undo-merge"]
    event = AuditEvent.objects.get(action="undo-merge")
    assert (event.actor, event.via, event.from_state, event.to_state) == (
        "lead",
        "dashboard",
        "merged",
        "pending",
    )
    assert event.detail["decision_id"] == decision_id
    assert event.detail["memory_id"] is None
    assert event.detail["reviewed_by"] == "lead"
    assert event.detail["reviewed_at"] and event.detail["merged_at"]
    archived = AuditEvent.objects.get(object_type="decision", object_id=decision_id)
    assert (archived.action, archived.from_state, archived.to_state) == ("archive", "active", "archived")
    assert archived.detail == {"undo": "merge", "entry_id": entry.pk}
    assert changes == [project]


def test_the_archived_decision_leaves_the_context_and_the_boundaries_file(project):
    entry = merged(project, slug="queue-on-postgres")
    assert "Queue On Postgres" in context.compile(project, "Bob").text
    undo(project, entry)
    assert context.compile(project, "Bob").text is None
    assert "Queue On Postgres" not in render.render_boundaries(list(Decision.objects.filter(project=project)))


def test_an_undone_merge_can_be_merged_again_into_a_new_decision(project):
    entry = merged(project)
    first = entry.decision_id
    undo(project, entry)
    again = services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    assert again.status == EntryStatus.MERGED
    assert again.decision_id not in (None, first)
    assert trail(entry) == ["merge", "undo-merge", "merge"]


def test_undoing_a_memory_merge_archives_the_memory(project):
    entry = merged(project, slug="learned-retry", type="learning")
    memory_id = entry.memory_id
    undone = undo(project, entry)
    assert (undone.status, undone.memory_id) == (EntryStatus.PENDING, None)
    assert AgentMemory.objects.get(pk=memory_id).status == MemoryStatus.ARCHIVED
    assert AuditEvent.objects.get(action="undo-merge").detail["memory_id"] == memory_id
    archived = AuditEvent.objects.get(object_type="agentmemory", object_id=memory_id)
    assert (archived.action, archived.detail) == ("archive", {"undo": "merge", "entry_id": entry.pk})


def test_undoing_a_rejection_clears_the_reason_and_keeps_it_in_the_audit(project):
    entry = propose(project)
    services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="not now")
    undone = undo(project, entry)
    assert (undone.status, undone.reason, undone.reviewed_by) == (EntryStatus.PENDING, "", "")
    event = AuditEvent.objects.get(action="undo-reject")
    assert (event.from_state, event.to_state) == ("rejected", "pending")
    assert event.detail["reason"] == "not now"
    assert event.detail["reviewed_by"] == "lead"


def refused(project: Project, entry: InboxEntry, words: str) -> None:
    before = InboxEntry.objects.get(pk=entry.pk)
    events = AuditEvent.objects.count()
    with pytest.raises(services.Conflict, match=words):
        undo(project, entry)
    after = InboxEntry.objects.get(pk=entry.pk)
    assert (after.status, after.decision_id, after.memory_id, after.reason) == (
        before.status,
        before.decision_id,
        before.memory_id,
        before.reason,
    )
    assert AuditEvent.objects.count() == events


def test_refused_once_the_window_has_passed(project, settings):
    entry = merged(project)
    InboxEntry.objects.filter(pk=entry.pk).update(reviewed_at=timezone.now() - timedelta(seconds=601))
    refused(project, entry, "more than 10 minutes ago")
    assert Decision.objects.get(pk=entry.decision_id).status == DecisionStatus.ACTIVE


def test_the_window_is_a_setting(project, settings):
    settings.CANON_UNDO_SECONDS = 3600
    entry = propose(project)
    services.entry_reject(project=project, entry_id=entry.pk, by="lead")
    InboxEntry.objects.filter(pk=entry.pk).update(reviewed_at=timezone.now() - timedelta(minutes=30))
    assert undo(project, entry).status == EntryStatus.PENDING
    settings.CANON_UNDO_SECONDS = 0
    services.entry_reject(project=project, entry_id=entry.pk, by="lead")
    refused(project, entry, "more than 0 seconds ago")


def test_refused_for_a_pending_entry(project):
    refused(project, propose(project), "pending")


def test_refused_for_another_projects_entry(project, other_project):
    entry = merged(project)
    with pytest.raises(services.NotFound):
        services.entry_undo(project=other_project, entry_id=entry.pk, by="lead")
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.MERGED


def test_refused_once_the_decision_was_superseded(project):
    entry = merged(project)
    newer = services.decision_create(
        project=project, agent_name="Bob", type="architectural", title="Newer", content="x", by="lead"
    )
    services.decision_supersede(
        project=project, decision_id=entry.decision_id, superseded_by_id=newer.pk, by="l"
    )
    refused(project, entry, "superseded")


def test_refused_once_the_decision_was_edited(project):
    entry = merged(project)
    services.decision_edit(project=project, decision_id=entry.decision_id, by="lead", content="Changed.")
    refused(project, entry, "edited")


def test_refused_once_the_decision_was_archived(project):
    entry = merged(project)
    services.decision_archive(project=project, decision_id=entry.decision_id, by="lead")
    refused(project, entry, "already archived")


def test_refused_when_the_decision_superseded_another(project):
    old = services.decision_create(
        project=project, agent_name="Bob", type="architectural", title="Old", content="x", by="lead"
    )
    entry = propose(project)
    services.entry_resolve(
        project=project, entry_id=entry.pk, reject_ids=[], reason="", by="lead", supersede=old.pk
    )
    refused(project, entry, "replaced an earlier decision")
    assert Decision.objects.get(pk=old.pk).status == DecisionStatus.SUPERSEDED


def test_refused_once_the_memory_was_edited(project):
    entry = merged(project, slug="learned-retry", type="learning")
    services.memory_edit(project=project, memory_id=entry.memory_id, by="lead", content="Retry twice.")
    refused(project, entry, "edited or merged")


def test_refused_once_the_memory_was_archived(project):
    entry = merged(project, slug="learned-retry", type="learning")
    services.memory_archive(project=project, memory_id=entry.memory_id, by="lead")
    refused(project, entry, "archived")


def test_refused_once_the_memory_was_superseded_by_a_correction(project):
    entry = merged(project, slug="learned-retry", type="learning")
    services.memory_store(
        project=project,
        agent_name="Alice",
        type="learning",
        content="Retry three times.",
        corrects=entry.memory_id,
    )
    refused(project, entry, "superseded")


def test_refused_once_a_memory_was_merged_into_it(project):
    entry = merged(project, slug="learned-retry", type="learning")
    memory = AgentMemory.objects.get(pk=entry.memory_id)
    repeat = services.memory_record(
        project=project, agent_name="Alice", type="learning", content="Retry, twice."
    )
    AgentMemory.objects.filter(pk=repeat.pk).update(similar_to=memory, similarity=95)
    services.memory_merge(project=project, memory_id=repeat.pk, keep=memory.pk, by="lead")
    refused(project, entry, "edited or merged")


def test_refused_for_an_entry_merged_outside(project):
    entry = propose(project)
    agent = agent_get_or_create(project=project, name="Alice")
    adopted = Decision.objects.create(
        project=project,
        agent=agent,
        type="architectural",
        title="Use Postgres",
        content="x",
        source=Source.IMPORT,
    )
    services.entry_merged_outside(project=project, entry_id=entry.pk, decision=adopted, by="scribe")
    refused(project, entry, "team's own files")
    assert Decision.objects.get(pk=adopted.pk).status == DecisionStatus.ACTIVE


def test_only_the_last_decision_is_undone(project):
    entry = propose(project)
    services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="first")
    undo(project, entry)
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    undone = undo(project, entry)
    assert undone.status == EntryStatus.PENDING
    assert trail(entry) == ["reject", "undo-reject", "merge", "undo-merge"]
    refused(project, entry, "pending")


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_two_undos_at_once_record_one(transactional_db):
    project, _ = services.project_create_or_update(slug="race", name="Race")
    for round_ in range(3):
        entry = merged(project, slug=f"contested-{round_}")
        results = race([lambda entry=entry: undo(project, entry) for _ in range(4)])
        done = [r for r in results if isinstance(r, InboxEntry)]
        conflicts = [r for r in results if isinstance(r, services.Conflict)]
        assert len(done) == 1, results
        assert len(conflicts) == 3, results
        assert AuditEvent.objects.filter(object_id=entry.pk, action="undo-merge").count() == 1
        assert AuditEvent.objects.filter(object_id=entry.decision_id, object_type="decision").count() == 1
        assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING
