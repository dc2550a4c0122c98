"""Entry and decision pages in a real browser (docs/dashboard.md "Entry and decision pages"): walking the
filtered inbox with Previous and Next, editing a proposal before merging it, its earlier version shown
as a diff, and the merged decision naming who proposed and who merged it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from ledger.models import InboxEntry

from .test_accessibility import violations
from .test_dashboard import csp_problems

pytestmark = pytest.mark.browser


def entry_path(entry: InboxEntry, query: str = "type=scope") -> str:
    return f"/p/alpha/inbox/{entry.pk}/?{query}"


def test_walk_the_filtered_queue_edit_before_merging_and_see_the_diff(page: Page, signed_in, submit, console):
    first = submit(
        "queue-first", type="scope", title="Queue in PostgreSQL", content="Jobs live in PostgreSQL."
    )
    second = submit("queue-second", type="scope", agent="Bob")
    submit("not-scope", type="technical")
    third = submit("queue-third", type="scope")

    page.goto(entry_path(first))
    nav = page.get_by_role("navigation", name="Previous and next in the inbox")
    expect(nav).to_contain_text("1 of 3")
    expect(nav.get_by_role("link", name="← Previous")).to_have_count(0)
    nav.get_by_role("link", name="Next →").click()
    expect(page).to_have_url(re.compile(rf"/inbox/{second.pk}/\?type=scope$"))
    expect(nav).to_contain_text("2 of 3")
    nav.get_by_role("link", name="Next →").click()
    expect(page).to_have_url(re.compile(rf"/inbox/{third.pk}/\?type=scope$"))
    expect(nav.get_by_role("link", name="Next →")).to_have_count(0)
    nav.get_by_role("link", name="← Previous").click()
    nav.get_by_role("link", name="← Previous").click()
    expect(page).to_have_url(re.compile(rf"/inbox/{first.pk}/\?type=scope$"))

    # Edit before merging: the agent's text stays, as the earlier version, shown as a diff.
    page.get_by_text("Edit before merging").click()
    page.get_by_label("Title").fill("Queue jobs in PostgreSQL")
    page.get_by_label("Content").fill("Jobs live in PostgreSQL 16.\nNo Redis.")
    page.get_by_role("button", name="Save the edit").click()
    expect(page).to_have_url(re.compile(rf"/inbox/{first.pk}/\?type=scope$"))
    expect(page.locator("#messages")).to_contain_text("kept as a revision")
    expect(page.get_by_role("heading", name="Queue jobs in PostgreSQL", level=1)).to_be_visible()
    versions = page.locator("section.versions")
    expect(versions.get_by_role("heading", name="Earlier versions")).to_be_visible()
    expect(versions.locator("ins").filter(has_text="jobs")).to_have_count(1)
    expect(versions.locator("ins").filter(has_text="No Redis.")).to_have_count(1)
    expect(versions).to_contain_text("replaced by lead")
    assert violations(page) == []  # the diff and the edit form pass axe-core

    # Merging takes the edited text and goes on to the next entry of the list.
    page.get_by_role("button", name="Merge").click()
    expect(page).to_have_url(re.compile(rf"/inbox/{second.pk}/\?type=scope$"))
    expect(page.locator("#toast")).to_contain_text(f"Merged #{first.pk} Queue jobs in PostgreSQL.")
    expect(page.get_by_role("navigation", name="Previous and next in the inbox")).to_contain_text("1 of 2")

    first.refresh_from_db()
    page.goto(f"/p/alpha/decisions/{first.decision_id}/")
    expect(page.get_by_role("heading", name="Queue jobs in PostgreSQL", level=1)).to_be_visible()
    meta = page.locator("p.meta")
    expect(meta).to_contain_text("proposed by Alice in Queue jobs in PostgreSQL, merged by lead")
    meta.get_by_role("link", name="Queue jobs in PostgreSQL").click()
    expect(page.locator("p.status")).to_contain_text("merged by lead")
    assert csp_problems(page, console) == []
