"""Fixtures for the browser tests: one Chromium for the whole run, a fresh context per test.

Tests run against pytest-django's live_server. Those marked `@BOTH_SERVERS` run against the production
server too (`python -m config.serve`, what `make serve` runs: granian, several workers, DEBUG off),
started once per test process on the test database.

Playwright's sync API keeps an event loop running in the test thread, so Django would refuse ORM calls
made from the test itself (SynchronousOnlyOperation). The tests only touch the database between browser
steps, never concurrently with them, so that guard is switched off here.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Playwright, sync_playwright

from ledger import services
from ledger.models import InboxEntry, Membership, Project
from tests import servers

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # the suite may run as root (CI containers)
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "pw-123456"

# Records every Content-Security-Policy violation the page reports, next to the console messages.
CSP_WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


# `@BOTH_SERVERS` on a test: once against live_server, once against the production server.
BOTH_SERVERS = pytest.mark.parametrize("server_kind", ["live", "production"], indirect=True)


@pytest.fixture(scope="session")
def production_server(django_db_setup: None) -> Iterator[servers.Server]:
    """One production server per test process, stopped before the test database is dropped."""
    with servers.production_server() as server:
        yield server


@pytest.fixture
def server_kind(request: pytest.FixtureRequest) -> str:
    """ "live" (pytest-django's live_server) unless a test is parametrized with "production"."""
    return str(getattr(request, "param", "live"))


@pytest.fixture
def base_url(request: pytest.FixtureRequest, server_kind: str, live_server: Any) -> str:
    """The server under test. live_server is always requested: through it pytest-django gives every
    browser test a transactional database, whose commits the other process (thread) can read."""
    if server_kind == "production":
        return str(request.getfixturevalue("production_server").url)
    return str(live_server.url)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.fail("Chromium is missing: run `make chromium` (Debian's chromium package)")
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture
def context_options() -> dict[str, Any]:
    """Overridden by tests that need another browser context (for example one that ignores the CSP)."""
    return {}


@pytest.fixture
def context(browser: Browser, base_url: str, context_options: dict[str, Any]) -> Iterator[BrowserContext]:
    context = browser.new_context(base_url=base_url, **context_options)
    context.add_init_script(CSP_WATCH)
    yield context
    context.close()


@pytest.fixture
def console() -> list[str]:
    """Console messages and uncaught errors of `page`, as "type: text"."""
    return []


@pytest.fixture
def page(context: BrowserContext, console: list[str]) -> Page:
    page = context.new_page()

    def record(message: ConsoleMessage) -> None:
        console.append(f"{message.type}: {message.text}")

    page.on("console", record)
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    return page


@pytest.fixture
def coordinator_user(django_user_model: Any, project: Project, server_kind: str) -> Any:
    user = django_user_model.objects.create_user(username="lead", password=PASSWORD)
    if server_kind == "production":
        user.password = servers.password_hash(PASSWORD)
        user.save(update_fields=["password"])
    Membership.objects.create(user=user, project=project, role="coordinator")
    return user


@pytest.fixture
def signed_in(context: BrowserContext, base_url: str, coordinator_user: Any) -> BrowserContext:
    """The browser context carries a coordinator's login (the login form has its own test)."""
    client = Client()
    client.force_login(coordinator_user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base_url}])
    return context


@pytest.fixture
def submit(project: Project) -> Callable[..., InboxEntry]:
    """`submit("slug", type="scope", agent="Bob", title=…)`: a pending inbox entry."""

    def make(slug: str, type: str = "technical", agent: str = "Alice", **fields: Any) -> InboxEntry:
        fields.setdefault("title", slug.replace("-", " ").capitalize())
        fields.setdefault("content", f"{slug} content")
        return services.entry_submit(project=project, agent_name=agent, slug=slug, type=type, **fields).entry

    return make
