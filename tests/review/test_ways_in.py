"""The three ways in act through one action per operation (`ledger.actions`): the same checks of who is
asking, and an audit trail that names the way each write came in: `api`, `mcp` or `dashboard`."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from ledger import services
from ledger.actions.frame import Caller
from ledger.models import AuditEvent, EntryStatus, InboxEntry
from review.access import project_for_user
from tests.mcp_calls import call, caller_for

# The MCP calls run in the SDK's own thread, with its own connection: the rows must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


def _propose(project, slug: str) -> InboxEntry:
    return services.entry_submit(
        project=project, agent_name="Alice", slug=slug, type="process", content=f"Rule {slug}."
    ).entry


def _via(entry: InboxEntry) -> list[str]:
    return list(
        AuditEvent.objects.filter(object_type="inboxentry", object_id=entry.pk)
        .exclude(action="submit")
        .values_list("via", flat=True)
    )


def test_a_merge_is_audited_with_the_way_it_came_in(project, coordinator, lead):
    by_api, by_mcp, by_dashboard = (_propose(project, slug) for slug in ("one", "two", "three"))

    assert coordinator.post(f"/decisions/inbox/{by_api.pk}/merge").status_code == 201
    assert not call(caller_for(project, "coordinator"), "merge_inbox_entry", entry_id=by_mcp.pk).is_error
    page = lead.post(f"/p/{project.slug}/inbox/{by_dashboard.pk}/merge", {})
    assert page.status_code in (200, 302)

    for entry in (by_api, by_mcp, by_dashboard):
        entry.refresh_from_db()
        assert entry.status == EntryStatus.MERGED
    assert (_via(by_api), _via(by_mcp), _via(by_dashboard)) == (["api"], ["mcp"], ["dashboard"])
    assert by_dashboard.reviewed_by == "lead"


def test_a_rejection_by_mcp_is_audited_as_mcp(project):
    entry = _propose(project, "four")
    result = call(caller_for(project, "coordinator"), "reject_inbox_entry", entry_id=entry.pk, reason="no")
    assert not result.is_error
    assert _via(entry) == ["mcp"]


def test_a_coordinator_in_the_dashboard_is_a_coordinator_named_by_their_user(project):
    caller = Caller.coordinator_person(project, "lead")
    assert (caller.is_coordinator, caller.agent, caller.name, caller.via) == (True, None, "lead", "dashboard")
    assert caller.writes_left() is None  # a coordinator's writes are not counted
    caller.require_coordinator()
    caller.require_agent("Alice")  # a coordinator acts for any agent


def test_a_viewer_gets_no_caller_to_act_with(project, viewer, django_user_model):
    request = RequestFactory().get("/")
    request.user = django_user_model.objects.get(username="watcher")
    access = project_for_user(request, project.slug)
    with pytest.raises(PermissionDenied):
        access.caller  # noqa: B018


def test_an_agent_sees_its_writes_left_fall_and_stop(project, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 2
    caller = caller_for(project, "agent", "Alice")
    assert caller.writes_left() == 2
    caller.count_write()
    assert caller.writes_left() == 1
    caller.count_write()
    assert caller.writes_left() == 0
    settings.CANON_AGENT_WRITES_PER_MINUTE = 0
    assert caller.writes_left() is None
