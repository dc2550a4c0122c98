"""What the dashboard's merge asks first (docs/dashboard.md "Inbox"): the choices for a boundary that
competes with others, in the row over htmx and on a page of its own without JavaScript."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger import services
from ledger.models import DecisionStatus, EntryStatus, InboxEntry

pytestmark = pytest.mark.django_db

REDIS = "Use Redis for the rate limiter"
MEMCACHED = "Use memcached for the rate limiter"


def propose(project, slug, title):
    return services.entry_submit(
        project=project, agent_name="Alice", slug=slug, type="architectural", title=title, content=title
    ).entry


def merge_url(entry: InboxEntry) -> str:
    return reverse("review:entry_merge", args=["alpha", entry.pk])


def test_a_plain_post_merging_a_competing_boundary_renders_the_choices(lead, project):
    redis, memcached = propose(project, "redis", REDIS), propose(project, "memcached", MEMCACHED)
    response = lead.post(merge_url(memcached), {"next": "/p/alpha/inbox/"})
    html = response.content.decode()
    assert response.status_code == 409
    assert f"#{redis.pk} {REDIS}" in html
    assert 'name="choice" value="reject"' in html and 'name="choice" value="keep_both"' in html
    memcached.refresh_from_db()
    assert memcached.status == EntryStatus.PENDING


def test_an_htmx_merge_of_a_competing_boundary_asks_in_the_row(lead, project):
    propose(project, "redis", REDIS)
    memcached = propose(project, "memcached", MEMCACHED)
    response = lead.post(merge_url(memcached), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith(f'<tr id="entry-{memcached.pk}"')
    assert "Not merged yet: this boundary answers the same question" in html


def test_choosing_reject_merges_and_rejects_the_competitor(lead, project):
    redis, memcached = propose(project, "redis", REDIS), propose(project, "memcached", MEMCACHED)
    lead.post(merge_url(memcached), {"choice": "reject", "reject": [redis.pk], "reason": "one cache"})
    redis.refresh_from_db()
    memcached.refresh_from_db()
    assert (memcached.status, redis.status, redis.reason) == (
        EntryStatus.MERGED,
        EntryStatus.REJECTED,
        "one cache",
    )


def test_choosing_supersede_keeps_the_pending_competitors_not_chosen(lead, project):
    decision = services.entry_merge(
        project=project, entry_id=propose(project, "redis", REDIS).pk, by="l"
    ).decision
    valkey = propose(project, "valkey", "Use Valkey for the rate limiter")
    memcached = propose(project, "memcached", MEMCACHED)
    lead.post(
        merge_url(memcached), {"choice": "supersede", "supersede": [decision.pk], "reject": [valkey.pk]}
    )
    decision.refresh_from_db()
    valkey.refresh_from_db()
    assert (decision.status, valkey.status) == (DecisionStatus.SUPERSEDED, EntryStatus.PENDING)


def test_a_bulk_merge_of_two_competing_boundaries_merges_neither(lead, project):
    redis, memcached = propose(project, "redis", REDIS), propose(project, "memcached", MEMCACHED)
    bulk = reverse("review:inbox_bulk", args=["alpha"])
    response = lead.post(bulk, {"action": "merge", "ids": [redis.pk, memcached.pk]}, follow=True)
    assert b"would be a second boundary" in response.content
    assert set(InboxEntry.objects.values_list("status", flat=True)) == {EntryStatus.PENDING}
