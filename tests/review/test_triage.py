"""Triage on the inbox list: each row's own reason, decided rows kept in place with an Undo, the toast,
the density each reviewer chooses, the agent select and the group headings (docs/dashboard.md, "Inbox")."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ledger import services
from ledger.models import AuditEvent, EntryStatus, InboxEntry, Membership
from review.models import Preference

INBOX = "/p/alpha/inbox/"
BULK = "/p/alpha/inbox/bulk"
DENSITY = "/p/alpha/inbox/density"
HTMX = {"HTTP_HX_REQUEST": "true"}


def submit(project, slug, type="technical", agent="Alice", **kw):
    kw.setdefault("content", f"{slug} content")
    kw.setdefault("title", slug.replace("-", " ").capitalize())
    return services.entry_submit(project=project, agent_name=agent, slug=slug, type=type, **kw).entry


def merge_url(entry):
    return reverse("review:entry_merge", args=["alpha", entry.pk])


def reject_url(entry):
    return reverse("review:entry_reject", args=["alpha", entry.pk])


def bulk_form(html: str) -> str:
    match = re.search(r'<form id="bulk".*?</form>', html, re.S)
    assert match, "no bulk form"
    return match.group()


def row(html: str, entry) -> str:
    match = re.search(rf'<tr id="entry-{entry.pk}".*?</tr>', html, re.S)
    assert match, f"no row for entry {entry.pk}"
    return match.group()


def toast(html: str) -> str:
    match = re.search(r'<div id="toast"[^>]*>(.*?)</div>\s*(?=<details|<div id="inbox-list"|$)', html, re.S)
    assert match, "no toast"
    return match.group(1)


# --- each row rejects with its own reason ---------------------------------------------------------


def test_each_row_has_its_own_reject_form_and_reason_outside_the_bulk_form(lead, project):
    a, b = submit(project, "use-redis"), submit(project, "use-kafka")
    html = lead.get(INBOX).content.decode()
    bar = bulk_form(html)
    # The bulk form holds its bar only: no row's button or reason field is part of it.
    assert reject_url(a) not in bar and merge_url(a) not in bar and 'name="reason_' not in bar
    for entry in (a, b):
        cells = row(html, entry)
        reject = re.search(rf'<form method="post" action="{reject_url(entry)}".*?</form>', cells, re.S)
        assert reject, "the row has no reject form of its own"
        assert f'id="reason-{entry.pk}" name="reason"' in reject.group()
        # Its checkbox belongs to the bulk form by its `form` attribute, from inside the row.
        assert f'name="ids" value="{entry.pk}" form="bulk"' in cells


def test_a_row_reject_takes_the_reason_it_sends_and_redirects_back_without_javascript(lead, project):
    entry = submit(project, "use-redis")
    response = lead.post(
        reject_url(entry), {"reason": "one engine", "next": "/p/alpha/inbox/?type=technical"}
    )
    assert response.status_code == 302 and response["Location"] == "/p/alpha/inbox/?type=technical"
    entry.refresh_from_db()
    assert (entry.status, entry.reason, entry.reviewed_by) == ("rejected", "one engine", "lead")


def test_a_row_reject_without_a_reason_is_fine(lead, project):
    entry = submit(project, "use-redis")
    lead.post(reject_url(entry), {})
    entry.refresh_from_db()
    assert (entry.status, entry.reason) == ("rejected", "")


# --- decided rows stay in place; the toast offers the undo ----------------------------------------


def test_htmx_merge_answers_the_decided_row_with_an_undo_and_the_toast(lead, project):
    entry = submit(project, "use-postgres", type="architectural", title="Use PostgreSQL")
    html = lead.post(merge_url(entry), {"query": "type=architectural"}, **HTMX).content.decode()
    decided = row(html, entry)
    assert "merged" in decided and "by lead" in decided
    assert merge_url(entry) not in decided and reject_url(entry) not in decided
    assert 'name="action" value="undo"' in decided and f'name="ids" value="{entry.pk}"' in decided
    # The toast is swapped in out of band (its content only, so the live region stays the same node).
    assert '<div id="toast" hx-swap-oob="innerHTML">' in html
    assert f"Merged #{entry.pk} Use PostgreSQL." in html
    assert "data-undo" in html
    # The row's forms come back to the list the action came from.
    assert 'name="next" value="/p/alpha/inbox/?type=architectural"' in decided


def test_htmx_reject_answers_the_row_and_the_toast(lead, project):
    entry = submit(project, "use-redis", title="Use Redis")
    html = lead.post(reject_url(entry), {"reason": "no"}, **HTMX).content.decode()
    assert "rejected" in row(html, entry)
    assert f"Rejected #{entry.pk} Use Redis." in html


def test_a_refused_row_action_shows_no_toast(lead, project):
    entry = submit(project, "use-redis")
    services.entry_reject(project=project, entry_id=entry.pk, by="someone")
    html = lead.post(merge_url(entry), **HTMX).content.decode()
    assert "already rejected" in html
    assert 'id="toast"' not in html


def test_without_javascript_the_list_shows_the_toast_once_with_an_undo_form(lead, project):
    entry = submit(project, "use-redis", title="Use Redis")
    lead.post(merge_url(entry), {"next": INBOX})
    html = lead.get(INBOX).content.decode()
    shown = toast(html)
    assert f"Merged #{entry.pk} Use Redis." in shown
    assert f'action="{BULK}"' in shown and 'name="action" value="undo"' in shown
    assert f'name="ids" value="{entry.pk}"' in shown
    assert "Merged #" not in toast(lead.get(INBOX).content.decode())


def test_the_toast_is_shown_on_the_inbox_of_the_project_it_belongs_to_only(lead, project, other_project):
    Membership.objects.create(
        user=User.objects.get(username="lead"), project=other_project, role="coordinator"
    )
    entry = submit(project, "use-redis")
    lead.post(merge_url(entry))
    assert "Merged #" not in toast(lead.get("/p/beta/inbox/").content.decode())


@pytest.mark.parametrize("seconds", [0])
def test_no_undo_is_offered_once_the_undo_window_has_closed(lead, project, settings, seconds):
    settings.CANON_UNDO_SECONDS = seconds
    entry = submit(project, "use-redis", title="Use Redis")
    lead.post(merge_url(entry))
    html = lead.get(INBOX, {"status": "all"}).content.decode()
    assert f"Merged #{entry.pk} Use Redis." in toast(html)
    assert 'value="undo"' not in html


def test_decided_rows_offer_undo_only_within_the_window(lead, project, settings):
    settings.CANON_UNDO_SECONDS = 600
    recent = submit(project, "recent")
    services.entry_merge(project=project, entry_id=recent.pk, by="lead")
    old = submit(project, "old")
    services.entry_reject(project=project, entry_id=old.pk, by="lead")
    InboxEntry.objects.filter(pk=old.pk).update(
        reviewed_at=InboxEntry.objects.get(pk=old.pk).reviewed_at.replace(year=2000)
    )
    html = lead.get(INBOX, {"status": "all"}).content.decode()
    assert 'value="undo"' in row(html, recent)
    assert 'value="undo"' not in row(html, old)


def test_bulk_over_htmx_swaps_the_decided_rows_in_place_out_of_band(lead, project):
    a, b, c = submit(project, "a"), submit(project, "b"), submit(project, "c")
    response = lead.post(BULK, {"action": "reject", "ids": [a.pk, b.pk], "reason": "stale"}, **HTMX)
    html = response.content.decode()
    assert response["HX-Reswap"] == "none"
    assert f'<tr id="entry-{a.pk}" class="entry-row status-rejected"' in html
    assert f'<tr id="entry-{b.pk}" class="entry-row status-rejected"' in html
    assert 'hx-swap-oob="true"' in row(html, a)
    assert f'id="entry-{c.pk}"' not in html
    assert f"Rejected 2 entries: #{a.pk}, #{b.pk}." in html
    assert "entries rejected" not in html  # said once, by the toast
    assert InboxEntry.objects.get(pk=a.pk).reason == "stale"


def test_bulk_with_a_plain_post_leaves_the_toast_for_the_list(lead, project):
    a, b = submit(project, "a"), submit(project, "b")
    lead.post(BULK, {"action": "merge", "ids": [a.pk, b.pk]})
    shown = toast(lead.get(INBOX).content.decode())
    assert f"Merged 2 entries: #{a.pk}, #{b.pk}." in shown
    assert shown.count('name="ids"') == 2


def test_undo_puts_merged_and_rejected_entries_back_through_the_service(lead, project):
    merged, rejected = submit(project, "merged-one"), submit(project, "rejected-one")
    lead.post(merge_url(merged))
    lead.post(reject_url(rejected), {"reason": "no"})
    response = lead.post(BULK, {"action": "undo", "ids": [merged.pk, rejected.pk]}, **HTMX)
    html = response.content.decode()
    assert InboxEntry.objects.get(pk=merged.pk).status == EntryStatus.PENDING
    assert InboxEntry.objects.get(pk=rejected.pk).status == EntryStatus.PENDING
    assert f'<tr id="entry-{merged.pk}" class="entry-row status-pending"' in html
    assert "Undone: 2 entries are pending again" in html
    assert "data-undo" not in html  # an undo is not itself undone from the toast
    assert (
        AuditEvent.objects.filter(object_type="inboxentry", object_id=merged.pk, via="dashboard").count() >= 2
    )


def test_viewers_cannot_undo(viewer, project):
    entry = submit(project, "a")
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    assert viewer.post(BULK, {"action": "undo", "ids": [entry.pk]}).status_code == 403
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.MERGED


# --- who sees the controls ------------------------------------------------------------------------


def test_viewer_sees_no_action_controls(viewer, project):
    entry = submit(project, "pending-one")
    decided = submit(project, "decided-one")
    services.entry_merge(project=project, entry_id=decided.pk, by="lead")
    html = viewer.get(INBOX, {"status": "all"}).content.decode()
    assert 'id="bulk"' not in html
    assert merge_url(entry) not in html and reject_url(entry) not in html
    assert 'value="undo"' not in html and 'type="checkbox"' not in html
    assert "Pending one" in html


def test_outsiders_and_anonymous_visitors_get_nothing(outsider, project):
    entry = submit(project, "a")
    assert outsider.get(INBOX).status_code == 404
    assert outsider.post(BULK, {"action": "undo", "ids": [entry.pk]}).status_code == 404
    assert outsider.post(DENSITY, {"density": "compact"}).status_code == 404
    anonymous = Client()
    for response in (anonymous.get(INBOX), anonymous.post(DENSITY, {"density": "compact"})):
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert not Preference.objects.exists()


# --- density, remembered per user -----------------------------------------------------------------


def test_density_is_remembered_for_the_user_who_chose_it(lead, project, member):
    submit(project, "a")
    assert 'class="table-scroll triage density-comfortable"' in lead.get(INBOX).content.decode()
    response = lead.post(DENSITY, {"density": "compact", "next": "/p/alpha/inbox/?type=technical"})
    assert response.status_code == 302 and response["Location"] == "/p/alpha/inbox/?type=technical"
    assert 'class="table-scroll triage density-compact"' in lead.get(INBOX).content.decode()
    assert Preference.objects.get(user__username="lead").density == "compact"
    # Another reviewer, and the same reviewer in another browser.
    other = member(project, "coordinator", "second")
    assert "density-comfortable" in other.get(INBOX).content.decode()
    again = Client()
    again.force_login(Preference.objects.get().user)
    assert "density-compact" in again.get(INBOX).content.decode()


def test_a_viewer_chooses_their_own_density(viewer, project):
    submit(project, "a")
    viewer.post(DENSITY, {"density": "compact"})
    assert "density-compact" in viewer.get(INBOX).content.decode()


def test_density_cannot_be_set_for_someone_else_or_to_nonsense(lead, project, member):
    other = member(project, "coordinator", "second")
    lead.post(DENSITY, {"density": "compact", "user": "second", "user_id": "999"})
    assert list(Preference.objects.values_list("user__username", "density")) == [("lead", "compact")]
    response = other.post(DENSITY, {"density": "tiny"}, follow=True)
    assert b"density: &#x27;tiny&#x27; is not one of" in response.content
    assert not Preference.objects.filter(user__username="second").exists()


def test_density_needs_a_post(lead):
    assert lead.get(DENSITY).status_code == 405


# --- agent select, groups, competing proposals ----------------------------------------------------


def test_the_agent_select_offers_this_projects_agents_only(lead, project, other_project):
    submit(project, "a", agent="Alice")
    submit(project, "b", agent="Bob")
    services.entry_submit(
        project=other_project, agent_name="Mallory", slug="m", type="technical", content="c"
    )
    html = lead.get(INBOX).content.decode()
    select = re.search(r'<select name="agent".*?</select>', html, re.S)
    assert select
    options = re.findall(r'<option value="([^"]*)"', select.group())
    assert options == ["", "Alice", "Bob"]


def test_the_agent_filter_matches_any_spelling_and_refuses_other_agents(lead, project, other_project):
    submit(project, "a", agent="Alice")
    submit(project, "b", agent="Bob")
    services.entry_submit(
        project=other_project, agent_name="Mallory", slug="m", type="technical", content="c"
    )
    listed = lead.get(INBOX, {"agent": "BOB"}).context["page"].object_list
    assert [e.slug for e in listed] == ["b"]
    refused = lead.get(INBOX, {"agent": "Mallory"})
    assert list(refused.context["page"].object_list) == []
    assert b"is not one of this project&#x27;s agents" in refused.content


def test_boundary_proposals_and_the_others_are_grouped_under_headings(lead, project):
    tech = submit(project, "tech")
    scope = submit(project, "scope-one", type="scope")
    html = lead.get(INBOX).content.decode()
    boundary, other = html.index("Boundary proposals"), html.index("Other proposals")
    assert boundary < html.index(f'id="entry-{scope.pk}"') < other < html.index(f'id="entry-{tech.pk}"')
    # A search lists by relevance, so the queue's groups are not shown.
    assert "Boundary proposals" not in lead.get(INBOX, {"q": "scope"}).content.decode()


def test_competing_proposals_say_so_in_their_rows(lead, project):
    first = submit(project, "queue-tech", title="Queue technology: RabbitMQ")
    # The same slug from another agent is kept apart as `queue-tech--bob`: the same topic.
    second = submit(project, "queue-tech", agent="Bob", title="Pick Kafka for events")
    assert second.slug != first.slug
    html = lead.get(INBOX).content.decode()
    assert f">#{second.pk}</a>" in row(html, first) and "competes with" in row(html, first)
    assert f">#{first.pk}</a>" in row(html, second)


def test_filters_fold_behind_a_disclosure(lead, project):
    html = lead.get(INBOX).content.decode()
    assert re.search(
        r'<details class="filter-box">\s*<summary>Filters</summary>\s*<form class="filters"', html
    )


def test_the_triage_list_makes_the_same_number_of_queries_at_any_size(lead, project):
    def queries() -> int:
        lead.get(INBOX)  # warm the session and user
        with CaptureQueriesContext(connection) as done:
            lead.get(INBOX, {"agent": "agent-1"})
        return len(done)

    lead.post(DENSITY, {"density": "compact"})
    for i in range(3):
        submit(
            project, f"e{i}", type=["scope", "technical"][i % 2], agent=f"agent-{i % 5}", title=f"Rule {i}"
        )
    few = queries()
    for i in range(3, 120):
        submit(
            project, f"e{i}", type=["scope", "technical"][i % 2], agent=f"agent-{i % 5}", title=f"Rule {i}"
        )
    assert queries() == few
