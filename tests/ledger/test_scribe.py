"""The post-run Scribe and the coordinator backstop (docs/ledger.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import services
from ledger.models import EntryStatus, InboxEntry
from ledger.scribe import scribe_run


def submit(project, agent, slug, type, run_id="r1", **kw):
    return services.entry_submit(
        project=project, agent_name=agent, slug=slug, type=type, content=slug, run_id=run_id, **kw
    ).entry


def run(project, agent="Alice", run_id="r1", **kw):
    kw.setdefault("started_at", timezone.now() - timedelta(hours=1))
    return scribe_run(project=project, agent_name=agent, run_id=run_id, **kw)


def test_scribe_merges_the_runs_learnings_and_returns_decisions_for_review(project):
    learning = submit(project, "Alice", "l", "learning")
    pattern = submit(project, "Alice", "p", "pattern")
    update = submit(project, "Alice", "u", "update")
    arch = submit(project, "Alice", "a", "architectural")
    other_run = submit(project, "Alice", "o", "learning", run_id="r2")
    other_agent = submit(project, "Bob", "b", "learning")
    result = run(project, agent="ALICE")
    assert {e.pk for e in result.merged} == {learning.pk, pattern.pk, update.pk}
    assert [e.pk for e in result.needs_review] == [arch.pk]
    statuses = dict(InboxEntry.objects.values_list("pk", "status"))
    assert statuses[arch.pk] == statuses[other_run.pk] == statuses[other_agent.pk] == EntryStatus.PENDING


def test_entries_without_run_id_count_from_started_at(project):
    started = timezone.now()
    before = submit(project, "Alice", "before", "learning", run_id="")
    InboxEntry.objects.filter(pk=before.pk).update(created_at=started - timedelta(minutes=5))
    after = submit(project, "Alice", "after", "learning", run_id="")
    result = run(project, started_at=started)
    assert [e.pk for e in result.merged] == [after.pk]


def test_scribe_is_idempotent(project):
    submit(project, "Alice", "l", "learning")
    services.session_start(project=project, session_id="s1")
    first = run(project, outcome="succeeded")
    second = run(project, outcome="succeeded")
    assert len(first.merged) == 1 and second.merged == []
    summary = project.sessions.get().summary
    assert summary == "Run r1 by Alice succeeded."
    assert first.summary_appended and not second.summary_appended


def test_scribe_notes_the_run_in_the_open_session_only_if_one_is_open(project):
    assert not run(project).summary_appended


def test_coordinator_backstop_merges_approved_boundaries(project):
    services.project_create_or_update(slug=project.slug, coordinator="Lead")
    project.refresh_from_db()
    arch = submit(project, "lead", "a", "architectural")
    scope = submit(project, "lead", "s", "scope")
    process = submit(project, "lead", "p", "process")
    result = run(project, agent="LEAD", approved=True)
    assert {e.pk for e in result.merged} == {arch.pk, scope.pk}
    assert [e.pk for e in result.needs_review] == [process.pk]


def test_backstop_needs_approval_and_the_coordinator(project):
    coordinator_entry = submit(project, "coordinator", "a", "architectural")
    assert run(project, agent="coordinator").merged == []
    alice_entry = submit(project, "Alice", "b", "architectural")
    assert run(project, agent="Alice", approved=True).merged == []
    assert (
        InboxEntry.objects.get(pk=coordinator_entry.pk).status
        == InboxEntry.objects.get(pk=alice_entry.pk).status
        == "pending"
    )


@pytest.mark.parametrize(
    "kwargs", [{"run_id": ""}, {"started_at": timezone.now().replace(tzinfo=None)}, {"agent": "x" * 65}]
)
def test_bad_input_is_refused(project, kwargs):
    with pytest.raises(services.Invalid):
        run(project, **kwargs)
