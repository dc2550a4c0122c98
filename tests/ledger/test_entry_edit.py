"""Editing a proposal before merging (`services.entry_edit`, docs/ledger.md "Editing a proposal before
merging"): the previous text is kept as a revision, the edit is checked like a submission, only a pending
entry is edited, a merge takes the edited text, and the agent's retry no longer overwrites it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from django.db.models import ProtectedError

from ledger import services
from ledger.models import AuditEvent, Decision, EntryRevision, EntryStatus, InboxEntry, Project
from ledger.services.inbox.submission import _update_pending
from ledger.signals import ledger_changed

pytestmark = pytest.mark.django_db


def propose(project: Project, slug: str = "use-postgres", **fields: Any) -> InboxEntry:
    fields = {
        "type": "architectural",
        "title": "Use PostgreSQL",
        "content": "All state in PostgreSQL.",
        "rationale": "One engine.",
        **fields,
    }
    return services.entry_submit(project=project, agent_name="Alice", slug=slug, **fields).entry


def edit(project: Project, entry: InboxEntry, **text: str) -> InboxEntry:
    return services.entry_edit(project=project, entry_id=entry.pk, by="lead", via="dashboard", **text)


def test_an_edit_keeps_the_agents_text_as_a_revision_and_is_audited(project):
    entry = propose(project)
    edited = edit(project, entry, title="Use PostgreSQL 16", content="All state in PostgreSQL 16.")
    assert (edited.title, edited.content, edited.rationale) == (
        "Use PostgreSQL 16",
        "All state in PostgreSQL 16.",
        "One engine.",
    )
    revision = EntryRevision.objects.get(entry=entry)
    assert (revision.title, revision.content, revision.rationale, revision.changed_by) == (
        "Use PostgreSQL",
        "All state in PostgreSQL.",
        "One engine.",
        "lead",
    )
    event = AuditEvent.objects.get(object_type="inboxentry", object_id=entry.pk, action="edit")
    assert (event.actor, event.via, event.detail) == ("lead", "dashboard", {"fields": ["content", "title"]})
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING


def test_each_edit_keeps_the_text_it_replaced(project):
    entry = propose(project)
    edit(project, entry, content="Second.")
    edit(project, entry, content="Third.")
    assert [r.content for r in entry.revisions.all()] == ["All state in PostgreSQL.", "Second."]
    assert InboxEntry.objects.get(pk=entry.pk).content == "Third."


def test_an_edit_that_changes_nothing_writes_nothing(project):
    entry = propose(project)
    edit(project, entry, title="  Use PostgreSQL  ", content="All state in PostgreSQL.")
    assert not EntryRevision.objects.exists()
    assert not AuditEvent.objects.filter(action="edit").exists()


def test_an_edit_says_the_workspace_changed(project):
    entry = propose(project)
    heard: list[Project] = []

    def listener(sender: Any, project: Project, **kwargs: Any) -> None:
        heard.append(project)

    ledger_changed.connect(listener)
    try:
        edit(project, entry, rationale="Fewer moving parts.")
    finally:
        ledger_changed.disconnect(listener)
    assert heard == [project]


def test_merging_takes_the_edited_text(project):
    entry = propose(project)
    edit(project, entry, title="Use PostgreSQL 16", content="Edited.", rationale="Edited why.")
    merged = services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    decision = Decision.objects.get(pk=merged.decision_id)
    assert (decision.title, decision.content, decision.rationale) == (
        "Use PostgreSQL 16",
        "Edited.",
        "Edited why.",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ({"content": "   "}, "content: must not be empty"),
        ({"title": "x" * 301}, "title: must be at most 300 characters"),
        ({"rationale": "bad \x00 byte"}, "rationale:"),
        ({"content": 7}, "content: must be a string"),
    ],
)
def test_an_edit_is_checked_like_a_submission(project, text, message):
    entry = propose(project)
    with pytest.raises(services.Invalid) as refused:
        edit(project, entry, **text)
    assert message in refused.value.message
    assert not EntryRevision.objects.exists()


def test_an_entry_may_lose_its_title_as_a_submission_may_have_none(project):
    entry = propose(project)
    assert edit(project, entry, title="").title == ""


@pytest.mark.parametrize("decide", ["merge", "reject"])
def test_only_a_pending_entry_is_edited(project, decide):
    entry = propose(project)
    getattr(services, f"entry_{decide}")(project=project, entry_id=entry.pk, by="lead")
    with pytest.raises(services.Conflict, match="only a pending entry is edited"):
        edit(project, entry, content="Too late.")
    assert InboxEntry.objects.get(pk=entry.pk).content == "All state in PostgreSQL."
    assert not EntryRevision.objects.exists()


def test_an_entry_of_another_project_is_not_found(project, other_project):
    entry = propose(other_project)
    with pytest.raises(services.NotFound):
        edit(project, entry, content="Not yours.")
    with pytest.raises(services.NotFound):
        services.entry_edit(project=project, entry_id=True, by="lead", content="x")  # type: ignore[arg-type]


def test_the_agents_retry_is_refused_once_a_coordinator_edited_the_entry(project):
    entry = propose(project)
    edit(project, entry, content="The coordinator's version.")
    with pytest.raises(services.Conflict, match="a coordinator edited use-postgres"):
        propose(project, content="The agent's second try.")
    assert InboxEntry.objects.get(pk=entry.pk).content == "The coordinator's version."
    assert InboxEntry.objects.count() == 1


def test_without_an_edit_the_retry_still_updates_in_place(project):
    entry = propose(project)
    propose(project, content="The agent's second try.")
    assert InboxEntry.objects.get(pk=entry.pk).content == "The agent's second try."


def test_a_retry_that_read_the_entry_before_an_edit_does_not_overwrite_it(project):
    """The retry read the entry, then a coordinator saved an edit, then the retry writes: refused."""
    entry = propose(project)
    read_by_the_retry = InboxEntry.objects.select_related("agent").get(pk=entry.pk)
    edit(project, entry, content="The coordinator's version.")
    with transaction.atomic(), pytest.raises(services.Conflict, match="a coordinator edited"):
        _update_pending(read_by_the_retry, {"content": "The agent's second try."})
    assert InboxEntry.objects.get(pk=entry.pk).content == "The coordinator's version."


def test_a_retry_that_read_the_entry_before_another_retry_takes_its_turn(project):
    """Two retries of one entry: the later write waits for the row and writes after the earlier one,
    rather than placing itself again (eight such retries at once used to run out of attempts: 409)."""
    entry = propose(project)
    read_first = InboxEntry.objects.select_related("agent").get(pk=entry.pk)
    propose(project, content="The other retry.")
    with transaction.atomic():
        written = _update_pending(read_first, {"content": "This retry."})
    assert written.pk == entry.pk and written.content == "This retry."
    assert InboxEntry.objects.get(pk=entry.pk).content == "This retry."
    assert InboxEntry.objects.count() == 1


def test_a_retry_that_read_the_entry_before_a_merge_is_refused(project):
    entry = propose(project)
    read_by_the_retry = InboxEntry.objects.select_related("agent").get(pk=entry.pk)
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    with (
        transaction.atomic(),
        pytest.raises(services.Conflict, match=r"already recorded as use-postgres \(merged\)"),
    ):
        _update_pending(read_by_the_retry, {"content": "The agent's second try."})
    assert InboxEntry.objects.get(pk=entry.pk).content != "The agent's second try."


def test_the_revision_is_protected_with_its_entry(project):
    entry = propose(project)
    edit(project, entry, content="Edited.")
    with pytest.raises(ProtectedError):
        InboxEntry.objects.filter(pk=entry.pk).delete()
