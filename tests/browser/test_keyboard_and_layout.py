"""The dashboard with the keyboard, without JavaScript, and in a narrow window (docs/dashboard.md)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from ledger import context, services
from ledger.models import AgentMemory, EntryStatus, InboxEntry, Membership

from .conftest import PASSWORD

pytestmark = pytest.mark.browser

INBOX = "/p/alpha/inbox/"
NO_JS = {"java_script_enabled": False}
LONG_WORD = "x" * 300


def overflow(page: Page) -> int:
    """How far the page scrolls sideways (0 when nothing sticks out)."""
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


@pytest.mark.parametrize("context_options", [{}, NO_JS], ids=["js", "no-js"])
def test_enter_in_the_reason_field_rejects_the_selected_entries_never_merges(page, signed_in, submit):
    first = submit("first", title="First")
    second = submit("second", title="Second")
    submit("third", title="Third")
    page.goto(INBOX)

    page.get_by_role("checkbox", name="Select First").check()
    page.get_by_role("checkbox", name="Select Second").check()
    page.get_by_label("Reason").fill("duplicates")
    page.get_by_label("Reason").press("Enter")

    expect(page.locator("#toast")).to_contain_text(f"Rejected 2 entries: #{first.pk}, #{second.pk}.")
    expect(page).to_have_url(re.compile(r"/p/alpha/inbox/$"))
    for entry in (first, second):
        entry.refresh_from_db()
        assert (entry.status, entry.reason) == (EntryStatus.REJECTED, "duplicates")
    assert not InboxEntry.objects.filter(status=EntryStatus.MERGED).exists()


@pytest.mark.parametrize("context_options", [NO_JS], ids=["no-js"])
def test_without_javascript_row_actions_come_back_to_the_filtered_list_with_the_result(
    page, signed_in, submit
):
    to_merge = submit("use-postgres", type="scope", title="Use PostgreSQL")
    to_reject = submit("use-redis", type="scope", title="Use Redis")
    page.goto(INBOX + "?type=scope")

    page.get_by_role("button", name="Merge Use PostgreSQL").click()
    expect(page).to_have_url(re.compile(r"/p/alpha/inbox/\?type=scope$"))
    expect(page.locator("#toast")).to_contain_text(f"Merged #{to_merge.pk} Use PostgreSQL.")
    expect(page.locator("#nav-pending")).to_have_text("1")

    page.get_by_text("Reject…").click()
    page.get_by_label("Why reject Use Redis?").fill("one engine is enough")
    page.get_by_role("button", name="Reject Use Redis", exact=True).click()
    expect(page).to_have_url(re.compile(r"/p/alpha/inbox/\?type=scope$"))
    expect(page.locator("#toast")).to_contain_text(f"Rejected #{to_reject.pk} Use Redis.")
    to_reject.refresh_from_db()
    assert (to_reject.status, to_reject.reason) == (EntryStatus.REJECTED, "one engine is enough")


@pytest.mark.parametrize("context_options", [NO_JS], ids=["no-js"])
def test_without_javascript_memory_edit_and_archive_come_back_with_a_message(page, signed_in, project):
    memory = services.memory_record(
        project=project, agent_name="Bob", type="learning", content="Webhooks repeat."
    )
    page.goto("/p/alpha/memory/?agent=bob")
    expect(page.get_by_role("heading", level=1)).to_have_text("Memory of Bob")

    row = page.locator(f"#memory-{memory.pk}")
    row.get_by_label("Importance").select_option("high")
    row.get_by_label("Tags").fill("payments, webhooks")
    row.get_by_label("Tags").press("Enter")
    expect(page).to_have_url(re.compile(r"/p/alpha/memory/\?agent=bob$"))
    expect(page.locator("#messages")).to_contain_text(f"Memory {memory.pk} saved.")
    memory.refresh_from_db()
    assert (memory.importance, memory.tags) == ("high", ["payments", "webhooks"])

    page.get_by_role("button", name="Archive").click()
    expect(page.locator("#messages")).to_contain_text(f"Memory {memory.pk} archived.")
    assert AgentMemory.objects.get(pk=memory.pk).status == "archived"


@pytest.mark.parametrize(
    "context_options",
    [{"viewport": {"width": 1280, "height": 800}}, {"viewport": {"width": 420, "height": 800}}],
    ids=["wide", "narrow"],
)
def test_a_300_character_word_never_makes_the_page_scroll_sideways(page, signed_in, project, submit):
    entry = submit("long-word", title=LONG_WORD, content=f"Body {LONG_WORD}", rationale=LONG_WORD)
    decision = services.decision_create(
        project=project,
        agent_name="Dave",
        type="technical",
        title=f"Decision {LONG_WORD[:280]}",
        content=LONG_WORD,
        by="lead",
    )
    services.memory_record(project=project, agent_name="Dave", type="learning", content=LONG_WORD)
    services.session_start(
        project=project, session_id="s-" + "y" * 95, focus_area=LONG_WORD, summary=LONG_WORD
    )
    compiled = context.compile(project, "Dave", run_id="run-" + "z" * 150)

    for path in (
        INBOX,
        f"{INBOX}{entry.pk}/",
        "/p/alpha/decisions/",
        f"/p/alpha/decisions/{decision.pk}/",
        "/p/alpha/memory/",
        "/p/alpha/sessions/",
        "/p/alpha/compilations/",
        f"/p/alpha/compilations/{compiled.compilation_id}/",
    ):
        page.goto(path)
        assert overflow(page) == 0, path


@pytest.mark.parametrize("context_options", [{"viewport": {"width": 420, "height": 800}}], ids=["narrow"])
def test_a_narrow_window_keeps_the_navigation_in_rows_not_a_column(page, project, django_user_model):
    # A short name and role leave room for the sign-out beside the links: they must not shrink to a column.
    user = django_user_model.objects.create_user(username="ann", password=PASSWORD)
    Membership.objects.create(user=user, project=project, role="viewer")
    page.goto("/login/?next=/p/alpha/")
    page.get_by_label("User name").fill("ann")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Alpha")

    tops = page.evaluate(
        "[...document.querySelectorAll('.project-nav a')].map(a => a.getBoundingClientRect().top)"
    )
    assert len(tops) == 8 and len({round(top) for top in tops}) <= 3
    assert overflow(page) == 0


@pytest.mark.parametrize(("context_options", "shown"), [({}, True), (NO_JS, False)], ids=["js", "no-js"])
def test_select_all_is_offered_only_where_it_can_work(page, signed_in, submit, shown):
    submit("first", title="First")
    page.goto(INBOX)
    select_all = page.get_by_label("Select all on this page")
    if shown:
        expect(select_all).to_be_visible()
        select_all.check()
        expect(page.get_by_role("checkbox", name="Select First")).to_be_checked()
    else:
        expect(select_all).to_be_hidden()


def test_archiving_a_decision_asks_first(page, signed_in, project):
    decision = services.decision_create(
        project=project,
        agent_name="lead",
        type="scope",
        title="No billing in v1",
        content="Later.",
        by="lead",
    )
    page.goto(f"/p/alpha/decisions/{decision.pk}/")
    page.evaluate("window.__marker = 1")
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Archive this decision").click()
    assert asked and asked[0].startswith("Archive this decision?")
    assert page.evaluate("window.__marker") == 1, "the form was sent anyway"
    decision.refresh_from_db()
    assert decision.status == "active"

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Archive this decision").click()
    expect(page.locator("#messages")).to_contain_text("Archived.")
    expect(page.locator(".meta .status-badge")).to_have_text("archived")


def test_archiving_a_memory_in_place_asks_first(page, signed_in, project):
    memory = services.memory_record(
        project=project, agent_name="Bob", type="learning", content="Webhooks repeat."
    )
    page.goto("/p/alpha/memory/")
    row = page.locator(f"#memory-{memory.pk}")
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    row.get_by_role("button", name="Archive").click()
    assert asked and asked[0].startswith("Archive this memory?")
    expect(row.get_by_role("button", name="Archive")).to_be_visible()
    memory.refresh_from_db()
    assert memory.status == "active"

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Archive").click()
    expect(row).to_contain_text(f"Memory {memory.pk} archived.")
    memory.refresh_from_db()
    assert memory.status == "archived"


@pytest.mark.parametrize(
    ("context_options", "cell"),
    [
        ({"viewport": {"width": 1280, "height": 800}}, "{n}"),
        ({"viewport": {"width": 420, "height": 800}}, "{n} tokens"),
    ],
    ids=["wide", "narrow"],
)
def test_token_counts_say_their_unit_where_the_table_header_is_hidden(page, signed_in, project, cell):
    services.decision_create(
        project=project, agent_name="Dave", type="scope", title="Scope", content="v1.", by="l"
    )
    compiled = context.compile(project, "Dave", run_id="run-1")
    page.goto("/p/alpha/compilations/")
    tokens = page.locator("table.entries tbody td").nth(2)
    expect(tokens).to_have_text(cell.format(n=compiled.tokens), use_inner_text=True)
