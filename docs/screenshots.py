"""Take the README's dashboard screenshots from a throwaway demo database.

    .venv/bin/python docs/screenshots.py

Builds a temporary SQLite database, loads the demo project (`manage.py demo`), serves it with
`runserver` on a free port and signs in as the demo coordinator in Chromium (Debian's package, driven
by Playwright). Writes inbox.png, inbox-phone.png, entry.png, decision.png and overview.png into
docs/screenshots/.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
USER, PASSWORD = "demo", "demo-password"  # created by `manage.py demo`
PROJECT = "demo"
SERVER_START_SECONDS = 30


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def demo_server(workdir: Path) -> Iterator[str]:
    """A migrated demo database served by `runserver`; yields its base URL and stops it afterwards."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'canon.sqlite3'}",
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    }
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "demo", "--workspace", str(workdir / "workspace"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (workdir / "server.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until_up(server, f"{url}/login/")
            yield url
        finally:
            server.terminate()
            server.wait(timeout=10)


def wait_until_up(server: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"runserver exited with {server.returncode}; see its log")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    raise SystemExit(f"runserver did not answer {url} within {SERVER_START_SECONDS}s")


def sign_in(page: Page) -> None:
    page.goto("/login/")
    page.get_by_label("User name").fill(USER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()


def shoot_inbox_and_entry(page: Page) -> list[Path]:
    page.goto(f"/p/{PROJECT}/inbox/")
    expect(page.locator("table.entries")).to_be_visible()
    page.keyboard.press("j")  # the first proposal focused, its excerpt shown
    page.screenshot(path=OUT / "inbox.png", full_page=True)
    # Bob's counter-proposal overlaps an active decision, so its page shows related decisions.
    page.get_by_role("link", name="Keep session tokens in PostgreSQL").click()
    expect(page.get_by_role("heading", name="Related active decisions")).to_be_visible()
    page.screenshot(path=OUT / "entry.png", full_page=True)
    return [OUT / "inbox.png", OUT / "entry.png"]


def shoot_decision(page: Page) -> list[Path]:
    # The demo's replacement rule: it superseded an older one and was refined once since.
    page.goto(f"/p/{PROJECT}/decisions/")
    page.get_by_role("link", name="HTTP clients time out after 5 seconds").click()
    expect(page.locator("section.chain a[rel=prev]")).to_be_visible()
    expect(page.get_by_role("heading", name="Earlier versions")).to_be_visible()
    page.screenshot(path=OUT / "decision.png", full_page=True)
    return [OUT / "decision.png"]


def shoot_overview(page: Page) -> list[Path]:
    page.goto(f"/p/{PROJECT}/")
    expect(page.locator("svg").first).to_be_visible()
    page.screenshot(path=OUT / "overview.png", full_page=True)
    return [OUT / "overview.png"]


def shoot_phone_inbox(page: Page) -> list[Path]:
    """The first screen of the inbox on a phone: the filters folded, the first proposals in view."""
    page.set_viewport_size(PHONE)
    page.goto(f"/p/{PROJECT}/inbox/")
    expect(page.locator("table.entries")).to_be_visible()
    page.screenshot(path=OUT / "inbox-phone.png")
    page.set_viewport_size(VIEWPORT)
    return [OUT / "inbox-phone.png"]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="canon-screenshots-") as tmp,
        demo_server(Path(tmp)) as url,
        sync_playwright() as driver,
    ):
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=url, viewport=VIEWPORT)
        page = context.new_page()
        sign_in(page)
        written = [
            *shoot_inbox_and_entry(page),
            *shoot_decision(page),
            *shoot_overview(page),
            *shoot_phone_inbox(page),
        ]
        browser.close()
    for path in written:
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
