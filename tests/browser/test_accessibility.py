"""axe-core in Chromium on every dashboard page (tests/pages.py), as a coordinator, as a viewer and
signed out, with every folded panel opened: no serious or critical violation.

axe is evaluated in the page through the browser's debugging protocol, so the page keeps its
Content-Security-Policy: it is scanned exactly as it is served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import axe_playwright_python
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import BrowserContext, Page

from tests.pages import COORDINATOR, VIEWER, pages, seed, unlisted_get_routes

pytestmark = pytest.mark.browser

AXE = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()
BLOCKING = {"serious", "critical"}
PHONE = {"width": 390, "height": 844}
# Rules a page is excused from, with why. Swagger UI (the API docs) opens an operation with a button that
# holds the operation's own links and buttons: its markup, which no stylesheet or template of ours changes.
EXCUSED = {"/api/docs": {"nested-interactive"}}
# Opens every <details> so the forms folded inside them (edit, supersede, record) are scanned too.
UNFOLD = "document.querySelectorAll('details').forEach((d) => { d.open = true; })"


def violations(page: Page) -> list[dict[str, Any]]:
    """axe's serious and critical violations on the page as it stands."""
    page.evaluate(UNFOLD)
    page.evaluate(AXE)
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [v for v in results["violations"] if v["impact"] in BLOCKING]


def described(label: str, url: str, violation: dict[str, Any]) -> str:
    targets = [" ".join(map(str, node["target"])) for node in violation["nodes"]]
    more = f" and {len(targets) - 5} more" if len(targets) > 5 else ""
    return (
        f"{label} ({url}): {violation['id']} [{violation['impact']}] {violation['help']}: "
        f"{', '.join(targets[:5])}{more}"
    )


def sign_in(context: BrowserContext, base_url: str, username: str) -> None:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base_url}])


def scan_every_page(
    page: Page, context: BrowserContext, base_url: str, username: str, seeded: Any
) -> list[str]:
    """Every page's blocking violations, described; the signed-out pages are opened signed out."""
    problems = []
    for listed in pages(seeded):
        context.clear_cookies()
        if not listed.anonymous:
            sign_in(context, base_url, username)
        response = page.goto(listed.url)
        assert response is not None and response.status in (200, 404), f"{listed.label}: {response}"
        if listed.url.startswith("/api/docs"):
            page.locator(".swagger-ui .opblock-summary-path").first.wait_for()
        excused = EXCUSED.get(listed.url, set())
        problems += [
            described(listed.label, listed.url, v) for v in violations(page) if v["id"] not in excused
        ]
    return problems


@pytest.mark.parametrize("username", [COORDINATOR, VIEWER])
def test_no_page_has_a_serious_or_critical_violation(
    page, context, base_url, project, other_project, username
):
    seeded = seed(project, other_project)
    problems = scan_every_page(page, context, base_url, username, seeded)
    assert problems == [], "\n".join(problems)


def test_no_page_has_a_serious_or_critical_violation_on_a_phone(
    page, context, base_url, project, other_project
):
    seeded = seed(project, other_project)
    page.set_viewport_size(PHONE)
    problems = scan_every_page(page, context, base_url, COORDINATOR, seeded)
    assert problems == [], "\n".join(problems)


def test_the_scan_reports_what_it_finds(page, base_url, live_server):
    """A page with an unnamed field and low-contrast text fails: the scan is not a no-op."""
    page.goto("/login/")
    page.evaluate(
        "document.querySelector('main').insertAdjacentHTML('beforeend',"
        ' \'<input type="text" name="nameless"><p class="pale">pale</p>\');'
        "document.querySelector('.pale').style.color = '#ddd'"
    )
    found = {v["id"] for v in violations(page)}
    assert {"label", "color-contrast"} <= found, found


def test_every_page_of_the_dashboard_is_scanned(project, other_project, django_user_model):
    """A page added to review/urls.py is added to tests/pages.py too, or it goes unscanned."""
    seeded = seed(project, other_project)
    client = Client()
    client.force_login(django_user_model.objects.get(username=COORDINATOR))
    assert unlisted_get_routes(seeded, client) == []
