"""Entry and decision pages (docs/dashboard.md "Entry and decision pages"): previous and next through
the filtered list, editing a proposal before merging, earlier versions as an escaped diff, and who
proposed, merged or rejected what."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from ledger import services
from ledger.models import Decision, EntryRevision, EntryStatus, InboxEntry, Project
from review.diff import diff_markup

INBOX = "/p/alpha/inbox/"
DECISIONS = "/p/alpha/decisions/"


def entry_url(entry: InboxEntry | int, query: str = "") -> str:
    pk = entry if isinstance(entry, int) else entry.pk
    url = reverse("review:entry", args=["alpha", pk])
    return f"{url}?{query}" if query else url


def edit_url(entry: InboxEntry, query: str = "") -> str:
    url = reverse("review:entry_edit", args=["alpha", entry.pk])
    return f"{url}?{query}" if query else url


def propose(
    project: Project, slug: str, type: str = "technical", agent: str = "Alice", **kw: Any
) -> InboxEntry:
    kw.setdefault("title", slug.replace("-", " ").capitalize())
    kw.setdefault("content", f"{slug} content about the cache.")
    return services.entry_submit(project=project, agent_name=agent, slug=slug, type=type, **kw).entry


@pytest.fixture
def queue(project: Project) -> list[InboxEntry]:
    """Entries of every kind, created out of order (some older than others), one merged, one rejected."""
    kinds = [
        ("a-process", "process", "Alice"),
        ("b-scope", "scope", "Bob"),
        ("c-technical", "technical", "Alice"),
        ("d-architectural", "architectural", "Bob"),
        ("e-learning", "learning", "Alice"),
        ("f-scope", "scope", "Alice"),
        ("g-technical", "technical", "Bob"),
        ("h-merged", "technical", "Alice"),
        ("i-rejected", "process", "Bob"),
    ]
    entries = [propose(project, slug, type, agent) for slug, type, agent in kinds]
    now = timezone.now()
    for age, entry in zip([5, 9, 2, 7, 7, 1, 3, 8, 4], entries, strict=True):
        InboxEntry.objects.filter(pk=entry.pk).update(created_at=now - timedelta(hours=age))
    services.entry_merge(project=project, entry_id=entries[7].pk, by="lead")
    services.entry_reject(project=project, entry_id=entries[8].pk, by="lead", reason="no")
    return entries


def inbox_order(client: Any, query: str) -> list[int]:
    page = client.get(f"{INBOX}?{query}").context["page"]
    return [entry.pk for entry in page.object_list]


QUERIES = [
    "",
    "status=pending",
    "status=all",
    "status=merged",
    "type=scope",
    "type=technical&agent=alice",
    "agent=Bob&status=all",
    "q=cache",
    "q=cache&status=all",
    "age=day&status=all",
]


@pytest.mark.parametrize("query", QUERIES)
def test_previous_and_next_follow_the_inbox_order_under_its_filters(lead, queue, query):
    order = inbox_order(lead, query)
    assert order, "every filter here matches something"
    for position, pk in enumerate(order):
        place = lead.get(entry_url(pk, query)).context["place"]
        assert place.position == position + 1
        assert place.total == len(order)
        assert place.previous == (order[position - 1] if position else None)
        assert place.next == (order[position + 1] if position + 1 < len(order) else None)


def test_the_links_carry_the_query_string_and_say_where_the_entry_stands(lead, queue):
    query, escaped = "type=scope&status=pending", "type=scope&amp;status=pending"
    first, second = inbox_order(lead, query)
    html = lead.get(entry_url(first, query)).content.decode()
    assert "1 of 2" in html
    assert f'href="{entry_url(second, escaped)}" rel="next">Next →</a>' in html
    assert 'rel="prev"' not in html  # the first has no previous
    assert f'href="{INBOX}?{escaped}">← Inbox</a>' in html
    html = lead.get(entry_url(second, query)).content.decode()
    assert "2 of 2" in html and 'rel="next"' not in html
    assert f'href="{entry_url(first, escaped)}" rel="prev">← Previous</a>' in html


def test_without_a_query_string_the_entry_is_placed_in_the_pending_queue(lead, queue):
    order = inbox_order(lead, "")
    assert lead.get(entry_url(order[2])).context["place"].position == 3
    assert lead.get(entry_url(order[2])).context["place"].total == 7


def test_an_entry_outside_the_list_offers_the_lists_first_entry(lead, queue):
    merged = queue[7]
    response = lead.get(entry_url(merged))
    place = response.context["place"]
    assert (place.position, place.previous, place.next) == (None, None, None)
    assert place.first == inbox_order(lead, "")[0] and place.total == 7
    assert "Not in this list" in response.content.decode()
    assert "First in the list →" in response.content.decode()


def test_an_invalid_filter_places_nothing(lead, queue):
    place = lead.get(entry_url(queue[0], "status=nonsense")).context["place"]
    assert (place.position, place.total, place.first) == (None, 0, None)


def test_merging_from_the_page_goes_on_to_the_next_entry(lead, queue):
    query = "type=scope"
    first, second = inbox_order(lead, query)
    html = lead.get(entry_url(first, query)).content.decode()
    target = entry_url(second, "type=scope")
    assert html.count(f'name="next" value="{target}"') == 2  # merge and reject
    html = lead.get(entry_url(second, query)).content.decode()
    assert f'name="next" value="{INBOX}?type=scope"' in html  # the last goes back to the list


def page_queries(client: Any, project: Project, size: int, query: str) -> list[str]:
    """The SQL of one entry page in a queue of `size` entries, half of them edited."""
    entries = [propose(project, f"entry-{size}-{i}", ["technical", "scope"][i % 2]) for i in range(size)]
    for entry in entries[: size // 2]:
        services.entry_edit(project=project, entry_id=entry.pk, by="lead", content="Edited about the cache.")
    url = entry_url(entries[2 * (size // 4)], query)  # a technical one
    client.get(url)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200 and response.context["place"].position is not None
    return [query["sql"] for query in captured.captured_queries]


@pytest.mark.parametrize("query", ["", "type=technical&agent=alice", "q=cache", "status=all"])
def test_the_entry_page_makes_a_fixed_number_of_queries(lead, project, query):
    small = page_queries(lead, project, 3, query)
    InboxEntry.objects.update(status=EntryStatus.REJECTED, reviewed_by="lead")
    large = page_queries(lead, project, 40, query)
    assert len(small) == len(large)
    # Its place in the list is one statement (a text search reads the entry's relevance first).
    placing = [sql for sql in large if 'AS "n"' in sql or '"key_0"' in sql]
    assert len(placing) == (2 if "q=" in query else 1)
    # The revisions are one query, however many there are.
    assert len([sql for sql in large if 'FROM "ledger_entryrevision"' in sql]) == 1


# --- editing before merging -----------------------------------------------------------------------


def test_a_coordinator_edits_a_pending_entry_and_merging_takes_the_edit(lead, project, entry):
    response = lead.post(
        edit_url(entry, "type=architectural"),
        {"title": "Use PostgreSQL 16", "content": "All state in PostgreSQL 16.", "rationale": "One engine."},
    )
    assert response.status_code == 302
    assert response["Location"] == entry_url(entry, "type=architectural")
    entry.refresh_from_db()
    assert (entry.title, entry.content, entry.status) == (
        "Use PostgreSQL 16",
        "All state in PostgreSQL 16.",
        "pending",
    )
    assert EntryRevision.objects.get(entry=entry).content == "All state in PostgreSQL."
    page = lead.get(response["Location"]).content.decode()
    assert "kept as a revision; merging takes yours" in page
    assert "Earlier versions" in page
    assert "PostgreSQL<ins> 16</ins>" in page
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    entry.refresh_from_db()
    assert Decision.objects.get(pk=entry.decision_id).title == "Use PostgreSQL 16"


def test_a_refused_edit_answers_400_with_the_form_as_typed(lead, entry):
    response = lead.post(edit_url(entry), {"title": "Kept as typed", "content": "  ", "rationale": ""})
    assert response.status_code == 400
    html = response.content.decode()
    assert "content: must not be empty" in html
    assert 'value="Kept as typed"' in html
    assert not EntryRevision.objects.exists()


def test_a_decided_entry_has_no_edit_form_and_refuses_an_edit(lead, project, entry):
    services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="Not now")
    html = lead.get(entry_url(entry)).content.decode()
    assert "Edit before merging" not in html
    response = lead.post(edit_url(entry), {"title": "", "content": "Late.", "rationale": ""})
    assert response.status_code == 400
    assert "only a pending entry is edited" in response.content.decode()
    entry.refresh_from_db()
    assert entry.content == "All state in PostgreSQL."


def test_an_unchanged_edit_says_so(lead, entry):
    data = {"title": entry.title, "content": entry.content, "rationale": entry.rationale}
    response = lead.post(edit_url(entry), data, follow=True)
    assert "Nothing to save" in response.content.decode()
    assert not EntryRevision.objects.exists()


def test_a_viewer_sees_no_edit_form_and_may_not_edit(viewer, entry):
    html = viewer.get(entry_url(entry)).content.decode()
    assert "Edit before merging" not in html and 'action="/p/alpha/inbox/' not in html
    response = viewer.post(edit_url(entry), {"title": "", "content": "Mine.", "rationale": ""})
    assert response.status_code == 403
    entry.refresh_from_db()
    assert entry.content == "All state in PostgreSQL."


def test_another_projects_member_gets_404(outsider, entry, decision):
    assert outsider.get(entry_url(entry)).status_code == 404
    assert outsider.post(edit_url(entry), {"title": "", "content": "x", "rationale": ""}).status_code == 404
    assert outsider.get(reverse("review:decision", args=["alpha", decision.pk])).status_code == 404
    entry.refresh_from_db()
    assert entry.content == "All state in PostgreSQL."


def test_an_entry_of_another_project_is_404_from_this_one(lead, other_project):
    theirs = propose(other_project, "theirs")
    assert lead.get(entry_url(theirs)).status_code == 404
    assert lead.post(edit_url(theirs), {"title": "", "content": "x", "rationale": ""}).status_code == 404


def test_anonymous_visitors_are_sent_to_sign_in(client, entry, decision):
    for response in (
        client.get(entry_url(entry)),
        client.post(edit_url(entry), {"title": "", "content": "x", "rationale": ""}),
        client.get(reverse("review:decision", args=["alpha", decision.pk])),
    ):
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    entry.refresh_from_db()
    assert entry.content == "All state in PostgreSQL."


# --- diffs and escaping ---------------------------------------------------------------------------


def test_the_diff_marks_words_within_a_rewritten_line_and_whole_lines_added():
    markup = diff_markup("Use the cache.\nKeep it.", "Use the big cache.\nKeep it.\nAlso this.")
    assert markup == "Use the<ins> big</ins> cache.\nKeep it.<ins>\nAlso this.</ins>"


def test_a_text_rewritten_entirely_is_shown_removed_and_added_whole():
    assert (
        diff_markup("All state in PostgreSQL.", "Edited.")
        == "<del>All state in PostgreSQL.</del><ins>Edited.</ins>"
    )


def test_the_diff_escapes_every_piece():
    markup = diff_markup("a <b>bold</b> & move", 'a <script>alert("x")</script> & move')
    assert "<script" not in markup and "<b>" not in markup
    assert "&lt;<del>b</del><ins>script</ins>&gt;" in markup and "&amp; move" in markup
    assert "alert(&quot;x&quot;)" in markup


def test_agent_text_in_revisions_is_escaped_on_the_page(lead, project):
    entry = propose(
        project, "xss", title="<script>window.x=1</script>", content="<img src=x onerror=alert(1)>"
    )
    lead.post(edit_url(entry), {"title": "Safe", "content": "<b>still text</b>", "rationale": ""})
    html = lead.get(entry_url(entry)).content.decode()
    assert "<script>window.x=1" not in html and "<img src=x" not in html and "<b>still text</b>" not in html
    assert "&lt;script&gt;window.x=1&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


# --- who proposed, merged, rejected ----------------------------------------------------------------


def test_the_entry_page_says_who_merged_or_rejected_it(lead, project, entry):
    other = propose(project, "other")
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    services.entry_reject(project=project, entry_id=other.pk, by="carol", reason="Duplicate")
    html = lead.get(entry_url(entry)).content.decode()
    assert "— merged by <strong>lead</strong>" in html
    html = lead.get(entry_url(other)).content.decode()
    assert "— rejected by <strong>carol</strong>" in html and "Duplicate" in html


def test_a_merged_decision_says_who_proposed_it_where_and_who_merged_it(lead, project, entry):
    merged = services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    html = lead.get(reverse("review:decision", args=["alpha", merged.decision_id])).content.decode()
    assert (
        f'proposed by <strong>Alice</strong> in <a href="{entry_url(entry)}">Use PostgreSQL</a>, '
        "merged by <strong>lead</strong>"
    ) in html
    assert "decided by" not in html


def test_a_decision_recorded_directly_says_who_decided_it(lead, decision):
    html = lead.get(reverse("review:decision", args=["alpha", decision.pk])).content.decode()
    assert "decided by <strong>lead</strong>" in html and "proposed by" not in html


def test_decision_revisions_show_a_diff(lead, project, decision):
    services.decision_edit(project=project, decision_id=decision.pk, by="carol", content="PG 16.")
    html = lead.get(reverse("review:decision", args=["alpha", decision.pk])).content.decode()
    assert "replaced by carol" in html and "PG<ins> 16</ins>." in html


# --- the decision page's previous and next ---------------------------------------------------------


@pytest.fixture
def decisions(project: Project) -> list[Decision]:
    made = [
        services.decision_create(
            project=project,
            agent_name="lead",
            type=["process", "technical"][i % 2],
            title=f"Rule {i} cache",
            content=f"Rule {i}.",
            by="l",
        )
        for i in range(6)
    ]
    now = timezone.now()
    for age, d in zip([3, 1, 5, 2, 2, 4], made, strict=True):
        Decision.objects.filter(pk=d.pk).update(created_at=now - timedelta(days=age))
    services.decision_archive(project=project, decision_id=made[4].pk, by="l")
    return made


@pytest.mark.parametrize("query", ["", "status=all", "type=process&status=all", "q=cache", "status=archived"])
def test_decision_previous_and_next_follow_the_decision_list(lead, decisions, query):
    order = [d.pk for d in lead.get(f"{DECISIONS}?{query}").context["page"].object_list]
    for position, pk in enumerate(order):
        url = reverse("review:decision", args=["alpha", pk]) + (f"?{query}" if query else "")
        place = lead.get(url).context["place"]
        assert (place.position, place.total) == (position + 1, len(order))
        assert place.previous == (order[position - 1] if position else None)
        assert place.next == (order[position + 1] if position + 1 < len(order) else None)


def test_a_decision_edit_comes_back_with_the_lists_filters(lead, decisions):
    shown = decisions[0]
    url = reverse("review:decision_edit", args=["alpha", shown.pk]) + "?status=all&type=process"
    response = lead.post(url, {"title": "Renamed", "content": "New.", "rationale": ""})
    assert (
        response["Location"]
        == reverse("review:decision", args=["alpha", shown.pk]) + "?status=all&type=process"
    )


def test_an_archived_decision_outside_the_active_list_offers_its_first(lead, decisions):
    place = lead.get(reverse("review:decision", args=["alpha", decisions[4].pk])).context["place"]
    newest_active = decisions[1]
    assert (place.position, place.first, place.total) == (None, newest_active.pk, 5)


def test_merged_status_counts_stay_right(lead, project, queue):
    assert InboxEntry.objects.filter(status=EntryStatus.PENDING).count() == 7


def test_a_refused_edit_says_why_beside_the_field_and_focuses_it(lead, entry):
    long_title = "T" * 301
    response = lead.post(edit_url(entry), {"title": long_title, "content": "Kept text.", "rationale": ""})
    assert response.status_code == 400
    html = response.content.decode()
    title = re.search(r'<input type="text" name="title"[^>]*>', html)
    assert title is not None
    assert 'aria-invalid="true"' in title.group(0) and "autofocus" in title.group(0)
    assert 'aria-describedby="edit-title-error"' in title.group(0)
    assert re.search(r'<span class="field-error" id="edit-title-error">title: must be at most 300', html)
    assert '<details class="panel" id="edit" open>' in html
    assert "Kept text." in html  # what was typed is kept
