"""The server's side of keyboard triage (docs/dashboard.md, "Keys"): the rows that slide into a pending
list as its rows are decided in place, an entry's page that says what was just done and undoes it, a
merge refused for a change said in words, and a result said once."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ledger import services
from ledger.models import EntryStatus, InboxEntry
from ledger.services.inbox.merge import entry_version

pytestmark = pytest.mark.django_db

INBOX = "/p/alpha/inbox/"
BULK = "/p/alpha/inbox/bulk"
HTMX = {"HTTP_HX_REQUEST": "true"}
REFILL = {"refill": "1"}


def submit(project, slug, type="technical", agent="Alice", **kw):
    kw.setdefault("content", f"{slug} content")
    kw.setdefault("title", slug.replace("-", " ").capitalize())
    return services.entry_submit(project=project, agent_name=agent, slug=slug, type=type, **kw).entry


def merge(project, entry):
    return services.entry_merge(project=project, entry_id=entry.pk, by="lead", via="dashboard")


def found(pattern: str, html: str) -> str:
    match = re.search(pattern, html, re.S)
    assert match, f"no {pattern} in the page"
    return match.group()


def rows_in(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr id="entry-(\d+)"', html)]


def refill(lead, shown, *, groups=("1",), **params):
    query = {**REFILL, **params, "shown": [e.pk for e in shown], "group": list(groups)}
    return lead.get(INBOX, query, **HTMX)


# --- the rows that slide in -----------------------------------------------------------------------


def test_a_refill_answers_the_entries_of_the_page_not_shown_into_their_group(lead, project, settings):
    entries = [submit(project, f"e{i:02d}") for i in range(53)]
    shown = entries[1:50]  # the first was decided in place, the page showed fifty
    merge(project, entries[0])
    response = refill(lead, shown)
    html = response.content.decode()
    assert response.status_code == 200
    assert rows_in(html) == [entries[50].pk]
    assert '<tbody id="inbox-group-1" hx-swap-oob="beforeend">' in html
    # The list's count and pages, true again, and no empty state: entries are left.
    assert 'id="inbox-pages" hx-swap-oob="true"' in html and "Page 1 of 2 · 52 in all" in html
    assert re.search(r'<div id="inbox-empty" hx-swap-oob="true">\s*</div>', html)


def test_a_group_the_list_does_not_show_yet_comes_whole_with_its_heading(lead, project):
    other = submit(project, "other")
    boundary = submit(project, "boundary", type="scope")
    html = refill(lead, [other], groups=["1"]).content.decode()
    assert rows_in(html) == [boundary.pk]
    assert '<table hx-swap-oob="beforeend:#inbox-rows"><tbody id="inbox-group-0">' in html
    assert "Boundary proposals" in html


def test_a_text_search_refills_its_one_list_without_headings(lead, project):
    first, second = submit(project, "cache-first"), submit(project, "cache-second")
    html = refill(lead, [first], groups=["all"], q="cache").content.decode()
    assert rows_in(html) == [second.pk]
    assert '<tbody id="inbox-group-all" hx-swap-oob="beforeend">' in html
    assert "Other proposals" not in html


def test_the_new_rows_keep_the_lists_filters_in_their_links_not_the_refills(lead, project):
    shown, new = submit(project, "a", type="scope"), submit(project, "b", type="scope")
    submit(project, "c")  # filtered out
    html = refill(lead, [shown], groups=["0"], type="scope").content.decode()
    assert rows_in(html) == [new.pk]
    assert f'href="/p/alpha/inbox/{new.pk}/?type=scope"' in html
    assert 'name="query" value="type=scope"' in html
    assert "shown=" not in html and "refill=" not in html


def test_the_empty_state_comes_once_nothing_is_left(lead, project):
    entry = submit(project, "only")
    merge(project, entry)
    html = refill(lead, []).content.decode()
    assert rows_in(html) == []
    assert "The inbox is empty: nothing waits for review." in html
    assert 'id="inbox-pages" hx-swap-oob="true"' in html and "Page 1" not in html


def test_a_refill_told_of_too_many_rows_is_refused(lead, project):
    response = lead.get(INBOX, {**REFILL, "shown": [str(i) for i in range(1, 202)]}, **HTMX)
    assert response.status_code == 400
    assert b"reload" in response.content


def test_without_htmx_a_refill_is_the_whole_page(lead, project):
    submit(project, "a")
    html = lead.get(INBOX, REFILL).content.decode()
    assert "<html" in html and 'id="inbox-list"' in html


def test_another_projects_member_cannot_refill(outsider, project):
    submit(project, "a")
    assert outsider.get(INBOX, REFILL, **HTMX).status_code == 404


def test_a_refill_makes_the_same_number_of_queries_whatever_it_adds(lead, project):
    entries = [submit(project, f"e{i:02d}", title=f"Rule {i}") for i in range(60)]

    def queries(shown) -> int:
        lead.get(INBOX)  # warm the session and user
        with CaptureQueriesContext(connection) as done:
            refill(lead, shown)
        return len(done)

    assert queries(entries[:49]) == queries(entries[:10])


def test_only_a_coordinators_pending_list_asks_for_refills(lead, viewer, project):
    submit(project, "a")
    assert 'data-refill="/p/alpha/inbox/"' in lead.get(INBOX).content.decode()
    assert "data-refill" not in lead.get(INBOX, {"status": "all"}).content.decode()
    assert "data-refill" not in viewer.get(INBOX).content.decode()


# --- an entry's page: what was just done, and its undo ---------------------------------------------


def test_a_merge_from_an_entrys_page_is_said_on_the_next_one_by_title_with_an_undo(lead, project):
    first, second = submit(project, "first", title="Use PostgreSQL"), submit(project, "second")
    page = reverse("review:entry", args=["alpha", first.pk])
    after = reverse("review:entry", args=["alpha", second.pk]) + "?type=technical"
    response = lead.post(
        reverse("review:entry_merge", args=["alpha", first.pk]),
        {"next": after, "query": "type=technical", "seen": entry_version(first)},
    )
    assert response["Location"] == after
    html = lead.get(after).content.decode()
    assert f"Merged #{first.pk} Use PostgreSQL." in html
    assert f"Entry {first.pk} merged" not in html  # the toast says it, once
    # Its Undo comes back to the entry it puts back, with the list's filters.
    undo = found(r'<form class="undo".*?</form>', html)
    assert f'name="next" value="{page}?type=technical"' in undo
    assert f'name="ids" value="{first.pk}"' in undo
    # Shown once.
    assert "Merged #" not in lead.get(after).content.decode()


def test_the_undo_from_an_entrys_page_puts_it_back_and_says_so_there(lead, project):
    entry = submit(project, "first", title="Use PostgreSQL")
    merge(project, entry)
    page = reverse("review:entry", args=["alpha", entry.pk]) + "?status=pending"
    response = lead.post(BULK, {"action": "undo", "ids": [entry.pk], "next": page})
    assert response["Location"] == page
    assert InboxEntry.objects.get(pk=entry.pk).status == EntryStatus.PENDING
    html = lead.get(page).content.decode()
    assert f"Undone: #{entry.pk} Use PostgreSQL is pending again." in html
    assert "1 entry undone" not in html


def test_a_viewer_sees_the_keys_but_no_undo(viewer, project):
    entry = submit(project, "first")
    html = viewer.get(reverse("review:entry", args=["alpha", entry.pk])).content.decode()
    assert 'id="triage-keys"' in html and "back to the list" in html
    assert "merge it, then go on" not in html


# --- refusals and results, in words and once -------------------------------------------------------


def test_a_merge_refused_for_an_edit_says_who_edited_it_and_when_in_words(lead, project):
    entry = submit(project, "use-postgres", title="Use PostgreSQL")
    seen = entry_version(entry)
    services.entry_edit(project=project, entry_id=entry.pk, by="mallory", content="Reworded.")
    html = lead.post(
        reverse("review:entry_merge", args=["alpha", entry.pk]), {"seen": seen}, **HTMX
    ).content.decode()
    assert "changed since you read it: mallory edited it just now." in html
    assert "use-postgres" not in found(r'<p class="message error".*?</p>', html)


def test_a_merge_refused_for_a_new_submission_names_the_agent(lead, project):
    entry = submit(project, "use-postgres", title="Use PostgreSQL")
    seen = entry_version(entry)
    submit(project, "use-postgres", title="Use PostgreSQL", content="Sent again.")
    response = lead.post(reverse("review:entry_merge", args=["alpha", entry.pk]), {"seen": seen})
    shown = lead.get(response["Location"]).content.decode()
    assert "changed since you read it: Alice, its agent, sent it again just now." in shown


def test_a_plain_bulk_merge_names_each_entry_changed_since_with_who_and_when(lead, project):
    a, b = submit(project, "a", title="Alpha rule"), submit(project, "b", title="Beta rule")
    seen = {f"seen-{e.pk}": entry_version(e) for e in (a, b)}
    services.entry_edit(project=project, entry_id=b.pk, by="mallory", content="Reworded.")
    response = lead.post(BULK, {"action": "merge", "ids": [a.pk, b.pk], **seen}, follow=True)
    html = response.content.decode()
    assert f"#{b.pk} Beta rule: Not merged: it changed since you read it: mallory edited it" in html
    assert f"Merged #{a.pk} Alpha rule." in html
    assert "entry merged" not in html


def test_over_htmx_the_changed_row_says_it_and_the_messages_do_not(lead, project):
    a, b = submit(project, "a", title="Alpha rule"), submit(project, "b", title="Beta rule")
    seen = {f"seen-{e.pk}": entry_version(e) for e in (a, b)}
    services.entry_edit(project=project, entry_id=b.pk, by="mallory", content="Reworded.")
    html = lead.post(BULK, {"action": "merge", "ids": [a.pk, b.pk], **seen}, **HTMX).content.decode()
    messages = found(r'<div id="messages".*?</div>', html)
    assert "changed since" not in messages and "merged" not in messages
    assert html.count("changed since you read it") == 1


def test_the_toast_names_five_entries_of_a_bulk_and_counts_the_rest(lead, project):
    entries = [submit(project, f"e{i}") for i in range(8)]
    html = lead.post(BULK, {"action": "reject", "ids": [e.pk for e in entries]}, **HTMX).content.decode()
    named = ", ".join(f"#{e.pk}" for e in entries[:5])
    assert f"Rejected 8 entries: {named} and 3 more." in html
