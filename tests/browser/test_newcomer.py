"""What a newcomer meets first, in Chromium: the demo shows what agents were told, the overview's cards
look and act like links, the mirror's earlier runs are not a wall of background exports, and a
superuser finds the admin from the header (docs/dashboard.md)."""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from playwright.sync_api import BrowserContext, Page, expect

from ledger.models import MirrorRun

pytestmark = pytest.mark.browser

ACCENT = "rgb(31, 95, 191)"


def sign_in(context: BrowserContext, base_url: str, user: Any) -> None:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base_url}])


def border(page: Page, selector: str) -> str:
    return str(page.locator(selector).first.evaluate("(box) => getComputedStyle(box).borderColor"))


def test_the_demo_shows_what_agents_were_told(page, context, base_url, tmp_path):
    call_command("demo", "--workspace", str(tmp_path), stdout=StringIO())
    sign_in(context, base_url, get_user_model().objects.get(username="demo"))
    page.goto("/p/demo/")
    page.get_by_role("navigation", name="Project").get_by_role("link", name="Told").click()

    rows = page.locator("#compilation-list tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#compilation-list")).not_to_contain_text("Nothing recorded yet")
    expect(rows.filter(has_text="Alice")).to_contain_text("run-2026-11-21")
    rows.filter(has_text="Alice").get_by_role("link", name="run-2026-11-21").click()
    expect(page.locator("pre.context")).to_contain_text("## Memory")


def test_the_overview_cards_look_and_act_like_links(page, signed_in, project, submit):
    submit("waiting")
    page.goto("/")
    card = page.locator("li.card").first
    plain = border(page, "li.card")
    card.hover(position={"x": 5, "y": 5})
    assert border(page, "li.card") == ACCENT != plain
    # A click anywhere on the card opens the project, away from its name too.
    box = card.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 4)
    expect(page).to_have_url(re.compile(r"/p/alpha/$"))

    stats = page.locator("ul.stats a")
    expect(stats).to_have_count(3)
    plain = border(page, "ul.stats a")
    stats.first.hover()
    assert border(page, "ul.stats a") == ACCENT != plain
    page.locator("a.brand").focus()
    page.keyboard.press("Tab")
    while not page.evaluate("document.activeElement.matches('ul.stats a')"):
        page.keyboard.press("Tab")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    for name, path in (
        ("Inbox age", "/p/alpha/inbox/"),
        ("Merged and rejected per agent", "/p/alpha/audit/"),
        ("Decisions over time", "/p/alpha/decisions/?status=all"),
    ):
        expect(page.get_by_role("link", name=name, exact=True)).to_have_attribute("href", path)


def test_background_exports_in_a_row_are_one_line(page, signed_in, project):
    def run(trigger: str = "background", ok: bool = True) -> None:
        MirrorRun.objects.create(
            project=project, kind="export", trigger=trigger, ok=ok, counts={"written": 1}
        )

    run("dashboard")
    for _ in range(30):
        run()
    run(ok=False)
    for _ in range(6):
        run()  # the newest is the last export, shown on its own; five stay in the list

    page.goto("/p/alpha/mirror/")
    lines = page.locator("details.run > summary")
    expect(lines).to_have_count(4)
    expect(lines.nth(0)).to_contain_text("and 4 earlier background exports, all succeeded")
    expect(lines.nth(1)).to_contain_text("✗ failed")
    expect(lines.nth(1)).not_to_contain_text("earlier")
    expect(lines.nth(2)).to_contain_text("and 29 earlier background exports, all succeeded")
    expect(lines.nth(3)).to_contain_text("dashboard")


def test_only_a_superuser_finds_the_admin_in_the_header(page, context, base_url, signed_in):
    page.goto("/p/alpha/")
    expect(page.locator("header.top").get_by_role("link", name="Admin")).to_have_count(0)

    admin = get_user_model().objects.create_superuser(username="root", password="pw-123456")
    context.clear_cookies()
    sign_in(context, base_url, admin)
    page.goto("/p/alpha/")
    page.locator("header.top").get_by_role("link", name="Admin").click()
    expect(page).to_have_title("Site administration | Django site admin")
