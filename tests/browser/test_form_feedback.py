"""What a form tells the reviewer in Chromium: the decision forms show no template text, a refusal is
shown beside the field it is about and that field takes the focus, and a form being sent says so and
cannot be sent twice (docs/dashboard.md, "Decisions" and "How actions behave")."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Request, Route, expect

from ledger import services
from ledger.models import Decision

pytestmark = pytest.mark.browser

DECISIONS = "/p/alpha/decisions/"
NO_JS = {"java_script_enabled": False}
SEND_INTO_A_FRAME = """() => {
  document.body.insertAdjacentHTML('beforeend', '<iframe name="answer" title="The answer"></iframe>');
  document.querySelector('#record form').target = 'answer';
}"""


@pytest.fixture
def decision(project) -> Decision:
    return services.decision_create(
        project=project,
        agent_name="lead",
        type="architectural",
        title="Sessions live in Redis",
        content="Redis holds sessions.",
        by="lead",
    )


def open_panel(page: Page, summary: str):
    """The form inside the folded panel whose summary reads `summary`, opened."""
    panel = page.locator("details.panel", has=page.locator("summary", has_text=summary))
    panel.locator("summary").click()
    expect(panel).to_have_attribute("open", "")
    return panel


def held(page: Page, pattern: str) -> tuple[list[Route], list[Request]]:
    """Requests to `pattern` are held (not answered) until their route is continued; every request
    sent there is counted."""
    routes: list[Route] = []
    sent: list[Request] = []

    def hold(route: Route) -> None:
        routes.append(route)

    def count(request: Request) -> None:
        if re.search(pattern, request.url):
            sent.append(request)

    page.route(re.compile(pattern), hold)
    page.on("request", count)
    return routes, sent


@pytest.mark.parametrize("context_options", [{}, NO_JS], ids=["js", "no-js"])
def test_the_three_decision_forms_show_no_template_text(page, signed_in, decision):
    page.goto(DECISIONS)
    shown = [open_panel(page, "Record a decision").inner_text()]
    page.goto(f"{DECISIONS}{decision.pk}/")
    shown += [open_panel(page, summary).inner_text() for summary in ("Edit the text", "Supersede")]

    for text in shown:
        assert "Title" in text and "Content" in text
        assert "{#" not in text and "#}" not in text, text


@pytest.mark.parametrize("context_options", [{}, NO_JS], ids=["js", "no-js"])
def test_a_refused_edit_says_why_beside_the_field_which_takes_the_focus(page, signed_in, decision):
    # A long decision page: the form is far below the top, where a banner would be.
    for n in range(12):
        services.decision_edit(
            project=decision.project, decision_id=decision.pk, by="lead", content=f"Version {n}.\n" * 8
        )
    page.goto(f"{DECISIONS}{decision.pk}/")
    form = open_panel(page, "Edit the text")
    title = form.get_by_label("Title")
    title.fill("   ")
    form.get_by_role("button", name="Save").click()

    form = page.locator("details#edit")
    title = form.get_by_label("Title")
    error = form.locator(".field-error")
    expect(error).to_have_text("title: must not be empty")
    expect(title).to_have_attribute("aria-invalid", "true")
    expect(title).to_have_attribute("aria-describedby", error.get_attribute("id") or "-")
    expect(title).to_be_focused()
    expect(title).to_be_in_viewport()
    expect(error).to_be_in_viewport()
    field, said = title.bounding_box(), error.bounding_box()
    assert field and said and 0 <= said["y"] - (field["y"] + field["height"]) < 24, (field, said)
    expect(page.locator("#messages .message")).to_have_count(0)
    decision.refresh_from_db()
    assert decision.title == "Sessions live in Redis"


def test_a_plain_form_is_busy_while_it_is_sent_and_cannot_be_sent_twice(page, signed_in, project):
    routes, sent = held(page, r"/decisions/new$")
    page.goto(DECISIONS)
    form = open_panel(page, "Record a decision").locator("form")
    form.get_by_label("Title").fill("No billing in v1")
    form.get_by_label("Content").fill("Later.")
    # The answer is loaded into a frame, so the page that sent the form can be read while it waits
    # (Playwright reads nothing of a page whose next page is on its way).
    page.evaluate(SEND_INTO_A_FRAME)
    button = form.get_by_role("button", name="Record decision")
    button.click()

    expect(button).to_be_disabled()
    expect(form).to_have_attribute("aria-busy", "true")
    expect(button).to_have_attribute("data-busy", "pressed")
    form.get_by_label("Title").press("Enter")  # the browser's own way to send the form again
    button.dispatch_event("click")
    page.wait_for_timeout(200)
    assert len(routes) == 1 and len(sent) == 1

    with page.expect_response(re.compile(r"/decisions/new$")) as answer:
        routes[0].continue_()
    assert answer.value.status == 302
    assert list(Decision.objects.values_list("title", flat=True)) == ["No billing in v1"]


def test_an_htmx_form_is_busy_until_its_answer_is_in(page, signed_in, decision):
    routes, sent = held(page, r"/decisions/retype$")
    page.goto(DECISIONS)
    page.evaluate("window.__marker = 1")
    page.get_by_role("checkbox", name=f"Select #{decision.pk} Sessions live in Redis").check()
    page.get_by_label("New type").select_option("scope")
    button = page.get_by_role("button", name="Change type")
    button.click()

    form = page.locator("form#retype")
    expect(button).to_be_disabled()
    expect(form).to_have_attribute("aria-busy", "true")
    button.dispatch_event("click")  # a click on a disabled button sends nothing
    page.wait_for_timeout(200)
    assert len(routes) == 1 and len(sent) == 1

    routes[0].continue_()
    expect(page.locator("#messages")).to_contain_text("1 decision is now scope.")
    expect(page.get_by_role("button", name="Change type")).to_be_enabled()
    expect(page.locator("form#retype")).not_to_have_attribute("aria-busy", "true")
    assert page.evaluate("window.__marker") == 1, "the page was reloaded"
    decision.refresh_from_db()
    assert decision.type == "scope"
