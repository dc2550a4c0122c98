"""Keyboard triage as people know it from mail and issue trackers (docs/dashboard.md, "Keys"): `x` then
an action applies to the ticked rows, `*a` / `*n` tick all or none, Enter or `o` opens a row, the entry's
page has the same keys, a list refills as its rows are decided in place, and a refusal or a result is
said once, in words."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from ledger import services
from ledger.models import EntryStatus, InboxEntry

from .test_accessibility import violations

pytestmark = pytest.mark.browser

INBOX = "/p/alpha/inbox/"
WIDE = {"viewport": {"width": 1366, "height": 900}}
NO_JS = {**WIDE, "java_script_enabled": False}


def arrived(page: Page, url: str) -> None:
    """The page went to `url` (a pattern) and is loaded: its keys listen."""
    expect(page).to_have_url(re.compile(url))
    page.wait_for_load_state("domcontentloaded")


def has_focus(page: Page, element_id: str) -> None:
    expect(page.locator(f"#{element_id}")).to_be_focused()


def statuses(*entries: InboxEntry) -> list[str]:
    for entry in entries:
        entry.refresh_from_db()
    return [entry.status for entry in entries]


def press(page: Page, *keys: str) -> None:
    for key in keys:
        page.keyboard.press(key)


@pytest.fixture
def queue(submit):
    """Six pending proposals, none a boundary, none flagged, oldest first."""
    return [submit(f"idea-{i}", title=f"Idea {i}") for i in range(6)]


# --- the bulk path ----------------------------------------------------------------------------------


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_m_merges_every_ticked_row_not_the_focused_one_then_focus_stays_on_a_pending_row(
    page, signed_in, queue
):
    first, second, third, fourth = queue[:4]
    page.goto(INBOX)
    press(page, "j", "x", "j", "j", "x", "k")  # first and third ticked, focus on the second
    has_focus(page, f"entry-{second.pk}")

    page.keyboard.press("m")
    expect(page.locator("#toast")).to_contain_text(f"Merged 2 entries: #{first.pk}, #{third.pk}.")
    assert statuses(first, second, third) == [EntryStatus.MERGED, EntryStatus.PENDING, EntryStatus.MERGED]
    # The focused row was not ticked and is still pending: focus stays on it.
    has_focus(page, f"entry-{second.pk}")

    # Nothing is ticked any more: m acts on the focused row, and focus moves past the decided ones.
    page.keyboard.press("m")
    expect(page.locator("#toast")).to_contain_text(f"Merged #{second.pk} Idea 1.")
    has_focus(page, f"entry-{fourth.pk}")


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_star_a_ticks_every_row_star_n_none_and_r_rejects_the_ticked_with_one_reason(page, signed_in, queue):
    page.goto(INBOX)
    boxes = page.locator("#inbox-list tr.entry-row input[name=ids]")
    press(page, "j", "*", "a")
    for i in range(6):
        expect(boxes.nth(i)).to_be_checked()
    press(page, "*", "n")
    for i in range(6):
        expect(boxes.nth(i)).not_to_be_checked()

    press(page, "x", "j", "x")  # the first two
    page.keyboard.press("r")
    reason = page.get_by_label("Reason", exact=True)
    expect(reason).to_be_focused()
    page.keyboard.type("both covered by the style guide")
    page.keyboard.press("Enter")
    expect(page.locator("#toast")).to_contain_text(f"Rejected 2 entries: #{queue[0].pk}, #{queue[1].pk}.")
    for entry in queue[:2]:
        entry.refresh_from_db()
        assert (entry.status, entry.reason) == (EntryStatus.REJECTED, "both covered by the style guide")
    assert statuses(*queue[2:]) == [EntryStatus.PENDING] * 4
    # Focus left the bulk bar's reason for the next pending row; keys work again.
    has_focus(page, f"entry-{queue[2].pk}")

    # Escape in the bulk reason gives the keys back without rejecting anything.
    press(page, "x", "r")
    expect(reason).to_be_focused()
    page.keyboard.type("never mind")
    page.keyboard.press("Escape")
    has_focus(page, f"entry-{queue[2].pk}")
    assert statuses(queue[2]) == [EntryStatus.PENDING]


# --- opening, and the entry's page ------------------------------------------------------------------


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_enter_and_o_open_the_focused_entry_and_u_and_escape_come_back_to_the_filtered_list(
    page, signed_in, queue
):
    page.goto(INBOX + "?agent=Alice")
    press(page, "j", "j", "Enter")
    arrived(page, rf"/inbox/{queue[1].pk}/\?agent=Alice$")
    page.keyboard.press("u")
    arrived(page, r"/p/alpha/inbox/\?agent=Alice(#.*)?$")
    # Back on the list, the row just read is the current one: j goes on from there.
    has_focus(page, f"entry-{queue[1].pk}")
    press(page, "j", "o")
    arrived(page, rf"/inbox/{queue[2].pk}/\?agent=Alice$")
    page.keyboard.press("Escape")
    arrived(page, r"/p/alpha/inbox/\?agent=Alice(#.*)?$")


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_the_entry_page_walks_edits_merges_undoes_and_rejects_by_keyboard(page, signed_in, queue):
    first, second, third = queue[:3]
    page.goto(f"{INBOX}{first.pk}/?status=pending")
    # j and k walk the filtered inbox.
    page.keyboard.press("j")
    arrived(page, rf"/inbox/{second.pk}/\?status=pending$")
    page.keyboard.press("k")
    arrived(page, rf"/inbox/{first.pk}/\?status=pending$")

    # e opens the edit form on its title; keys typed there are text.
    page.keyboard.press("e")
    title = page.get_by_label("Title")
    expect(title).to_be_focused()
    title.fill("")
    page.keyboard.type("Idea zero, jk edited")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Idea zero, jk edited")
    arrived(page, rf"/inbox/{first.pk}/\?status=pending$")

    # m merges and goes on to the next entry; the toast names what was merged, by its title.
    page.keyboard.press("m")
    arrived(page, rf"/inbox/{second.pk}/\?status=pending$")
    toast = page.locator("#toast")
    expect(toast).to_contain_text(f"Merged #{first.pk} Idea zero, jk edited.")
    expect(page.locator("#messages")).not_to_contain_text("merged")
    assert statuses(first) == [EntryStatus.MERGED]

    # z undoes it, on this page: the entry is pending again and shown again.
    page.keyboard.press("z")
    arrived(page, rf"/inbox/{first.pk}/\?status=pending$")
    expect(toast).to_contain_text(f"Undone: #{first.pk} Idea zero, jk edited is pending again.")
    assert statuses(first) == [EntryStatus.PENDING]

    # r focuses the reason; Enter rejects with it and goes on.
    page.goto(f"{INBOX}{third.pk}/?status=pending")
    page.keyboard.press("r")
    reason = page.get_by_label("Reason")
    expect(reason).to_be_focused()
    page.keyboard.type("jumps ahead")
    page.keyboard.press("Enter")
    expect(toast).to_contain_text(f"Rejected #{third.pk} Idea 2.")
    third.refresh_from_db()
    assert (third.status, third.reason) == (EntryStatus.REJECTED, "jumps ahead")

    # ? lists the keys of this page.
    page.keyboard.press("?")
    keys = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(keys).to_be_visible()
    expect(keys).to_contain_text("undo")
    assert violations(page) == []
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_e_on_a_row_opens_its_page_at_the_edit_form(page, signed_in, queue):
    page.goto(INBOX)
    press(page, "j", "j", "e")
    arrived(page, rf"/inbox/{queue[1].pk}/")
    expect(page.get_by_label("Title")).to_be_focused()


# --- the list refills -------------------------------------------------------------------------------


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_decided_rows_are_followed_by_the_next_pending_ones_until_the_empty_state(page, signed_in, submit):
    entries = [submit(f"proposal-{i:02d}", title=f"Proposal {i:02d}") for i in range(58)]
    page.goto(INBOX)
    pages = page.locator("#inbox-list nav.pagination")
    rows = page.locator("#inbox-list tr.entry-row")
    pending = page.locator("#inbox-list tr.entry-row.status-pending")
    expect(pages).to_contain_text("Page 1 of 2 · 58 in all")
    expect(rows).to_have_count(50)

    # One decided: the 51st slides in, and the count stays true.
    press(page, "j", "m")
    expect(pages).to_contain_text("Page 1 of 2 · 57 in all")
    expect(page.locator(f"#entry-{entries[50].pk}")).to_be_visible()
    expect(pending).to_have_count(50)

    # A whole page decided: the last seven slide in, focus on the first of them.
    press(page, "*", "a", "m")
    expect(page.locator("#toast")).to_contain_text("Merged 50 entries")
    expect(pending).to_have_count(7)
    expect(pages).to_have_count(0)  # one page left: no page links
    has_focus(page, f"entry-{entries[51].pk}")

    # None left: the empty state says so, without reloading.
    press(page, "*", "a", "m")
    expect(page.locator("#inbox-list .empty")).to_contain_text("The inbox is empty")
    expect(pending).to_have_count(0)
    assert InboxEntry.objects.filter(status=EntryStatus.PENDING).count() == 0
    # The toast's Undo still works from there: z puts the last seven back.
    page.keyboard.press("z")
    expect(pending).to_have_count(7)
    expect(page.locator("#inbox-list .empty")).to_be_hidden()


# --- refusals and results, said once ---------------------------------------------------------------


@pytest.mark.parametrize("context_options", [WIDE], ids=["wide"])
def test_a_stale_rows_merge_says_who_changed_it_and_when_in_words(page, signed_in, project, queue):
    edited, resubmitted = queue[0], queue[1]
    page.goto(INBOX)
    services.entry_edit(project=project, entry_id=edited.pk, by="mallory", content="Idea 0, reworded.")
    services.entry_submit(
        project=project,
        agent_name="Alice",
        slug="idea-1",
        type="technical",
        title="Idea 1",
        content="Idea 1, sent again.",
    )

    press(page, "j", "m")
    row = page.locator(f"#entry-{edited.pk}")
    expect(row.locator(".message.error")).to_contain_text(
        re.compile(r"changed since you read it: mallory edited it (just now|\d+ \w+ ago)")
    )
    expect(row.locator(".message.error")).not_to_contain_text("idea-0")  # the slug
    expect(row.locator(".message.error")).not_to_contain_text(re.compile(r"\d{4}-\d\d-\d\dT"))
    has_focus(page, f"entry-{edited.pk}")

    # In bulk, the refused row says so in place; the banner does not repeat it, nor the merged ones.
    press(page, "x", "j", "x", "j", "x", "m")
    expect(page.locator("#toast")).to_contain_text(f"Merged 2 entries: #{edited.pk}, #{queue[2].pk}.")
    expect(page.locator(f"#entry-{resubmitted.pk} .message.error")).to_contain_text(
        re.compile(r"changed since you read it: Alice, its agent, sent it again (just now|\d+ \w+ ago)")
    )
    expect(page.locator("#messages")).to_have_text("")


@pytest.mark.parametrize("context_options", [NO_JS], ids=["no-js"])
def test_without_javascript_a_stale_merge_goes_to_the_entry_and_says_who_and_when(
    page, signed_in, project, queue
):
    stale = queue[0]
    page.goto(INBOX + "?agent=Alice")
    services.entry_edit(project=project, entry_id=stale.pk, by="mallory", content="Idea 0, reworded.")
    page.get_by_role("button", name="Merge Idea 0").click()
    arrived(page, rf"/inbox/{stale.pk}/\?agent=Alice$")
    message = page.locator("#messages")
    expect(message).to_contain_text(re.compile(r"mallory edited it (just now|\d+ \w+ ago)"))
    expect(message).not_to_contain_text("'idea-0'")
    expect(page.locator(".text").first).to_contain_text("Idea 0, reworded.")

    # A bulk result is said once: in the toast, not again in the banner.
    page.goto(INBOX)
    for name in ("Select Idea 1", "Select Idea 2"):
        page.get_by_role("checkbox", name=name).press("Space")
    page.get_by_role("button", name="Merge selected").press("Enter")
    expect(page.locator("#toast")).to_contain_text(f"Merged 2 entries: #{queue[1].pk}, #{queue[2].pk}.")
    expect(page.locator("#messages")).to_have_text("")
