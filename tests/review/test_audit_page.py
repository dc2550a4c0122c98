"""The audit page (docs/dashboard.md, "Audit"): every reviewer action of a project, newest first, each
naming its object by title, filtered, paginated, in a fixed number of queries."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from ledger import services
from ledger.models import AuditEvent

URL = "/p/alpha/audit/"


def merged_entry(project, slug, title, *, by="lead", via="api"):
    entry = services.entry_submit(
        project=project, agent_name="Alice", slug=slug, type="learning", title=title, content=f"{slug} text"
    ).entry
    services.entry_merge(project=project, entry_id=entry.pk, by=by, via=via)
    return entry


def rejected_entry(project, slug, title, *, by="lead", via="dashboard"):
    entry = services.entry_submit(
        project=project, agent_name="Bob", slug=slug, type="technical", title=title, content=f"{slug} text"
    ).entry
    services.entry_reject(project=project, entry_id=entry.pk, by=by, reason="Not now", via=via)
    return entry


def new_decision(project, title, *, by="lead"):
    return services.decision_create(
        project=project, agent_name="lead", type="technical", title=title, content=title, by=by, via="command"
    )


def listed(response) -> list[AuditEvent]:
    return [item.event for item in response.context["events"]]


def test_a_viewer_reads_the_audit_page(project, viewer, entry):
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    response = viewer.get(URL)
    assert response.status_code == 200
    assert "“Use PostgreSQL”" in response.content.decode()


def test_a_member_of_another_project_gets_404(project, outsider):
    assert outsider.get(URL).status_code == 404


def test_an_anonymous_visitor_is_sent_to_the_login(project, client):
    response = client.get(URL)
    assert response.status_code == 302 and response["Location"] == f"/login/?next={URL}"


def test_every_event_of_the_project_newest_first_and_none_of_another(project, other_project, lead):
    first = merged_entry(project, "first", "First")
    second = rejected_entry(project, "second", "Second")
    merged_entry(other_project, "elsewhere", "Elsewhere")

    response = lead.get(URL)

    events = listed(response)
    assert [(e.object_id, e.action) for e in events] == [(second.pk, "reject"), (first.pk, "merge")]
    assert "Elsewhere" not in response.content.decode()


def test_events_name_their_objects_by_title_with_a_link(project, lead):
    entry = merged_entry(project, "use-postgres", "Use PostgreSQL")
    decision = new_decision(project, "HTTP clients time out")
    memory = services.memory_record(
        project=project, agent_name="Alice", type="learning", content="Staging resets at two.", tags=[]
    )
    services.memory_archive(project=project, memory_id=memory.pk, by="lead")

    html = lead.get(URL).content.decode()

    assert f'<strong>lead</strong> merged <a href="/p/alpha/inbox/{entry.pk}/">“Use PostgreSQL”</a>' in html
    assert f'created decision <a href="/p/alpha/decisions/{decision.pk}/">“HTTP clients time out”</a>' in html
    assert "archived memory “Staging resets at two.”" in html
    assert "inbox entry #" not in html and "decision #" not in html


def test_an_object_that_cannot_be_found_is_named_by_type_and_id(project, lead):
    AuditEvent.objects.create(
        project=project, actor="lead", via="admin", action="edit", object_type="decision", object_id=999
    )
    AuditEvent.objects.create(
        project=project, actor="lead", via="admin", action="poke", object_type="widget", object_id=7
    )

    html = lead.get(URL).content.decode()

    assert "edited decision #999" in html
    assert "poke widget #7" in html


def test_titles_are_escaped(project, lead):
    merged_entry(project, "xss", '<script>alert("x")</script>')
    html = lead.get(URL).content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html


def test_a_rejection_shows_its_reason(project, lead):
    rejected_entry(project, "nope", "Nope")
    assert "“Not now”" in lead.get(URL).content.decode()


def _queries(client, url=URL) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_titles_are_read_in_one_query_per_kind_of_object_not_per_row(project, lead):
    for i in range(3):
        merged_entry(project, f"entry-{i}", f"Entry {i}")
        new_decision(project, f"Decision {i}")
    assert AuditEvent.objects.filter(project=project).count() == 6  # merging a learning makes a memory
    few = _queries(lead)
    for i in range(3, 28):
        merged_entry(project, f"entry-{i}", f"Entry {i}")
        new_decision(project, f"Decision {i}")
    assert AuditEvent.objects.filter(project=project).count() == 56
    assert _queries(lead) == few
    assert _queries(lead, URL + "?page=2") == few


def test_filters_by_actor_in_any_case_action_object_type_and_via(project, lead):
    by_ann = merged_entry(project, "by-ann", "By Ann", by="Ann", via="mcp")
    by_bob = rejected_entry(project, "by-bob", "By Bob", by="bob", via="dashboard")
    decision = new_decision(project, "A rule", by="Ann")

    assert {e.object_id for e in listed(lead.get(URL, {"actor": "ANN"}))} == {by_ann.pk, decision.pk}
    assert [e.object_id for e in listed(lead.get(URL, {"action": "reject"}))] == [by_bob.pk]
    assert [e.object_id for e in listed(lead.get(URL, {"object_type": "decision"}))] == [decision.pk]
    assert [e.object_id for e in listed(lead.get(URL, {"via": "mcp"}))] == [by_ann.pk]
    assert [e.object_id for e in listed(lead.get(URL, {"actor": "ann", "object_type": "inboxentry"}))] == [
        by_ann.pk
    ]
    html = lead.get(URL, {"action": "archive"}).content.decode()
    assert "No action matches these filters." in html


def test_a_choice_that_is_not_offered_lists_nothing_and_says_why(project, lead):
    merged_entry(project, "one", "One")
    response = lead.get(URL, {"via": "carrier-pigeon"})
    assert listed(response) == []
    assert "Nothing is listed until the filter is fixed." in response.content.decode()


def test_the_filter_form_offers_the_actions_in_plain_words(project, lead):
    html = lead.get(URL).content.decode()
    assert '<option value="merge">merged</option>' in html
    assert '<option value="inboxentry">proposal</option>' in html


def test_fifty_events_a_page_and_the_filters_kept_across_pages(project, lead):
    AuditEvent.objects.bulk_create(
        AuditEvent(
            project=project, actor="lead", via="api", action="edit", object_type="decision", object_id=i
        )
        for i in range(60)
    )
    first = lead.get(URL, {"via": "api"})
    assert len(listed(first)) == 50
    assert "page=2" in first.content.decode() and "via=api" in first.content.decode()
    assert len(listed(lead.get(URL, {"via": "api", "page": 2}))) == 10


def test_the_navigation_links_to_the_audit_page(project, lead):
    html = lead.get(URL).content.decode()
    assert f'<a href="{URL}" aria-current="page">Audit</a>' in html
    assert f'href="{URL}"' in lead.get("/p/alpha/").content.decode()


def test_an_objects_own_trail_says_what_was_done_in_the_past_tense(project, lead, entry):
    services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="Later")
    html = lead.get(f"/p/alpha/inbox/{entry.pk}/").content.decode()
    assert "<strong>lead</strong> rejected (pending → rejected)" in html
