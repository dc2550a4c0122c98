"""The interactive API docs load from our own static files and run under the Content-Security-Policy."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import BOTH_SERVERS

pytestmark = pytest.mark.browser


@BOTH_SERVERS
def test_api_docs_render_every_route_without_the_network_or_csp_violations(page, console, project):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("/api/docs")

    expect(page.locator(".swagger-ui .opblock-summary-path").first).to_be_visible()
    expect(page.get_by_text("/api/projects/{project}/decisions/inbox").first).to_be_visible()
    live = page.url.split("/api/docs")[0]
    assert [url for url in requested if not url.startswith((live, "data:"))] == []
    violations = page.evaluate("window.__cspViolations")
    assert violations == [], violations
    assert [line for line in console if "content security policy" in line.lower()] == []
