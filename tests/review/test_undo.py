"""The dashboard's Undo of one entry (`review:entry_undo`): who may, what it answers, and too late."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from ledger import services
from ledger.models import AuditEvent, Decision, DecisionStatus, EntryStatus, InboxEntry

pytestmark = pytest.mark.django_db


def undo_url(project, entry) -> str:
    return reverse("review:entry_undo", args=[project.slug, entry.pk])


@pytest.fixture
def merged(project, entry):
    return services.entry_merge(project=project, entry_id=entry.pk, by="lead", via="dashboard")


def said(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_a_coordinator_undoes_a_merge_and_is_sent_back(project, lead, merged):
    inbox = reverse("review:inbox", args=[project.slug])
    response = lead.post(undo_url(project, merged), {"next": f"{inbox}?status=merged"})
    assert response.status_code == 302
    assert response["Location"] == f"{inbox}?status=merged"
    # The list it returns to says so, once, in its toast.
    shown = lead.get(response["Location"]).content.decode()
    assert f"Undone: #{merged.pk} Use PostgreSQL is pending again." in shown
    assert not said(response)
    entry = InboxEntry.objects.get(pk=merged.pk)
    assert entry.status == EntryStatus.PENDING
    assert Decision.objects.get(pk=merged.decision_id).status == DecisionStatus.ARCHIVED
    event = AuditEvent.objects.get(action="undo-merge")
    assert (event.actor, event.via) == ("lead", "dashboard")


def test_htmx_gets_the_row_again(project, lead, entry):
    services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="no")
    response = lead.post(undo_url(project, entry), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="entry-{entry.pk}"' in html
    assert "<html" not in html
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING


def test_too_late_says_so_and_changes_nothing(project, lead, merged):
    InboxEntry.objects.filter(pk=merged.pk).update(reviewed_at=timezone.now() - timedelta(hours=1))
    response = lead.post(undo_url(project, merged))
    assert response.status_code == 302
    assert any("can no longer be undone" in message for message in said(response))
    assert InboxEntry.objects.get(pk=merged.pk).status == EntryStatus.MERGED
    assert Decision.objects.get(pk=merged.decision_id).status == DecisionStatus.ACTIVE
    assert not AuditEvent.objects.filter(action__startswith="undo").exists()


def test_too_late_over_htmx_puts_the_refusal_in_the_row(project, lead, merged):
    InboxEntry.objects.filter(pk=merged.pk).update(reviewed_at=timezone.now() - timedelta(hours=1))
    response = lead.post(undo_url(project, merged), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "can no longer be undone" in response.content.decode()
    assert InboxEntry.objects.get(pk=merged.pk).status == EntryStatus.MERGED


def test_a_viewer_may_not_undo(project, viewer, merged):
    assert viewer.post(undo_url(project, merged)).status_code == 403
    assert InboxEntry.objects.get(pk=merged.pk).status == EntryStatus.MERGED


def test_another_projects_member_gets_404(project, outsider, merged):
    assert outsider.post(undo_url(project, merged)).status_code == 404
    assert InboxEntry.objects.get(pk=merged.pk).status == EntryStatus.MERGED


def test_an_entry_of_another_project_is_404(project, other_project, lead, member):
    foreign = services.entry_submit(
        project=other_project, agent_name="Eve", slug="x", type="technical", content="x"
    ).entry
    services.entry_reject(project=other_project, entry_id=foreign.pk, by="lead")
    assert lead.post(undo_url(project, foreign)).status_code == 404
    assert InboxEntry.objects.get(pk=foreign.pk).status == EntryStatus.REJECTED


def test_anonymous_is_sent_to_log_in(client, project, merged):
    response = client.post(undo_url(project, merged))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]
    assert InboxEntry.objects.get(pk=merged.pk).status == EntryStatus.MERGED


def test_get_is_not_allowed(project, lead, merged):
    assert lead.get(undo_url(project, merged)).status_code == 405
