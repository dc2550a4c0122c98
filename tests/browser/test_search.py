"""The project's search box in a browser: typed and sent from any project page, its results read with
the keyboard, one kind chosen in place, with and without JavaScript (docs/dashboard.md, "Search")."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from ledger import services

from .test_accessibility import violations

pytestmark = pytest.mark.browser

NO_JS = {"java_script_enabled": False}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def rows(project):
    decision = services.decision_create(
        project=project,
        agent_name="Juno",
        type="process",
        title="Deploy the docs site with deploy-web-pages.sh",
        content="**What:** never by hand.\n**Why:** the script purges the CDN.",
        by="lead",
    )
    services.memory_record(
        project=project,
        agent_name="Zoë",
        type="learning",
        content="Docs deploys fail on Mondays: the CDN token rotates at 00:00 UTC. " + "x" * 300,
    )
    services.entry_submit(
        project=project,
        agent_name="Marlow",
        slug="marlow-docs-preview",
        type="process",
        title="Preview each docs deploy",
        content="A preview site per change.",
    )
    return {"decision": decision}


def search_from(page: Page, start: str, q: str) -> None:
    page.goto(start)
    box = page.get_by_role("searchbox", name="Search decisions, memories, sessions, episodes and the inbox")
    box.fill(q)
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"/p/alpha/search/\?q="))


@pytest.mark.parametrize("context_options", [{}, NO_JS], ids=["js", "no-js"])
def test_a_search_typed_on_any_project_page_opens_its_results(page, signed_in, rows):
    search_from(page, "/p/alpha/memory/", "docs deploy")
    results = page.get_by_role("list", name="Results, best match first")
    expect(results.get_by_role("listitem")).to_have_count(3)
    expect(results.locator("mark").first).to_be_visible()
    expect(page.get_by_role("searchbox")).to_have_value("docs deploy")


def test_the_results_are_reached_and_opened_with_the_keyboard(page, signed_in, rows):
    search_from(page, "/p/alpha/", "deploy-web-pages.sh")
    page.get_by_role("searchbox").focus()
    title = "Deploy the docs site with deploy-web-pages.sh"
    for _ in range(15):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == title:
            break
    assert page.evaluate("document.activeElement.textContent") == title
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"/p/alpha/decisions/{rows['decision'].pk}/")


@pytest.mark.parametrize("context_options", [{}, NO_JS], ids=["js", "no-js"])
def test_one_kind_is_chosen_in_place_and_the_address_says_so(page, signed_in, rows, console):
    search_from(page, "/p/alpha/decisions/", "docs deploy")
    page.get_by_role("navigation", name="Kinds of rows").get_by_role("link", name="Inbox").click()
    expect(page).to_have_url(re.compile(r"kind=entry"))
    results = page.get_by_role("list", name="Results, best match first")
    expect(results.get_by_role("listitem")).to_have_count(1)
    expect(results).to_contain_text("Preview each docs deploy")
    expect(
        page.get_by_role("link", name="Inbox", exact=True).and_(page.locator("[aria-current=page]"))
    ).to_be_visible()
    assert [line for line in console if line.startswith(("error", "pageerror"))] == []


def test_the_results_page_has_no_serious_accessibility_violation(page, signed_in, rows):
    search_from(page, "/p/alpha/", "docs deploy")
    assert violations(page) == []
    page.goto("/p/alpha/search/")
    assert violations(page) == []


def test_on_a_phone_the_results_fit_the_window(page, signed_in, rows):
    page.set_viewport_size(PHONE)
    search_from(page, "/p/alpha/", "mondays")
    expect(page.get_by_role("list", name="Results, best match first")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") == 0
