"""Triage at speed on the inbox, in Chromium: the whole flow by keyboard only, each row's own reason,
decided rows kept in place with the toast's Undo, and how much of the queue fits on a screen
(docs/dashboard.md, "Inbox")."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from ledger.models import EntryStatus, InboxEntry

pytestmark = pytest.mark.browser

INBOX = "/p/alpha/inbox/"
NO_JS = {"java_script_enabled": False}
WIDE = {"viewport": {"width": 1366, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def focused(page: Page) -> str:
    """The id of the element that has focus (empty for <body>)."""
    return str(page.evaluate("document.activeElement ? document.activeElement.id : ''"))


def status(entry: InboxEntry) -> tuple[str, str]:
    entry.refresh_from_db()
    return entry.status, entry.reason


@pytest.fixture
def queue(submit):
    """Ten pending proposals: two boundary ones (listed first, not competing with each other), then
    eight others, oldest first."""
    boundary = [submit(f"boundary-{i}", type="scope", title=f"Boundary {i}") for i in ("alpha", "beta")]
    others = [submit(f"other-{i}", title=f"Other idea {i}") for i in range(8)]
    return boundary + others


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_the_whole_triage_flow_by_keyboard_only(page, signed_in, queue):
    first, second, third, fourth = queue[:4]
    live = page.locator("#toast")
    page.goto(INBOX)
    expect(live).to_have_attribute("role", "status")
    expect(live).to_have_attribute("aria-live", "polite")
    page.evaluate("window.__marker = 1")

    # j and k move between rows; the first j goes to the first row.
    page.keyboard.press("j")
    assert focused(page) == f"entry-{first.pk}"
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert focused(page) == f"entry-{third.pk}"
    page.keyboard.press("k")
    page.keyboard.press("k")
    assert focused(page) == f"entry-{first.pk}"
    # The focused row shows its excerpt; the others keep to one line.
    expect(page.locator(f"#entry-{first.pk} .excerpt")).to_be_visible()
    expect(page.locator(f"#entry-{third.pk} .excerpt")).to_be_hidden()

    # x ticks the row; m merges it, focus moves on to the next undecided row and the toast says so.
    page.keyboard.press("x")
    expect(page.get_by_role("checkbox", name="Select Boundary alpha")).to_be_checked()
    page.keyboard.press("m")
    expect(live).to_contain_text(f"Merged #{first.pk} Boundary alpha.")
    expect(page.locator(f"#entry-{first.pk}")).to_contain_text("merged")
    page.wait_for_function(f"document.activeElement.id === 'entry-{second.pk}'")
    assert status(first)[0] == EntryStatus.MERGED

    # r opens the row's own reason field; Enter rejects with that reason.
    page.keyboard.press("r")
    reason = page.get_by_label("Why reject Boundary beta?")
    expect(reason).to_be_focused()
    page.keyboard.type("Covered by rule 0")
    page.keyboard.press("Enter")
    expect(live).to_contain_text(f"Rejected #{second.pk} Boundary beta.")
    page.wait_for_function(f"document.activeElement.id === 'entry-{third.pk}'")
    assert status(second) == (EntryStatus.REJECTED, "Covered by rule 0")

    # Escape in a reason field cancels: the row keeps focus and stays pending.
    page.keyboard.press("r")
    page.keyboard.type("never mind")
    page.keyboard.press("Escape")
    assert focused(page) == f"entry-{third.pk}"
    expect(page.locator(f"#entry-{third.pk} details.reject-box")).not_to_have_attribute("open", "")
    assert status(third)[0] == EntryStatus.PENDING

    # z undoes the last action (the rejection): the row is pending again and has focus.
    page.keyboard.press("z")
    expect(live).to_contain_text(f"Undone: #{second.pk} Boundary beta is pending again.")
    page.wait_for_function(f"document.activeElement.id === 'entry-{second.pk}'")
    assert status(second)[0] == EntryStatus.PENDING

    # ? lists the keys; Escape closes the list.
    page.keyboard.press("?")
    keys = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(keys).to_be_visible()
    expect(keys).to_contain_text("undo the last merge or rejection")
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()

    assert page.evaluate("window.__marker") == 1, "the page was reloaded"
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert focused(page) == f"entry-{fourth.pk}"
    # e opens the focused proposal's page.
    page.keyboard.press("e")
    expect(page).to_have_url(re.compile(rf"/p/alpha/inbox/{fourth.pk}/"))
    assert status(fourth)[0] == EntryStatus.PENDING
    assert status(third)[0] == EntryStatus.PENDING


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_a_title_clicked_below_an_open_excerpt_opens_its_proposal(page, signed_in, queue):
    """The first row's excerpt is open; pressing on the third row's title must not fold it before the
    click lands, or the title would move away from under the pointer."""
    first, third = queue[0], queue[2]
    page.goto(INBOX)
    page.keyboard.press("j")
    expect(page.locator(f"#entry-{first.pk} .excerpt")).to_be_visible()
    page.locator(f"#entry-{third.pk} td.proposal a").click()
    expect(page).to_have_url(re.compile(rf"/p/alpha/inbox/{third.pk}/"))


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_keys_typed_into_a_field_are_text(page, signed_in, queue):
    page.goto(INBOX)
    page.get_by_label("Reason").fill("")
    page.get_by_label("Reason").press_sequentially("jmx")
    expect(page.get_by_label("Reason")).to_have_value("jmx")
    assert all(status(entry)[0] == EntryStatus.PENDING for entry in queue)


@pytest.mark.parametrize("context_options", [{}, NO_JS], ids=["js", "no-js"])
def test_a_rows_reject_takes_its_own_reason_never_the_bulk_bars(page, signed_in, submit):
    entry = submit("use-redis", title="Use Redis")
    page.goto(INBOX)
    page.get_by_label("Reason").fill("meant for the selected ones")
    page.get_by_text("Reject…").click()
    page.get_by_label("Why reject Use Redis?").fill("one engine is enough")
    page.get_by_role("button", name="Reject Use Redis", exact=True).click()
    expect(page.locator("#toast")).to_contain_text(f"Rejected #{entry.pk} Use Redis.")
    assert status(entry) == (EntryStatus.REJECTED, "one engine is enough")


@pytest.mark.parametrize("context_options", [{}, NO_JS], ids=["js", "no-js"])
def test_single_and_bulk_actions_both_leave_a_toast_with_undo(page, signed_in, submit, context_options):
    single = submit("single", title="Single one")
    a, b = submit("bulk-a", title="Bulk A"), submit("bulk-b", title="Bulk B")
    submit("waiting", title="Still waiting")
    page.goto(INBOX)
    page.evaluate("window.__marker = 1")

    page.get_by_role("button", name="Merge Single one").click()
    expect(page.locator("#toast")).to_contain_text(f"Merged #{single.pk} Single one.")
    expect(page.locator("#toast").get_by_role("button", name="Undo", exact=True)).to_be_visible()

    page.get_by_role("checkbox", name="Select Bulk A").check()
    page.get_by_role("checkbox", name="Select Bulk B").check()
    page.get_by_role("button", name="Merge selected").click()
    expect(page.locator("#toast")).to_contain_text(f"Merged 2 entries: #{a.pk}, #{b.pk}.")
    if context_options:
        # Without JavaScript the pending list is loaded again: decided rows have left it.
        expect(page.locator(f"#entry-{a.pk}")).to_have_count(0)
    else:
        # With htmx, decided rows stay where they were, single and bulk alike, each with its Undo.
        for entry in (single, a, b):
            expect(page.locator(f"#entry-{entry.pk}")).to_contain_text("merged")
        expect(page.get_by_role("button", name="Undo Bulk A")).to_be_visible()

    page.locator("#toast").get_by_role("button", name="Undo", exact=True).click()
    expect(page.locator("#toast")).to_contain_text("Undone: 2 entries are pending again")
    assert status(a)[0] == status(b)[0] == EntryStatus.PENDING
    assert status(single)[0] == EntryStatus.MERGED
    expect(page.get_by_role("button", name="Merge Bulk A")).to_be_visible()
    # With JavaScript every step was swapped in place; without it, each was a page of its own.
    assert page.evaluate("window.__marker") == (None if context_options else 1)


@pytest.mark.parametrize("context_options", [PHONE], ids=["phone"])
def test_on_a_phone_the_first_proposal_is_on_the_first_screen(page, signed_in, submit):
    for i in range(54):
        submit(f"proposal-{i}", type="scope" if i % 6 == 0 else "technical", title=f"Proposal {i}")
    page.goto(INBOX)
    # The filters are folded behind their summary; the first proposal's title is in view unscrolled.
    expect(page.get_by_text("Filters", exact=True)).to_be_visible()
    expect(page.get_by_label("Type")).to_be_hidden()
    title = page.locator("#inbox-list tr.entry-row").first.locator("td.proposal a")
    box = title.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844
    assert page.evaluate("window.scrollY") == 0
    page.get_by_text("Filters", exact=True).click()
    expect(page.get_by_label("Type")).to_be_visible()


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_compact_rows_fit_twenty_on_a_laptop_screen_and_the_choice_is_remembered(page, signed_in, submit):
    for i in range(54):
        submit(f"proposal-{i}", type="scope" if i % 6 == 0 else "technical", title=f"Proposal {i}")
    page.goto(INBOX)
    expect(page.get_by_label("Type")).to_be_visible()  # a wide screen shows the filters open
    page.get_by_role("button", name="Compact").click()
    expect(page.get_by_role("button", name="Compact")).to_have_attribute("aria-pressed", "true")
    page.goto(INBOX)  # remembered, not only for this page
    expect(page.locator("#inbox-list .triage")).to_have_class(re.compile(r"\bdensity-compact\b"))
    in_view = page.evaluate(
        "[...document.querySelectorAll('#inbox-list tr.entry-row')]"
        ".filter(row => row.getBoundingClientRect().bottom <= window.innerHeight).length"
    )
    assert in_view >= 20
