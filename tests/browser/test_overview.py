"""The project page's charts and the audit page in Chromium: the SVG pictures are drawn at a visible
size, nothing breaks the Content-Security-Policy, and axe-core finds no serious or critical problem
(docs/dashboard.md, "Project overview" and "Audit")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from playwright.sync_api import Page, expect

from ledger import services
from ledger.models import InboxEntry

from .conftest import BOTH_SERVERS

pytestmark = pytest.mark.browser


def problems(page: Page, console: list[str]) -> list[str]:
    """Console errors (a refused style or script among them) and reported CSP violations."""
    return [line for line in console if line.startswith(("error", "pageerror"))] + page.evaluate(
        "window.__cspViolations"
    )


def serious(page: Page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']}: {v['help']} ({len(v['nodes'])})"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.fixture
def ledger(project, submit):
    """Pending proposals of several ages, some decided by two agents, and decisions."""
    now = timezone.now()
    for i, hours in enumerate([0.2, 5, 30, 200, 1000]):
        entry = submit(f"waiting-{i}", title=f"Waiting {i}")
        InboxEntry.objects.filter(pk=entry.pk).update(created_at=now - timedelta(hours=hours))
    merged = submit("use-postgres", type="architectural", title="Use PostgreSQL")
    services.entry_merge(project=project, entry_id=merged.pk, by="lead", via="dashboard")
    rejected = submit("use-redis", agent="Bob", title="Use Redis")
    services.entry_reject(project=project, entry_id=rejected.pk, by="lead", reason="Not now", via="dashboard")
    services.decision_create(
        project=project,
        agent_name="lead",
        type="scope",
        title="No billing in v1",
        content="Later.",
        by="lead",
    )
    return merged


@BOTH_SERVERS
def test_the_project_page_draws_its_charts_within_the_policy(page, signed_in, ledger, console):
    page.goto("/p/alpha/")

    svgs = page.locator("svg.chart-svg")
    expect(svgs).to_have_count(4)  # inbox age, Alice and Bob, decisions
    for i in range(4):
        box = svgs.nth(i).bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 30
    expect(page.get_by_role("img", name="Pending proposals by age")).to_be_visible()
    expect(page.locator("#inbox-age rect")).to_have_count(5)
    first_bar = page.locator("#inbox-age rect").first.bounding_box()
    assert first_bar is not None and first_bar["height"] > 0 and first_bar["width"] > 0
    expect(page.get_by_role("img", name="Alice: proposals merged and rejected per week")).to_be_visible()
    expect(
        page.get_by_role("img", name="Decisions recorded, superseded and archived per week")
    ).to_be_visible()
    # The data tables are there for screen readers and hidden from sight.
    table = page.get_by_role("table", name="Pending proposals by age")
    expect(table).to_be_attached()
    size = table.locator("xpath=..").bounding_box()  # the visually hidden box that clips it
    assert size is not None and size["width"] <= 1 and size["height"] <= 1
    expect(page.get_by_role("link", name="“Use PostgreSQL”")).to_have_attribute(
        "href", f"/p/alpha/inbox/{ledger.pk}/"
    )
    assert problems(page, console) == []
    assert serious(page) == []


def test_the_charts_fit_a_phone_screen(page, signed_in, ledger):
    page.set_viewport_size({"width": 375, "height": 740})
    page.goto("/p/alpha/")
    width = page.evaluate("document.documentElement.clientWidth")
    for i in range(page.locator("svg.chart-svg").count()):
        box = page.locator("svg.chart-svg").nth(i).bounding_box()
        assert box is not None and box["width"] > 0 and box["x"] + box["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@BOTH_SERVERS
def test_the_audit_page_lists_named_actions_and_filters_them(page, signed_in, ledger, console):
    page.goto("/p/alpha/")
    page.get_by_role("navigation", name="Project").get_by_role("link", name="Audit").click()

    expect(page).to_have_url("/p/alpha/audit/")
    items = page.locator("ol.audit-events > li")
    expect(items).to_have_count(3)
    expect(items.first).to_contain_text("lead created decision “No billing in v1”")
    expect(page.get_by_text("lead rejected “Use Redis”")).to_be_visible()
    assert serious(page) == []

    page.get_by_label("Action").select_option("merge")
    page.get_by_role("button", name="Filter").click()

    expect(page).to_have_url("/p/alpha/audit/?actor=&action=merge&object_type=&via=")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("lead merged “Use PostgreSQL”")
    page.get_by_role("link", name="“Use PostgreSQL”").click()
    expect(page.get_by_role("heading", name="Use PostgreSQL")).to_be_visible()
    assert problems(page, console) == []


def test_the_browser_gets_the_icon(page, signed_in):
    page.goto("/p/alpha/")
    href = page.locator("link[rel=icon]").get_attribute("href")
    assert href == "/static/favicon.svg"
    response = page.request.get(href)
    assert response.status == 200 and "svg" in response.headers["content-type"]
    assert page.request.get("/favicon.ico").url.endswith("/static/favicon.svg")
