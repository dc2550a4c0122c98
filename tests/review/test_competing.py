"""Competing proposals: which entries and decisions compete (`ledger.competition.competitors`), the
section on the entry's page, and settling them in one step (`review:entry_resolve`)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ledger import services
from ledger.competition import competitors
from ledger.models import AuditEvent, Decision, DecisionStatus, EntryStatus, InboxEntry, Project

pytestmark = pytest.mark.django_db


def propose(project: Project, slug: str, title: str = "", agent: str = "Alice", **kw: Any) -> InboxEntry:
    fields = {"type": "technical", "content": f"Content of {slug}.", **kw}
    return services.entry_submit(project=project, agent_name=agent, slug=slug, title=title, **fields).entry


def rivals(project: Project, entry: InboxEntry) -> list[Any]:
    return competitors(project, [InboxEntry.objects.get(pk=entry.pk)])[entry.pk]


def entry_url(project: Project, entry: InboxEntry) -> str:
    return reverse("review:entry", args=[project.slug, entry.pk])


def resolve_url(project: Project, entry: InboxEntry) -> str:
    return reverse("review:entry_resolve", args=[project.slug, entry.pk])


# --- detection ----------------------------------------------------------------------------------


def test_the_same_slug_proposed_by_others_competes(project):
    first = propose(project, "queue-tech", "Queue: Redis", agent="Alice")
    second = propose(project, "queue-tech", "Use RabbitMQ for jobs", agent="Bob")
    third = services.entry_import(
        project=project, agent_name="Carol", slug="queue-tech--bob--2", type="technical", content="Kafka."
    )
    assert (second.slug, third.slug) == ("queue-tech--bob", "queue-tech--bob--2")
    assert rivals(project, first) == [second, third]
    assert rivals(project, third) == [first, second]


def test_an_active_decision_merged_from_the_same_slug_competes(project):
    first = propose(project, "queue-tech", "Queue: Redis", type="architectural")
    merged = services.entry_merge(project=project, entry_id=first.pk, by="lead")
    second = propose(project, "queue-tech", "Use RabbitMQ for jobs", agent="Bob")
    assert rivals(project, second) == [merged.decision]
    services.decision_archive(project=project, decision_id=merged.decision_id, by="lead")
    assert rivals(project, second) == []


def test_closely_similar_titles_compete(project):
    entry = propose(project, "pg-for-queue", "Use PostgreSQL for the job queue")
    other = propose(project, "jobs-in-postgres", "Job queue on PostgreSQL")
    decision = services.decision_create(
        project=project,
        agent_name="lead",
        type="technical",
        title="PostgreSQL job queue",
        content="x",
        by="lead",
    )
    assert rivals(project, entry) == [decision, other]


def test_unrelated_titles_do_not_compete(project):
    entry = propose(project, "pg-for-queue", "Use PostgreSQL for the job queue")
    propose(project, "frontend-framework", "Pick a frontend framework")
    propose(project, "queue-metrics", "Export queue metrics to Grafana")
    propose(project, "caching", "Caching")
    services.decision_create(
        project=project, agent_name="lead", type="technical", title="Logs go to stdout", content="x", by="l"
    )
    assert rivals(project, entry) == []


def test_decided_entries_neither_compete_nor_have_competitors(project):
    entry = propose(project, "queue-tech", "Queue: Redis")
    rejected = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob")
    services.entry_reject(project=project, entry_id=rejected.pk, by="lead")
    assert rivals(project, entry) == []
    assert rivals(project, rejected) == []


def test_another_projects_entries_and_decisions_never_compete(project, other_project):
    entry = propose(project, "queue-tech", "Use PostgreSQL for the job queue")
    propose(other_project, "queue-tech", "Use PostgreSQL for the job queue", agent="Bob")
    propose(other_project, "queue-tech", "Queue tech", agent="Carol")
    services.decision_create(
        project=other_project,
        agent_name="lead",
        type="technical",
        title="Use PostgreSQL for the job queue",
        content="x",
        by="l",
    )
    assert rivals(project, entry) == []


def test_an_inbox_page_costs_the_same_queries_for_5_or_50_entries(project):
    def page(count: int, prefix: str) -> list[InboxEntry]:
        for n in range(count):
            propose(project, f"{prefix}-{n}", f"{prefix} topic number {n} about caching")
            propose(project, f"{prefix}-{n}", f"{prefix} rival {n}", agent="Bob")
        return list(InboxEntry.objects.filter(slug__startswith=prefix, agent__name="Alice"))

    def queries(entries: list[InboxEntry]) -> int:
        with CaptureQueriesContext(connection) as captured:
            found = competitors(project, entries)
        assert all(found[entry.pk] for entry in entries)
        return len(captured)

    small, large = queries(page(5, "small")), queries(page(50, "large"))
    assert small == large <= 5


# --- the section on the entry's page ------------------------------------------------------------


def test_the_entry_page_shows_the_competitors_side_by_side(project, lead):
    entry = propose(project, "queue-tech", "Queue: Redis", content="Redis lists.")
    other = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob", content="RabbitMQ queues.")
    html = lead.get(entry_url(project, entry)).content.decode()
    assert "Competing proposals" in html
    assert 'class="side-by-side"' in html
    assert "Redis lists." in html and "RabbitMQ queues." in html
    assert entry_url(project, other) in html
    assert resolve_url(project, entry) in html
    assert f'name="reject" value="{other.pk}" checked' in html


def test_no_section_without_competitors(project, lead):
    entry = propose(project, "alone", "Nothing like it")
    html = lead.get(entry_url(project, entry)).content.decode()
    assert "Competing proposals" not in html


def test_a_viewer_sees_the_competitors_but_no_form(project, viewer):
    entry = propose(project, "queue-tech", "Queue: Redis")
    propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob")
    html = viewer.get(entry_url(project, entry)).content.decode()
    assert "Competing proposals" in html
    assert resolve_url(project, entry) not in html


def test_the_supersede_option_is_offered_for_a_contradicted_decision(project, lead):
    old = propose(project, "queue-tech", "Queue: Redis", type="architectural")
    decision = services.entry_merge(project=project, entry_id=old.pk, by="lead").decision
    entry = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob", type="architectural")
    html = lead.get(entry_url(project, entry)).content.decode()
    assert f'name="supersede" value="{decision.pk}"' in html
    assert f"supersede decision #{decision.pk}" in html


def test_a_memory_entry_is_not_offered_to_supersede(project, lead):
    services.decision_create(
        project=project, agent_name="lead", type="technical", title="Retry jobs twice", content="x", by="l"
    )
    entry = propose(project, "retry", "Retry jobs twice", type="learning")
    html = lead.get(entry_url(project, entry)).content.decode()
    assert "Competing proposals" in html
    assert 'name="supersede"' not in html


# --- resolving ----------------------------------------------------------------------------------


def test_merge_this_one_and_reject_the_others_in_one_step(project, lead):
    entry = propose(project, "queue-tech", "Queue: Redis")
    bob = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob")
    carol = propose(project, "queue-tech", "Queue: Kafka", agent="Carol")
    response = lead.post(
        resolve_url(project, entry), {"reject": [bob.pk, carol.pk], "reason": "Redis is already running"}
    )
    assert response.status_code == 302
    assert response["Location"] == entry_url(project, entry)
    statuses = dict(InboxEntry.objects.values_list("pk", "status"))
    assert statuses == {entry.pk: "merged", bob.pk: "rejected", carol.pk: "rejected"}
    assert set(InboxEntry.objects.filter(status="rejected").values_list("reason", flat=True)) == {
        "Redis is already running"
    }
    actions = sorted(AuditEvent.objects.filter(object_type="inboxentry").values_list("action", flat=True))
    assert actions == ["merge", "reject", "reject"]


def test_a_reason_is_required_to_reject_the_others(project, lead):
    entry = propose(project, "queue-tech", "Queue: Redis")
    bob = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob")
    response = lead.post(resolve_url(project, entry), {"reject": [bob.pk], "reason": ""}, follow=True)
    assert "say why the others are rejected" in response.content.decode()
    assert set(InboxEntry.objects.values_list("status", flat=True)) == {"pending"}


def test_all_or_nothing_when_one_named_entry_is_no_longer_pending(project, lead):
    entry = propose(project, "queue-tech", "Queue: Redis")
    bob = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob")
    carol = propose(project, "queue-tech", "Queue: Kafka", agent="Carol")
    services.entry_merge(project=project, entry_id=carol.pk, by="someone else")
    response = lead.post(
        resolve_url(project, entry), {"reject": [bob.pk, carol.pk], "reason": "Redis"}, follow=True
    )
    assert "already merged" in response.content.decode()
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING
    assert InboxEntry.objects.get(pk=bob.pk).status == EntryStatus.PENDING
    assert Decision.objects.count() == 1


def test_all_or_nothing_when_a_named_entry_is_in_another_project(project, other_project, lead):
    entry = propose(project, "queue-tech", "Queue: Redis")
    foreign = propose(other_project, "queue-tech", "Queue: RabbitMQ", agent="Bob")
    response = lead.post(resolve_url(project, entry), {"reject": [foreign.pk], "reason": "no"}, follow=True)
    assert "has no inbox entry" in response.content.decode()
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING
    assert InboxEntry.objects.get(pk=foreign.pk).status == EntryStatus.PENDING


def test_merge_and_supersede_the_contradicted_decision(project, lead):
    old = propose(project, "queue-tech", "Queue: Redis", type="architectural")
    decision = services.entry_merge(project=project, entry_id=old.pk, by="lead").decision
    entry = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob", type="architectural")
    carol = propose(project, "queue-tech", "Queue: Kafka", agent="Carol", type="architectural")
    response = lead.post(
        resolve_url(project, entry),
        {"reject": [carol.pk], "reason": "RabbitMQ won", "supersede": decision.pk},
    )
    assert response.status_code == 302
    merged = InboxEntry.objects.get(pk=entry.pk)
    assert merged.status == EntryStatus.MERGED
    decision.refresh_from_db()
    assert (decision.status, decision.superseded_by_id) == (DecisionStatus.SUPERSEDED, merged.decision_id)
    assert InboxEntry.objects.get(pk=carol.pk).status == EntryStatus.REJECTED


def test_superseding_a_decision_that_is_not_active_changes_nothing(project, lead):
    old = propose(project, "queue-tech", "Queue: Redis", type="architectural")
    decision = services.entry_merge(project=project, entry_id=old.pk, by="lead").decision
    services.decision_archive(project=project, decision_id=decision.pk, by="lead")
    entry = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob", type="architectural")
    response = lead.post(resolve_url(project, entry), {"supersede": decision.pk}, follow=True)
    assert "not active" in response.content.decode()
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING
    assert Decision.objects.filter(status=DecisionStatus.ACTIVE).count() == 0


def test_a_memory_entry_cannot_supersede(project):
    decision = services.decision_create(
        project=project, agent_name="lead", type="technical", title="Retry", content="x", by="l"
    )
    entry = propose(project, "retry", "Retry", type="learning")
    with pytest.raises(services.Invalid):
        services.entry_resolve(
            project=project, entry_id=entry.pk, reject_ids=[], reason="", by="lead", supersede=decision.pk
        )
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING


def test_resolving_needs_a_coordinator_of_the_project(client, project, viewer, outsider):
    entry = propose(project, "queue-tech", "Queue: Redis")
    bob = propose(project, "queue-tech", "Queue: RabbitMQ", agent="Bob")
    data = {"reject": [bob.pk], "reason": "no"}
    assert viewer.post(resolve_url(project, entry), data).status_code == 403
    assert outsider.post(resolve_url(project, entry), data).status_code == 404
    anonymous = client.post(resolve_url(project, entry), data)
    assert anonymous.status_code == 302 and reverse("login") in anonymous["Location"]
    assert set(InboxEntry.objects.values_list("status", flat=True)) == {"pending"}


def test_resolving_an_entry_of_another_project_is_404(project, other_project, lead):
    foreign = propose(other_project, "queue-tech", "Queue: Redis")
    assert lead.post(resolve_url(project, foreign), {"reason": "x"}).status_code == 404
    assert InboxEntry.objects.get(pk=foreign.pk).status == EntryStatus.PENDING


@pytest.mark.postgresql_only
def test_postgresql_reads_a_topic_from_its_index_not_every_slug(project):
    """The same-topic query is answered from the (project, topic) index, so its cost does not grow with
    the project's entries (migration 0013): with sequential scans ruled out, the plan names the index."""
    from ledger.competition import _same_slug_sql

    first = propose(project, "topic-0")
    InboxEntry.objects.bulk_create(
        [
            InboxEntry(
                project=project, agent=first.agent, slug=f"topic-{i}--bob", type="technical", content="x"
            )
            for i in range(1, 400)
        ]
    )
    sql, params = _same_slug_sql(project.pk, ["topic-7", "topic-12"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ledger_inboxentry")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "ledger_entry_topic" in plan, plan
    assert "split_part" in next(line for line in plan.splitlines() if "Index Cond" in line), plan
