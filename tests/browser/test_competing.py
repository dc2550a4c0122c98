"""Competing proposals in Chromium: an entry's page shows its competitors side by side, and one form
merges it and rejects the others (docs/dashboard.md "Competing proposals")."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from ledger import services
from ledger.models import DecisionStatus, EntryStatus
from tests.browser.test_accessibility import violations

pytestmark = pytest.mark.browser

WIDE = {"viewport": {"width": 1366, "height": 900}}


def entry_path(entry) -> str:
    return f"/p/alpha/inbox/{entry.pk}/"


# Without JavaScript the page works the same; axe (a script) scans it in the run with JavaScript.
@pytest.mark.parametrize(
    ("context_options", "scan"),
    [(WIDE, True), ({**WIDE, "java_script_enabled": False}, False)],
    ids=["js", "no-js"],
)
def test_a_coordinator_sees_both_side_by_side_and_resolves_them(page: Page, signed_in, submit, scan):
    mine = submit("queue-tech", title="Queue: Redis", content="Redis lists for every job queue.")
    theirs = submit(
        "queue-tech", agent="Bob", title="Queue: RabbitMQ", content="RabbitMQ for the job queues."
    )
    page.goto(entry_path(mine))

    section = page.get_by_role("region", name="Competing proposals")
    expect(section).to_be_visible()
    cards = section.locator(".side-by-side > li")
    expect(cards).to_have_count(2)
    expect(cards.nth(0)).to_contain_text("Redis lists for every job queue.")
    expect(cards.nth(1)).to_contain_text("RabbitMQ for the job queues.")
    expect(cards.nth(1)).to_contain_text("Bob")
    left, right = cards.nth(0).bounding_box(), cards.nth(1).bounding_box()
    assert left and right
    assert left["y"] == right["y"] and right["x"] >= left["x"] + left["width"]
    if scan:
        assert violations(page) == []
        assert page.evaluate("window.__cspViolations") == []

    form = section.get_by_role("form", name="Settle them in one step")
    expect(form.get_by_role("checkbox", name=f"#{theirs.pk} Queue: RabbitMQ")).to_be_checked()
    form.get_by_label("Reason for rejecting them").fill("Redis already runs here")
    form.get_by_role("button", name="Merge this one, reject the ticked").click()

    expect(page.locator(".message").first).to_contain_text(f"Entry {mine.pk} merged; #{theirs.pk} rejected")
    expect(page.locator(".status")).to_contain_text("merged")
    expect(page.get_by_role("region", name="Competing proposals")).to_have_count(0)
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.status, theirs.status, theirs.reason) == (
        EntryStatus.MERGED,
        EntryStatus.REJECTED,
        "Redis already runs here",
    )


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_merge_and_supersede_the_decision_it_contradicts(page: Page, signed_in, submit, project):
    old = submit("queue-tech", type="architectural", title="Queue: Redis")
    decision = services.entry_merge(project=project, entry_id=old.pk, by="lead").decision
    entry = submit("queue-tech", type="architectural", agent="Bob", title="Queue: RabbitMQ")
    page.goto(entry_path(entry))

    section = page.get_by_role("region", name="Competing proposals")
    expect(section.locator(".side-by-side > li")).to_have_count(2)
    expect(section).to_contain_text(f"Active decision · #{decision.pk}")
    section.get_by_role("button", name=f"Merge and supersede decision #{decision.pk}").click()

    expect(page.locator(".message").first).to_contain_text(f"decision #{decision.pk} superseded")
    decision.refresh_from_db()
    entry.refresh_from_db()
    assert entry.status == EntryStatus.MERGED
    assert (decision.status, decision.superseded_by_id) == (DecisionStatus.SUPERSEDED, entry.decision_id)
