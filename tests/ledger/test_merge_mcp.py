"""The MCP `merge_inbox_entry` tool takes the REST merge's choices (docs/mcp.md, docs/ledger.md
"Inbox: review"). The tools run in worker threads, so these tests commit for real."""

from __future__ import annotations

import pytest

from ledger import services
from ledger.models import DecisionStatus
from tests.mcp_calls import answer, call, caller_for, refused

pytestmark = pytest.mark.django_db(transaction=True)


def boundary(project, slug, title):
    return services.entry_submit(
        project=project, agent_name="Alice", slug=slug, type="architectural", title=title, content=title
    ).entry


def test_merge_inbox_entry_names_the_competitor_then_supersedes_it_when_told(project):
    lead = caller_for(project, "coordinator")
    redis = boundary(project, "redis", "Use Redis for the rate limiter")
    decision = services.entry_merge(project=project, entry_id=redis.pk, by="lead").decision
    memcached = boundary(project, "memcached", "Use memcached for the rate limiter")
    refused(call(lead, "merge_inbox_entry", entry_id=memcached.pk), f"active decision #{decision.pk}")
    merged = answer(call(lead, "merge_inbox_entry", entry_id=memcached.pk, supersede=[decision.pk]))
    decision.refresh_from_db()
    assert (merged["superseded"], decision.status) == ([decision.pk], DecisionStatus.SUPERSEDED)
