"""The dashboard in a real browser: sign-in, filters, in-place review with htmx, bulk actions, the
supersession chain, escaping and the Content-Security-Policy (docs/dashboard.md)."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from ledger import services
from ledger.models import Decision, DecisionStatus, EntryStatus, InboxEntry, Membership

from .conftest import BOTH_SERVERS, PASSWORD

pytestmark = pytest.mark.browser

INBOX = "/p/alpha/inbox/"
XSS_TITLE = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'


def row(page: Page, entry: InboxEntry):
    return page.locator(f"#entry-{entry.pk}")


def csp_problems(page: Page, console: list[str]) -> list[str]:
    """CSP violations the page reported, from the console and from `securitypolicyviolation` events."""
    logged = [line for line in console if "content security policy" in line.lower()]
    return logged + page.evaluate("window.__cspViolations")


@BOTH_SERVERS
def test_sign_in_through_the_login_form_lands_on_the_project_list(page, coordinator_user, submit):
    submit("first-proposal")
    page.goto("/login/")
    page.get_by_label("User name").fill("lead")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    expect(page.get_by_role("link", name="Alpha alpha")).to_be_visible()
    expect(page.get_by_role("link", name="1 pending")).to_have_attribute("href", INBOX)


def test_filter_form_shows_only_matching_rows_and_keeps_the_filter_in_the_url(page, signed_in, submit):
    scope_alice = submit("scope-alice", type="scope", agent="Alice")
    scope_bob = submit("scope-bob", type="scope", agent="Bob")
    technical = submit("technical-alice", type="technical", agent="Alice")
    page.goto(INBOX)
    expect(page.locator("table.entries tbody tr.entry-row")).to_have_count(3)

    page.get_by_label("Type").select_option("scope")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"[?&]type=scope(&|$)"))
    expect(page.locator("table.entries tbody tr.entry-row")).to_have_count(2)
    expect(row(page, technical)).to_have_count(0)

    page.get_by_label("Agent").select_option("Bob")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"[?&]agent=Bob(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]type=scope(&|$)"))
    expect(page.locator("table.entries tbody tr.entry-row")).to_have_count(1)
    expect(row(page, scope_bob)).to_be_visible()
    expect(row(page, scope_alice)).to_have_count(0)
    # The form shows the filter it applied, so the next change builds on it.
    expect(page.get_by_label("Type")).to_have_value("scope")
    expect(page.get_by_label("Agent")).to_have_value("Bob")


@BOTH_SERVERS
def test_merge_and_reject_happen_in_place_without_a_reload(page, signed_in, submit, console):
    to_merge = submit("use-postgres", type="architectural", title="Use PostgreSQL")
    to_reject = submit("use-redis", type="technical", title="Use Redis")
    submit("keep-waiting", type="learning", title="Keep waiting")
    page.goto(INBOX)
    expect(page.locator("#nav-pending")).to_have_text("3")
    page.evaluate("window.__marker = 1")

    row(page, to_merge).get_by_role("button", name="Merge Use PostgreSQL").click()
    expect(row(page, to_merge)).to_contain_text("merged")
    expect(row(page, to_merge)).to_contain_text("by lead")
    # The decided row stays in place: no Merge any more, an Undo instead.
    expect(row(page, to_merge).get_by_role("button", name="Merge Use PostgreSQL")).to_have_count(0)
    expect(row(page, to_merge).get_by_role("button", name="Undo Use PostgreSQL")).to_be_visible()
    expect(page.locator("#nav-pending")).to_have_text("2")
    expect(page.locator("#inbox-counts")).to_contain_text("2 pending")

    row(page, to_reject).get_by_text("Reject…").click()
    page.get_by_label("Why reject Use Redis?").fill("Redis is one more moving part")
    row(page, to_reject).get_by_role("button", name="Reject Use Redis", exact=True).click()
    expect(row(page, to_reject)).to_contain_text("rejected")
    expect(page.locator("#nav-pending")).to_have_text("1")
    expect(page.locator("#inbox-counts")).to_contain_text("1 pending")
    expect(page.locator("#inbox-counts")).to_contain_text("1 merged")
    expect(page.locator("#inbox-counts")).to_contain_text("1 rejected")
    # A row's reason is its own: the bulk bar's field was never involved.
    expect(page.get_by_label("Reason", exact=True)).to_have_value("")

    assert page.evaluate("window.__marker") == 1, "the page was reloaded"
    to_merge.refresh_from_db()
    to_reject.refresh_from_db()
    assert to_merge.status == EntryStatus.MERGED
    assert to_merge.decision is not None
    assert to_reject.status == EntryStatus.REJECTED
    assert to_reject.reason == "Redis is one more moving part"
    assert to_reject.reviewed_by == "lead"
    assert [line for line in console if line.startswith(("error", "pageerror"))] == []


@BOTH_SERVERS
def test_bulk_reject_rejects_the_selected_entries_only(page, signed_in, submit):
    first = submit("first", title="First")
    second = submit("second", title="Second")
    third = submit("third", title="Third")
    page.goto(INBOX)
    page.evaluate("window.__marker = 1")

    page.get_by_role("checkbox", name="Select First").check()
    page.get_by_role("checkbox", name="Select Second").check()
    page.get_by_label("Reason").fill("duplicates")
    page.get_by_role("button", name="Reject selected").click()

    expect(page.locator("#toast")).to_contain_text(f"Rejected 2 entries: #{first.pk}, #{second.pk}.")
    # The rejected rows stay in place, decided, as a single action leaves its row; the third is pending.
    expect(row(page, first)).to_contain_text("rejected")
    expect(row(page, second)).to_contain_text("rejected")
    expect(row(page, third).get_by_role("button", name="Merge Third")).to_be_visible()
    expect(page.locator("#nav-pending")).to_have_text("1")
    expect(page.locator("#inbox-counts")).to_contain_text("2 rejected")
    assert page.evaluate("window.__marker") == 1, "the page was reloaded"

    statuses = dict(InboxEntry.objects.values_list("slug", "status"))
    assert statuses == {"first": "rejected", "second": "rejected", "third": "pending"}
    assert set(InboxEntry.objects.filter(status="rejected").values_list("reason", flat=True)) == {
        "duplicates"
    }

    page.get_by_label("Status").select_option("rejected")
    page.get_by_role("button", name="Filter").click()
    expect(row(page, first)).to_contain_text("rejected")
    expect(row(page, second)).to_contain_text("rejected")
    expect(row(page, third)).to_have_count(0)


def test_supersede_by_a_new_decision_and_follow_the_chain_both_ways(page, signed_in, project):
    old = services.decision_create(
        project=project,
        agent_name="lead",
        type="architectural",
        title="Sessions live in Redis",
        content="Redis holds sessions.",
        by="lead",
    )
    page.goto(f"/p/alpha/decisions/{old.pk}/")
    page.get_by_text("Supersede", exact=True).click()
    replacement = page.locator("#supersede-new")
    replacement.get_by_label("Title").fill("Sessions live in PostgreSQL")
    replacement.get_by_label("Content").fill("PostgreSQL holds sessions; one engine.")
    replacement.get_by_label("Rationale").fill("Fewer moving parts.")
    replacement.get_by_role("button", name="Record the replacement").click()

    new = Decision.objects.get(title="Sessions live in PostgreSQL")
    expect(page).to_have_url(re.compile(rf"/p/alpha/decisions/{new.pk}/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Sessions live in PostgreSQL")
    expect(page.locator("#messages")).to_contain_text("Superseded")
    old.refresh_from_db()
    assert old.status == DecisionStatus.SUPERSEDED
    assert old.superseded_by_id == new.pk
    assert new.type == "architectural"

    chain = page.locator("section.chain")
    expect(chain.locator("[aria-current]")).to_contain_text("Sessions live in PostgreSQL")
    chain.get_by_role("link", name="Sessions live in Redis").click()
    expect(page).to_have_url(re.compile(rf"/p/alpha/decisions/{old.pk}/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Sessions live in Redis")
    expect(page.locator(".meta .status-badge")).to_have_text("superseded")
    # A superseded decision can no longer be superseded or archived.
    expect(page.get_by_text("Supersede", exact=True)).to_have_count(0)

    page.locator("section.chain").get_by_role("link", name="Sessions live in PostgreSQL").click()
    expect(page).to_have_url(re.compile(rf"/p/alpha/decisions/{new.pk}/$"))
    expect(page.locator(".meta .status-badge")).to_have_text("active")


def test_an_htmx_action_after_the_login_expired_opens_the_login_page(page, signed_in, submit):
    entry = submit("late", title="Late")
    page.goto(INBOX + "?type=technical")
    signed_in.clear_cookies(name=settings.SESSION_COOKIE_NAME)
    row(page, entry).get_by_role("button", name="Merge Late").click()

    expect(page).to_have_url(re.compile(r"/login/\?next=/p/alpha/inbox/%3Ftype%3Dtechnical$"))
    expect(page.locator("main")).to_have_count(1)
    entry.refresh_from_db()
    assert entry.status == EntryStatus.PENDING

    page.get_by_label("User name").fill("lead")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/p/alpha/inbox/\?type=technical$"))
    expect(row(page, entry).get_by_role("button", name="Merge Late")).to_be_visible()


def test_a_refused_htmx_action_says_so_and_changes_nothing(page, signed_in, submit, coordinator_user):
    entry = submit("contested", title="Contested")
    page.goto(INBOX)
    # The reviewer's role is lowered while the page is open: the next click is refused with 403.
    Membership.objects.filter(user=coordinator_user).update(role="viewer")
    row(page, entry).get_by_role("button", name="Merge Contested").click()

    expect(page.locator("#messages [role=alert]")).to_contain_text("Refused (403)")
    expect(row(page, entry).get_by_role("button", name="Merge Contested")).to_be_visible()
    entry.refresh_from_db()
    assert entry.status == EntryStatus.PENDING


@pytest.mark.parametrize("context_options", [{"bypass_csp": True}], ids=["csp-off"])
def test_markup_in_a_title_is_shown_as_text_and_never_runs(page, signed_in, submit):
    """Escaping alone must stop it: the context ignores the CSP, which would otherwise block the payload."""
    entry = submit("xss", title=XSS_TITLE, content=f"Content {XSS_TITLE}")

    page.goto(INBOX)
    expect(row(page, entry).locator("td.proposal strong")).to_have_text(XSS_TITLE)
    expect(row(page, entry).locator("td.proposal .excerpt")).to_contain_text(XSS_TITLE)
    expect(row(page, entry).locator("img, script")).to_have_count(0)
    assert page.evaluate("typeof window.__xss") == "undefined"

    page.goto(f"/p/alpha/inbox/{entry.pk}/")
    expect(page.get_by_role("heading", level=1)).to_have_text(XSS_TITLE)
    expect(page.locator("article.entry .text").first).to_have_text(f"Content {XSS_TITLE}")
    expect(page.locator("article.entry img, article.entry script")).to_have_count(0)
    expect(page).to_have_title(f"{XSS_TITLE} · Inbox · Canon")
    assert page.evaluate("typeof window.__xss") == "undefined"


@BOTH_SERVERS
def test_inbox_and_its_htmx_swaps_run_under_the_csp_without_violations(page, signed_in, submit, console):
    entry = submit("csp-check", title="Check the policy")
    response = page.goto(INBOX)
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    expect(page.locator("#nav-pending")).to_have_text("1")
    assert page.evaluate("typeof window.htmx") == "object"

    row(page, entry).get_by_role("button", name="Merge Check the policy").click()
    expect(row(page, entry)).to_contain_text("merged")
    expect(page.locator("#nav-pending")).to_have_text("0")
    assert csp_problems(page, console) == []
