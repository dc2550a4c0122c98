"""Squad's own file formats: decisions.md, agents' history.md, inbox files and front matter."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.mirror import squad
from ledger.mirror.squad import Block, Entry, FrontMatterError, Text
from tests.timing import fastest

FAST = settings(max_examples=200, deadline=None)

# --- fixtures: made-up teams in Squad's shapes --------------------------------------------------------

TEAM_LOG = """\
# Squad Decisions

## Active Decisions

### 2026-03-04T09:30:00Z: Keep tide readings in UTC
**By:** Marlow (Backend)
**Type:** Technical
**Status:** Active
**What:** Every reading is stored in UTC; the UI converts.
**Why:** Boats cross time zones mid-trip.

---

### 2026-03-01 PT — Juno: colour tokens for the harbour map 🌊

**Date:** 2026-03-01T16:45:00-08:00
**Author:** Juno (UI)
**Status:** Adopted

## Decision

| token | value |
|---|---|
| `sea` | `#0b3d5c` |
| `foam` | `#f2fbff` |

- panels
  - headers use `foam`
  - bodies use `sea`

## Why

Night mode was unreadable. שלום לצוות

---

### 2026-02-26: User directive
**By:** user (via Copilot)
**What:** Never deploy on a Friday.
**Why:** Two weekends lost.

---

### 2026-02-20: Release script layout
**By:** Kestrel
**Status:** Superseded by the 2026-03-04 decision

The script prints its plan first:

```text
---
### 2026-01-01: not a heading
# Decision: not one either
```

~~~
---
~~~

# Decision: Pin the charting library to a minor version
**Author:** Marlow
**Date:** 2026-02-18
**Status:** Proposed
## Context
Upgrades broke the legend twice.
## Rationale
Minor pins still get fixes.

---

## Adopt trunk-based releases
**Author:** Kestrel
**Status:** Accepted

Short-lived branches only.
"""


def parts_of(text: str) -> list[Text | Block]:
    return squad.parse_decisions(text)


def blocks_of(text: str) -> list[Block]:
    return [part for part in squad.parse_decisions(text) if isinstance(part, Block)]


def block_titled(title: str) -> Block:
    return next(block for block in blocks_of(TEAM_LOG) if block.title == title)


HISTORY = """\
# Project Context

- **Project:** Harbourmaster — berth booking for small marinas.
- **Stack:** Python, Django, HTMX.

## Core Context

- **My role:** Backend. I own the booking engine.
- **Hard rule:** bookings never overlap; the database enforces it.

## Recent Updates

📌 2026-03-02 — Booking API v3 frozen; mobile builds on it.
📌 2026-03-04 — Tide tables now cached for a day.

## Learnings

<!-- Append new learnings below. -->

**Locks need timeouts:**
A stuck payment held a berth lock for an hour; every lock now times out.

**Fixtures drift:**
Regenerate them from the schema, never by hand.

- Nested lists keep their shape:
  - first level
    - second level
  \t
  and a paragraph after a white line.
1. Numbered learnings count too.

### Older

```python
## Learnings
x = "not a section"

y = 2
```

---

## Patterns

- Prefer idempotent handlers. 🚤

## Notes

- this section is not typed
"""


def history_parts(text: str) -> list[Text | Entry]:
    return squad.parse_history(text)


def entries_of(text: str) -> list[Entry]:
    return [part for part in squad.parse_history(text) if isinstance(part, Entry)]


def joined(parts: list[Text | Block] | list[Text | Entry]) -> str:
    return "".join(part.text for part in parts)


# --- dates -------------------------------------------------------------------------------------------


def test_parse_date_reads_a_plain_day_as_utc_midnight():
    assert squad.parse_date("2026-03-02") == datetime(2026, 3, 2, tzinfo=UTC)


def test_parse_date_reads_a_z_timestamp_in_utc():
    assert squad.parse_date("2026-03-02T14:05:11Z") == datetime(2026, 3, 2, 14, 5, 11, tzinfo=UTC)


def test_parse_date_keeps_the_written_offset():
    when = squad.parse_date("2026-03-02T14:05:11-08:00")
    assert when is not None
    assert when.utcoffset() == timedelta(hours=-8)
    assert when == datetime(2026, 3, 2, 22, 5, 11, tzinfo=UTC)


def test_parse_date_reads_a_space_separated_time_as_utc():
    assert squad.parse_date("2026-03-02 14:05") == datetime(2026, 3, 2, 14, 5, tzinfo=UTC)


def test_parse_date_ignores_a_zone_word_without_a_time():
    assert squad.parse_date("2026-02-27 PT") == datetime(2026, 2, 27, tzinfo=UTC)


def test_parse_date_applies_a_zone_word_after_a_time():
    assert squad.parse_date("2026-03-02 14:05 PST") == datetime(2026, 3, 2, 22, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    ["2026-13-40", "2026-02-30", "2026-03-02T25:00Z", "2026-03-02T10:00+99:00", "0000-01-01", "", "soon"],
)
def test_parse_date_returns_none_for_what_is_not_a_real_date(value):
    assert squad.parse_date(value) is None


@pytest.mark.parametrize("value", ["2026-03-02", "2026-03-02 14:05", "2026-03-02T14:05:11.250+05:30"])
def test_parse_date_always_returns_aware_datetimes(value):
    when = squad.parse_date(value)
    assert when is not None
    assert when.tzinfo is not None


# --- decisions.md: parsing ---------------------------------------------------------------------------


def test_parse_decisions_is_lossless_on_a_team_log():
    assert joined(parts_of(TEAM_LOG)) == TEAM_LOG


def test_parse_decisions_finds_every_block_of_a_team_log():
    assert [block.title for block in blocks_of(TEAM_LOG)] == [
        "Keep tide readings in UTC",
        "colour tokens for the harbour map 🌊",
        "User directive",
        "Release script layout",
        "Pin the charting library to a minor version",
        "Adopt trunk-based releases",
    ]


def test_text_before_the_first_block_is_the_preamble():
    first = parts_of(TEAM_LOG)[0]
    assert isinstance(first, Text)
    assert first.text == "# Squad Decisions\n\n## Active Decisions\n\n"


def test_dated_heading_gives_level_date_and_title():
    block = blocks_of(TEAM_LOG)[0]
    assert block.level == 3
    assert block.date == datetime(2026, 3, 4, 9, 30, tzinfo=UTC)


def test_role_in_parentheses_is_removed_from_the_author():
    assert block_titled("Keep tide readings in UTC").author == "Marlow"


def test_dash_author_naming_a_known_person_is_read_and_left_out_of_the_title():
    parts = squad.parse_decisions("### 2026-03-01 — Juno: colour tokens\nText.\n", known_people=["juno"])
    block = next(part for part in parts if isinstance(part, Block))
    assert (block.author, block.title) == ("Juno", "colour tokens")


def test_dash_part_naming_nobody_known_stays_in_the_title():
    block = blocks_of("### 2026-03-01 — Release process: option (a)\nText.\n")[0]
    assert (block.author, block.title) == ("", "Release process: option (a)")


def test_a_name_signed_elsewhere_in_the_log_is_known():
    text = "### 2026-03-01 — Juno: colour tokens\nText.\n\n### 2026-03-02: Fonts\n**By:** Juno (UI)\n"
    assert [(b.author, b.title) for b in blocks_of(text)] == [("Juno", "colour tokens"), ("Juno", "Fonts")]


def test_colon_in_a_dated_title_is_kept():
    assert blocks_of("### 2026-03-01: Bump SDK: 0.9.4\n**By:** Kestrel\n")[0].title == "Bump SDK: 0.9.4"


def test_date_field_with_a_time_refines_a_date_only_heading():
    block = block_titled("colour tokens for the harbour map 🌊")
    assert block.date == datetime(2026, 3, 1, 16, 45, tzinfo=timezone(timedelta(hours=-8)))


def test_date_field_of_another_day_does_not_replace_the_heading_date():
    block = blocks_of("### 2026-03-01: Ship it\n**Date:** 2026-02-11T10:00:00Z\n")[0]
    assert block.date == datetime(2026, 3, 1, tzinfo=UTC)


def test_bad_heading_date_falls_back_to_the_date_field():
    block = blocks_of("### 2026-02-31: Odd day\n**Date:** 2026-03-03\n")[0]
    assert block.date == datetime(2026, 3, 3, tzinfo=UTC)


def test_bad_date_everywhere_gives_none():
    block = blocks_of("### 2026-02-31: Odd day\n**Date:** someday\n")[0]
    assert block.date is None


def test_user_directive_by_user_via_copilot_gives_user():
    assert block_titled("User directive").author == "user"


def test_user_directive_without_an_author_gives_user():
    assert blocks_of("### 2026-02-26: User directive\n**What:** No Friday deploys.\n")[0].author == "user"


def test_block_without_any_author_gives_empty_author():
    assert blocks_of("### 2026-02-26: Quiet change\nNothing else.\n")[0].author == ""


def test_decision_prefix_heading_is_a_level_one_block_without_the_prefix():
    block = block_titled("Pin the charting library to a minor version")
    assert (block.level, block.author, block.date) == (1, "Marlow", datetime(2026, 2, 18, tzinfo=UTC))


def test_sub_headings_stay_in_the_block_body():
    block = block_titled("Pin the charting library to a minor version")
    assert "## Context\nUpgrades broke the legend twice.\n## Rationale" in block.body


def test_heading_followed_by_a_bold_field_starts_a_block():
    block = blocks_of(TEAM_LOG)[-1]
    assert (block.title, block.level, block.author, block.status) == (
        "Adopt trunk-based releases",
        2,
        "Kestrel",
        "active",
    )


def test_heading_followed_by_plain_text_is_not_a_block():
    text = "### 2026-03-01: Ship it\n**By:** Juno\n\n## Notes\nPlain words.\n"
    assert len(blocks_of(text)) == 1
    assert "## Notes" in blocks_of(text)[0].body


def test_separator_line_ends_a_block_and_stands_in_the_text_after_it():
    parts = parts_of(TEAM_LOG)
    assert isinstance(parts[2], Text)
    assert parts[2].text == "\n---\n\n"


def test_separator_line_inside_a_block_stays_in_it():
    text = "### 2026-03-01: One\nbody\n---   \nmore of the same decision\n"
    assert parts_of(text) == [blocks_of(text)[0]]
    assert blocks_of(text)[0].text == text


def test_separator_with_trailing_spaces_before_the_next_block_is_separator_text():
    parts = parts_of("### 2026-03-01: One\nbody\n---   \n### 2026-03-02: Two\n")
    assert parts[1] == Text("---   \n", reason="separator")


def test_longer_rule_is_not_a_separator():
    text = "### 2026-03-01: One\nbody\n----\nmore body\n"
    assert blocks_of(text)[0].text == text


def test_trailing_blank_lines_belong_to_the_text_after_the_block():
    parts = parts_of("### 2026-03-01: One\nbody\n\n\n### 2026-03-02: Two\n")
    assert [part.text for part in parts] == ["### 2026-03-01: One\nbody\n", "\n\n", "### 2026-03-02: Two\n"]


def test_fenced_code_holds_no_boundary():
    block = block_titled("Release script layout")
    assert "### 2026-01-01: not a heading" in block.body
    assert block.body.endswith("~~~\n---\n~~~")


def test_unclosed_fence_runs_to_the_end_of_the_file():
    text = "### 2026-03-01: One\n```\n---\n### 2026-03-02: Two\n"
    assert [type(part) for part in parts_of(text)] == [Block]


def test_same_level_block_heading_ends_a_block():
    assert len(blocks_of("## 2026-03-01: One\nbody\n## 2026-03-02: Two\nbody\n")) == 2


def test_higher_level_block_heading_ends_a_block():
    assert len(blocks_of("### 2026-03-01: One\nbody\n# Decision: Two\nbody\n")) == 2


def test_lower_level_block_heading_stays_in_the_block_body():
    blocks = blocks_of("# Decision: One\nbody\n### 2026-03-02: Two\nbody\n")
    assert len(blocks) == 1
    assert "### 2026-03-02: Two" in blocks[0].body


def test_heading_deeper_than_three_never_starts_a_block():
    assert blocks_of("#### 2026-03-01: Deep\nbody\n") == []


def test_hashtag_line_is_not_a_heading():
    assert blocks_of("#2026-03-01: tag\n") == []


@pytest.mark.parametrize(
    ("words", "status"),
    [
        ("Active", "active"),
        ("Adopted", "active"),
        ("Applied (partial)", "active"),
        ("Active directive", "active"),
        ("Superseded", "superseded"),
        ("Superseded by 2026-03-04", "superseded"),
        ("Archived", "archived"),
        ("Deprecated", "archived"),
        ("Retired", "archived"),
        ("Rejected", "archived"),
        ("Withdrawn", "archived"),
    ],
)
def test_status_words_map_to_a_status(words, status):
    assert blocks_of(f"### 2026-03-01: One\n**Status:** {words}\n")[0].status == status


def test_known_type_is_lower_cased():
    assert block_titled("Keep tide readings in UTC").type == "technical"


def test_unknown_type_gives_empty_type():
    assert blocks_of("### 2026-03-01: One\n**Type:** Cosmetic\n")[0].type == ""


def test_fields_inside_fenced_code_are_ignored():
    text = "### 2026-03-01: One\n```\n**By:** Nobody\n```\n**By:** Juno\n"
    assert blocks_of(text)[0].author == "Juno"


def test_body_strips_surrounding_blank_lines():
    block = blocks_of("### 2026-03-01: One\n\n\nBody line.\n\nSecond.\n\n")[0]
    assert block.body == "Body line.\n\nSecond."


def test_crlf_file_is_lossless_and_gives_lf_bodies():
    text = TEAM_LOG.replace("\n", "\r\n")
    assert joined(parts_of(text)) == text
    assert blocks_of(text)[0].body.startswith("**By:** Marlow (Backend)\n**Type:** Technical\n")


def test_crlf_file_gives_the_same_blocks_as_lf():
    lf = [(b.title, b.author, b.date, b.status) for b in blocks_of(TEAM_LOG)]
    crlf = [(b.title, b.author, b.date, b.status) for b in blocks_of(TEAM_LOG.replace("\n", "\r\n"))]
    assert crlf == lf


def test_byte_order_mark_stays_in_the_text_but_not_in_the_title():
    text = "\ufeff### 2026-03-01: One\nbody\n"
    block = blocks_of(text)[0]
    assert (block.text, block.title) == (text, "One")


def test_file_without_final_newline_keeps_its_last_line():
    text = "### 2026-03-01: One\nlast line"
    assert blocks_of(text)[0].text == text


def test_empty_file_has_no_parts():
    assert parts_of("") == []


def test_file_without_blocks_is_one_text():
    assert parts_of("# Squad Decisions\n\nNothing yet.\n") == [
        Text("# Squad Decisions\n\nNothing yet.\n", reason="preamble")
    ]


def test_parse_decisions_is_fast_on_a_2500_line_log():
    block = "### 2026-03-{day:02d}: Decision {n}\n**By:** Marlow\n**Status:** Active\n\n" + "- point\n" * 20
    text = "# Squad Decisions\n\n" + "\n---\n\n".join(block.format(day=n % 28 + 1, n=n) for n in range(100))
    assert len(text.splitlines()) >= 2500
    elapsed, _ = fastest(lambda: squad.parse_decisions(text))
    assert elapsed < 0.1


@pytest.mark.parametrize(
    "text",
    [
        "```\n" * 20_000,
        "## heading\n\n" * 10_000,
        "### 2026-03-01: x\n" * 10_000,
        "# Decision: x\n---\n### 2026-01-01: y\n" * 5_000,
        "## 2026-06-08\n" + "### Decided at the review\n" * 10_000,
        "# Decision: x\n" + "### 2026-01-01: y\n**By:** Juno\n" * 5_000,
        "## Superseded\n\n" * 10_000 + "### 2026-01-01: y\n",
    ],
)
def test_parse_decisions_stays_linear_on_pathological_input(text):
    elapsed, parts = fastest(lambda: parts_of(text), runs=3)
    assert joined(parts) == text
    assert elapsed < 1.0


# --- decisions.md: order and separators --------------------------------------------------------------


def test_newest_first_when_dates_fall():
    assert squad.newest_first(parts_of(TEAM_LOG)) is True


def test_not_newest_first_when_dates_rise():
    text = "### 2026-01-01: A\n\n### 2026-02-01: B\n\n### 2026-03-01: C\n"
    assert squad.newest_first(parts_of(text)) is False


def test_not_newest_first_with_fewer_than_two_dates():
    assert squad.newest_first(parts_of("### 2026-01-01: A\n\n# Decision: B\n")) is False


def test_uses_separators_when_a_rule_stands_between_blocks():
    assert squad.uses_separators(parts_of(TEAM_LOG)) is True


def test_no_separators_when_blocks_follow_each_other():
    assert squad.uses_separators(parts_of("### 2026-01-01: A\n\n### 2026-02-01: B\n")) is False


def test_rule_in_the_preamble_is_not_a_separator_between_blocks():
    assert squad.uses_separators(parts_of("# Decisions\n\n---\n\n### 2026-01-01: A\n")) is False


# --- decisions.md: rendering --------------------------------------------------------------------------

WHEN = datetime(2026, 3, 2, 14, 5, tzinfo=UTC)


def test_render_block_writes_squad_style():
    text = squad.render_block(
        date=WHEN,
        title="Cache tide tables",
        author="Marlow",
        body="Cache for a day.",
        type="technical",
        status="Active",
        note="**Archived.**",
        ref=42,
    )
    assert text == (
        "### 2026-03-02: Cache tide tables (14:05:00Z, #42)\n**By:** Marlow\n**Type:** technical\n"
        "**Status:** Active\n\nCache for a day.\n\n**Archived.**\n"
    )


def test_render_block_leaves_out_empty_type_status_note_and_id():
    text = squad.render_block(date=WHEN, title="T", author="Juno", body="Body.")
    assert text == "### 2026-03-02: T (14:05:00Z)\n**By:** Juno\n\nBody.\n"


def test_render_block_writes_the_date_and_time_in_utc():
    pacific = datetime(2026, 3, 1, 22, 30, 15, 999_999, tzinfo=timezone(timedelta(hours=-8)))
    text = squad.render_block(date=pacific, title="Late call", author="Juno", body="b", ref=7)
    assert text.startswith("### 2026-03-02: Late call (06:30:15Z, #7)\n")


def test_render_block_makes_the_title_one_line():
    text = squad.render_block(date=WHEN, title="Two\nlines\r\n", author="Juno", body="b")
    assert text.startswith("### 2026-03-02: Two lines (14:05:00Z)\n")


def test_render_block_demotes_body_headings_and_keeps_rules_as_written():
    body = "---\n### 2026-01-01: not a block\n# Decision: not one either\n## Aside\n**By:** someone"
    text = squad.render_block(date=WHEN, title="T", author="Juno", body=body)
    assert text.endswith(
        "\n---\n###### 2026-01-01: not a block\n#### Decision: not one either\n##### Aside\n**By:** someone\n"
    )
    assert "\\" not in text


def test_render_block_demotes_sub_headings_to_level_four_keeping_their_distance():
    body = "## Context\nWhy we did it.\n### Detail\nMore.\n##### Deep\n###### Deepest"
    text = squad.render_block(date=WHEN, title="T", author="Juno", body=body)
    assert "\n#### Context\nWhy we did it.\n##### Detail\nMore.\n###### Deep\n###### Deepest\n" in text


def test_render_block_leaves_headings_at_level_four_or_deeper_alone():
    body = "#### Context\n##### Detail"
    assert squad.render_block(date=WHEN, title="T", author="Juno", body=body).endswith("\n" + body + "\n")


def test_render_block_demotes_a_heading_indented_by_up_to_three_spaces():
    body = "   ## Context\n    ## indented code, not a heading"
    text = squad.render_block(date=WHEN, title="T", author="Juno", body=body)
    assert text.endswith("\n   #### Context\n    ## indented code, not a heading\n")


def test_render_block_leaves_fenced_code_alone():
    body = "```\n---\n### 2026-01-01: in code\n# Decision: in code\n```"
    text = squad.render_block(date=WHEN, title="T", author="Juno", body=body)
    assert body in text


def test_render_block_closes_fenced_code_the_body_leaves_open():
    text = squad.render_block(date=WHEN, title="T", author="Juno", body="~~~~sh\nmake", note="**Note.**")
    assert text.endswith("\n~~~~sh\nmake\n~~~~\n\n**Note.**\n")


def test_render_block_drops_a_rule_at_its_very_end():
    text = squad.render_block(date=WHEN, title="T", author="Juno", body="Body.\n\n---\n\n---\n")
    assert text.endswith("\n\nBody.\n")


def test_render_block_parses_back_to_its_fields():
    text = squad.render_block(
        date=WHEN,
        title="Cache tide tables",
        author="Marlow",
        body="Cache.\n\nFor a day.",
        type="process",
        ref=3,
    )
    block = blocks_of(text)[0]
    assert (block.title, block.author, block.type, block.date, block.body) == (
        "Cache tide tables",
        "Marlow",
        "process",
        datetime(2026, 3, 2, 14, 5, tzinfo=UTC),
        "**By:** Marlow\n**Type:** process\n\nCache.\n\nFor a day.",
    )


def test_render_block_title_starting_with_decision_parses_back():
    text = squad.render_block(date=WHEN, title="Decision: pin the SDK", author="Marlow", body="b", ref=5)
    assert text.startswith("### 2026-03-02: Decision: Decision: pin the SDK (14:05:00Z, #5)\n")
    assert blocks_of(text)[0].title == "Decision: pin the SDK"


def test_render_block_appended_after_a_separator_keeps_the_log_blocks():
    text = TEAM_LOG + "\n---\n\n" + squad.render_block(date=WHEN, title="New", author="Juno", body="x")
    assert [b.title for b in blocks_of(text)][-1] == "New"
    assert len(blocks_of(text)) == len(blocks_of(TEAM_LOG)) + 1


# --- history.md: parsing ------------------------------------------------------------------------------


def test_parse_history_is_lossless():
    assert joined(history_parts(HISTORY)) == HISTORY


def test_untyped_sections_are_text_and_project_context_is_core_context():
    assert all(entry.section != "Notes" for entry in entries_of(HISTORY))
    assert {e.type for e in entries_of(HISTORY) if e.section == "Project Context"} == {"core_context"}


def test_text_carries_the_section_it_stands_in():
    notes = [part for part in history_parts(HISTORY) if isinstance(part, Text) and part.section == "Notes"]
    assert notes == [Text("## Notes\n\n- this section is not typed\n", "Notes", "untyped section 'Notes'")]


def test_text_before_any_section_has_an_empty_section():
    assert history_parts("intro\n# Project Context\n")[0] == Text("intro\n", "", "preamble")


def test_bullets_in_core_context_are_core_context_entries():
    core = [e for e in entries_of(HISTORY) if e.type == "core_context"]
    assert [e.content for e in core] == [
        "**Project:** Harbourmaster — berth booking for small marinas.",
        "**Stack:** Python, Django, HTMX.",
        "**My role:** Backend. I own the booking engine.",
        "**Hard rule:** bookings never overlap; the database enforces it.",
    ]


def test_pin_lines_are_update_entries_keeping_their_date():
    updates = [e for e in entries_of(HISTORY) if e.type == "update"]
    assert [(e.content, e.date) for e in updates] == [
        ("Booking API v3 frozen; mobile builds on it.", datetime(2026, 3, 2, tzinfo=UTC)),
        ("Tide tables now cached for a day.", datetime(2026, 3, 4, tzinfo=UTC)),
    ]
    assert updates[0].text == "📌 2026-03-02 — Booking API v3 frozen; mobile builds on it.\n"


def test_paragraphs_in_learnings_are_learning_entries():
    learnings = [e for e in entries_of(HISTORY) if e.type == "learning"]
    assert learnings[0].text == (
        "**Locks need timeouts:**\nA stuck payment held a berth lock for an hour; every lock now times out.\n"
    )
    assert learnings[0].section == "Learnings"


def test_nested_list_and_indented_paragraph_continue_a_bullet():
    nested = next(e for e in entries_of(HISTORY) if e.content.startswith("Nested lists"))
    assert nested.content == (
        "Nested lists keep their shape:\n- first level\n  - second level\n\nand a paragraph after a white line."
    )


def test_numbered_bullet_is_an_entry():
    assert any(e.content == "Numbered learnings count too." for e in entries_of(HISTORY))


def test_fenced_code_is_never_split_and_holds_no_section():
    older = next(e for e in entries_of(HISTORY) if e.text.startswith("### Older"))
    assert older.text.endswith("y = 2\n```\n") and "## Learnings\nx = " in older.text
    assert older.type == "learning"
    assert not any(e.section == "Learnings" and e.text.startswith("x = ") for e in entries_of(HISTORY))


def test_patterns_section_gives_pattern_entries():
    patterns = [e for e in entries_of(HISTORY) if e.section == "Patterns"]
    assert [(e.type, e.content) for e in patterns] == [("pattern", "Prefer idempotent handlers. 🚤")]


def test_rules_and_comments_are_text_and_a_sub_heading_opens_an_entry():
    texts = "".join(p.text for p in history_parts(HISTORY) if isinstance(p, Text))
    assert "<!-- Append new learnings below. -->" in texts
    assert "### Older" not in texts
    assert "\n---\n" in texts


def test_multi_line_html_comment_is_text():
    text = "## Learnings\n\n<!--\nA note\nfor editors\n-->\n- real entry\n"
    assert [e.content for e in entries_of(text)] == ["real entry"]


def test_empty_line_ends_a_bullet():
    assert [e.content for e in entries_of("## Learnings\n- one\n\n  two\n")] == ["one", "two"]


def test_whitespace_only_line_before_an_indented_line_continues_a_bullet():
    assert [e.content for e in entries_of("## Learnings\n- one\n  \n  two\n")] == ["one\n\ntwo"]


def test_unindented_line_after_a_bullet_starts_a_new_entry():
    assert [e.content for e in entries_of("## Learnings\n- one\n- two\nthree\n")] == ["one", "two", "three"]


def test_section_names_match_without_case_or_punctuation():
    entries = entries_of("## LEARNINGS:\n- one\n")
    assert [(e.section, e.type) for e in entries] == [("LEARNINGS:", "learning")]


def test_crlf_history_is_lossless_with_clean_content():
    text = HISTORY.replace("\n", "\r\n")
    assert joined(history_parts(text)) == text
    assert [e.content for e in entries_of(text)] == [e.content for e in entries_of(HISTORY)]


def test_byte_order_mark_before_a_section_heading():
    text = "\ufeff## Learnings\n- one\n"
    assert [(e.section, e.content) for e in entries_of(text)] == [("Learnings", "one")]


def test_right_to_left_text_is_kept_verbatim():
    text = "## Learnings\n- שלום עולם — مرحبا\n"
    assert entries_of(text)[0].content == "שלום עולם — مرحبا"


# --- history.md: rendering ----------------------------------------------------------------------------


def test_render_entry_writes_a_dated_bullet_with_indented_continuation():
    text = squad.render_entry(type="learning", content="First line\n\nsecond line", date=WHEN)
    assert text == "- 2026-03-02 — First line\n  \n  second line\n"


def test_render_entry_writes_an_update_as_a_dated_pin():
    text = squad.render_entry(type="update", content="API frozen", date=WHEN)
    assert text == "📌 2026-03-02 — API frozen\n"


def test_rendered_entry_parses_back_to_its_content():
    content = "Locks need timeouts\n\n- nested\n  - deeper\n```\ncode\n```"
    text = squad.render_entry(type="learning", content=content, date=WHEN)
    assert entries_of("## Learnings\n\n" + text + "\n- next\n")[0].content == content


def test_render_section_heading():
    assert squad.render_section_heading("Patterns") == "\n## Patterns\n\n"


def test_rendered_section_heading_names_a_typed_section():
    text = "# Kestrel\n" + squad.render_section_heading("Patterns") + "- one\n"
    assert [e.type for e in entries_of(text)] == ["pattern"]


# --- inbox files ----------------------------------------------------------------------------------------

AGENTS = ["marlow", "Juno", "kestrel", "copilot"]


@pytest.mark.parametrize(
    ("filename", "slug"),
    [
        ("marlow-job-queue.md", "marlow-job-queue"),
        ("decisions/inbox/Use Postgres--Bob.md", "use-postgres--bob"),
        ("use-postgres--bob--2.md", "use-postgres--bob--2"),
        ("a---b.md", "a-b"),
        ("copilot-directive-20260302T140511Z.md", "copilot-directive-20260302t140511z"),
        ("Café Crème.markdown", "caf-cr-me"),
        ("📌.md", ""),
    ],
)
def test_slug_from_filename(filename, slug):
    assert squad.slug_from_filename(filename) == slug


DECISION_SHAPE = """\
# Decision: Queue berth bookings

**Author:** Marlow (Backend)
**Date:** 2026-03-02
**Status:** Proposed
**Type:** Architectural

## Context

Bookings arrive in bursts.

## Rationale

A queue smooths the bursts.

## Consequences

One more worker to run.
"""


def test_decision_shape_proposal():
    proposal = squad.parse_native_proposal("marlow-berth-queue.md", DECISION_SHAPE, AGENTS)
    assert (proposal.slug, proposal.agent, proposal.title, proposal.type, proposal.date) == (
        "marlow-berth-queue",
        "Marlow",
        "Queue berth bookings",
        "architectural",
        datetime(2026, 3, 2, tzinfo=UTC),
    )


def test_rationale_section_is_taken_out_of_the_content():
    proposal = squad.parse_native_proposal("marlow-berth-queue.md", DECISION_SHAPE, AGENTS)
    assert proposal.rationale == "A queue smooths the bursts."
    assert "Rationale" not in proposal.content
    assert "Bookings arrive in bursts.\n\n## Consequences\n\nOne more worker to run." in proposal.content


def test_agent_topic_heading_gives_the_agent():
    text = "# Juno — map colours\n\n**Status:** Proposed\n\nUse the sea palette.\n"
    proposal = squad.parse_native_proposal("palette.md", text, AGENTS)
    assert (proposal.agent, proposal.title) == ("Juno", "Juno — map colours")


def test_hyphenated_title_heading_names_no_agent():
    proposal = squad.parse_native_proposal("retry.md", "# Retry policy - draft\n\nRetry twice.\n", AGENTS)
    assert proposal.agent == ""


def test_plain_owner_and_date_lines():
    text = "# Retry policy\n\nDate: 2026-03-05\nOwner: Kestrel\nRequested by: Marlow\n\nRetry three times.\n"
    proposal = squad.parse_native_proposal("retry-policy.md", text, AGENTS)
    assert (proposal.agent, proposal.date) == ("Kestrel", datetime(2026, 3, 5, tzinfo=UTC))


def test_user_directive_shape():
    text = "### 2026-03-02T14:05:11Z: User directive\n**By:** user (via Copilot)\n**What:** Tag releases.\n**Why:** Rollbacks need tags.\n"
    proposal = squad.parse_native_proposal("copilot-directive-20260302T140511Z.md", text, AGENTS)
    assert (proposal.agent, proposal.title, proposal.date, proposal.rationale) == (
        "user",
        "User directive",
        datetime(2026, 3, 2, 14, 5, 11, tzinfo=UTC),
        "Rollbacks need tags.",
    )
    assert "Why" not in proposal.content


def test_dated_heading_only_takes_the_agent_from_the_file_name():
    text = "### 2026-03-06: Split the booking service\n\nIt does two jobs.\n"
    proposal = squad.parse_native_proposal("Kestrel-split.md", text, AGENTS)
    assert (proposal.agent, proposal.title, proposal.date) == (
        "kestrel",
        "Split the booking service",
        datetime(2026, 3, 6, tzinfo=UTC),
    )


def test_sections_only_file_has_no_agent_and_no_date():
    text = "## Context\n\nSlow pages.\n\n## Proposal\n\nAdd an index.\n"
    proposal = squad.parse_native_proposal("slow-pages.md", text, AGENTS)
    assert (proposal.agent, proposal.title, proposal.date, proposal.rationale) == ("", "Context", None, "")


def test_rationale_field_with_continuation_is_taken_out():
    text = "# Decision: Use tabs\n**By:** Juno\n\nTabs everywhere.\n\n**Rationale:** Fewer bytes,\nfewer arguments.\n"
    proposal = squad.parse_native_proposal("juno-tabs.md", text, AGENTS)
    assert proposal.rationale == "Fewer bytes,\nfewer arguments."
    assert proposal.content == "Tabs everywhere."


def test_date_from_a_compact_file_name_timestamp():
    proposal = squad.parse_native_proposal("copilot-directive-20260302T140511Z.md", "Tag releases.\n", AGENTS)
    assert proposal.date == datetime(2026, 3, 2, 14, 5, 11, tzinfo=UTC)


def test_unknown_type_is_empty_and_entry_types_are_accepted():
    assert squad.parse_native_proposal("x.md", "# T\n**Type:** Learning\n", AGENTS).type == "learning"
    assert squad.parse_native_proposal("x.md", "# T\n**Type:** Vibes\n", AGENTS).type == ""


def test_proposal_content_uses_lf_and_drops_the_byte_order_mark():
    proposal = squad.parse_native_proposal("x.md", "\ufeffBody,\r\nsecond line.\r\n\r\n- Más\r\n", AGENTS)
    assert proposal.content == "Body,\nsecond line.\n\n- Más"


def test_fenced_rationale_heading_is_not_a_rationale():
    text = "# T\n\n```\n## Why\nnot a section\n```\n"
    assert squad.parse_native_proposal("x.md", text, AGENTS).rationale == ""


# --- front matter -------------------------------------------------------------------------------------

NOW = """\
---
updated_at: 2026-03-02T14:10:00Z
focus_area: Booking API v3 rollout
active_issues:
  - "#41 flaky tide test"
---

# What We're Focused On

Rolling v3 out to the marina apps.
"""


def test_split_front_matter_keeps_both_rules_in_the_front_matter():
    front, rest = squad.split_front_matter(NOW) or ("", "")
    assert front.startswith("---\n") and front.endswith("---\n")
    assert front + rest == NOW
    assert rest.startswith("\n# What We're Focused On")


def test_split_front_matter_after_a_byte_order_mark_with_crlf():
    text = "\ufeff---\r\nfocus_area: x\r\n---\r\nbody\r\n"
    assert squad.split_front_matter(text) == ("\ufeff---\r\nfocus_area: x\r\n---\r\n", "body\r\n")


@pytest.mark.parametrize(
    "text", ["# Title\n---\nx\n---\n", "---\nfocus_area: x\n", "----\na: 1\n----\n", "", "---"]
)
def test_split_front_matter_returns_none_without_front_matter(text):
    assert squad.split_front_matter(text) is None


def test_load_yaml_reads_now_md_front_matter_keeping_timestamps_as_text():
    front, _ = squad.split_front_matter(NOW) or ("", "")
    assert squad.load_yaml(front.strip().strip("-")) == {
        "updated_at": "2026-03-02T14:10:00Z",
        "focus_area": "Booking API v3 rollout",
        "active_issues": ["#41 flaky tide test"],
    }


def test_load_yaml_accepts_a_whole_front_matter_block():
    front, _ = squad.split_front_matter(NOW) or ("", "")
    assert squad.load_yaml(front)["focus_area"] == "Booking API v3 rollout"


def test_load_yaml_of_nothing_is_an_empty_mapping():
    assert squad.load_yaml("") == {}


def test_load_yaml_refuses_aliases():
    with pytest.raises(FrontMatterError, match="YAML aliases are not accepted"):
        squad.load_yaml("a: &x 1\nb: *x\n")


def test_load_yaml_refuses_anchors_without_aliases():
    with pytest.raises(FrontMatterError, match="YAML aliases are not accepted"):
        squad.load_yaml("a: &x 1\n")


def test_load_yaml_refuses_a_billion_laughs_in_milliseconds():
    bomb = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
        f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )
    assert len(bomb) <= 600

    def refused() -> bool:
        with pytest.raises(FrontMatterError):
            squad.load_yaml(bomb)
        return True

    elapsed, _ = fastest(refused)
    assert elapsed < 0.05


def test_load_yaml_refuses_more_than_64_kib():
    with pytest.raises(FrontMatterError, match="64 KiB"):
        squad.load_yaml("a: " + "x" * 70_000 + "\n")


def test_load_yaml_counts_bytes_not_characters():
    with pytest.raises(FrontMatterError, match="64 KiB"):
        squad.load_yaml("a: " + "🌊" * 20_000 + "\n")


@pytest.mark.parametrize("source", ["- a\n- b\n", "just text\n", "42\n"])
def test_load_yaml_refuses_what_is_not_a_mapping(source):
    with pytest.raises(FrontMatterError, match="mapping"):
        squad.load_yaml(source)


def test_load_yaml_refuses_keys_that_are_not_text():
    with pytest.raises(FrontMatterError, match="text"):
        squad.load_yaml("1: one\n")


@pytest.mark.parametrize(
    "source", ["a: !!python/object:os.system x\n", "a: !!binary aGk=\n", "a: !custom x\n"]
)
def test_load_yaml_refuses_tags_that_build_objects(source):
    with pytest.raises(FrontMatterError, match="tags"):
        squad.load_yaml(source)


def test_load_yaml_refuses_deep_nesting():
    with pytest.raises(FrontMatterError, match="nested"):
        squad.load_yaml("a: " + "[" * 5_000 + "]" * 5_000 + "\n")


def test_load_yaml_reports_invalid_yaml_with_its_line():
    with pytest.raises(FrontMatterError, match=r"line 2"):
        squad.load_yaml("a: 1\nb: c: d\n")


def test_render_now_writes_front_matter_then_body():
    text = squad.render_now(meta={"focus_area": "Tides ⚓", "active_issues": ["#41"]}, body="\n# Now\n")
    assert text == "---\nfocus_area: Tides ⚓\nactive_issues:\n- '#41'\n---\n\n# Now\n"


def test_render_now_repeats_shared_values_instead_of_aliasing_them():
    shared = ["#41"]
    text = squad.render_now(meta={"a": shared, "b": shared}, body="")
    assert "&" not in text and "*" not in text
    assert squad.load_yaml(text) == {"a": ["#41"], "b": ["#41"]}


def test_render_now_round_trips_through_split_and_load():
    meta = {"updated_at": "2026-03-02T14:10:00+00:00", "focus_area": "a\n---\nb", "active_issues": []}
    front, rest = squad.split_front_matter(squad.render_now(meta=meta, body="body\n")) or ("", "")
    assert (squad.load_yaml(front), rest) == (meta, "body\n")


# --- properties ---------------------------------------------------------------------------------------

MARKDOWN_LINES = [
    "# Squad Decisions",
    "## Active Decisions",
    "### 2026-03-02: Title",
    "### 2026-03-02T14:05:11Z: Timed",
    "## 2026-02-27 PT — Juno: colours",
    "# Decision: Pin it",
    "## Decision",
    "## Why",
    "## Learnings",
    "## Core Context",
    "## Recent Updates",
    "## Patterns",
    "# Project Context",
    "### sub",
    "**By:** Marlow (Backend)",
    "**Date:** 2026-02-27T09:12:40-08:00",
    "**Status:** Superseded",
    "**What:** x",
    "---",
    "---  ",
    "***",
    "```",
    "```python",
    "~~~",
    "  ```",
    "- bullet",
    "  - nested",
    "1. numbered",
    "📌 2026-03-01 — pinned",
    "**Title:**",
    "<!--",
    "-->",
    "<!-- comment -->",
    "| a | b |",
    "",
    "  ",
    " \t",
    "text",
    "\ufeff### 2026-01-01: bom",
    "שלום",
]

markdownish = st.lists(
    st.tuples(
        st.one_of(st.sampled_from(MARKDOWN_LINES), st.text(max_size=12)),
        st.sampled_from(["\n", "\r\n", "\r", ""]),
    ),
    max_size=40,
).map(lambda pairs: "".join(line + ending for line, ending in pairs))


@FAST
@given(st.text())
def test_parse_decisions_is_lossless_for_any_text(text):
    assert joined(parts_of(text)) == text


@FAST
@given(markdownish)
def test_parse_decisions_is_lossless_for_markdown_like_text(text):
    parts = parts_of(text)
    assert joined(parts) == text
    assert all(part.text for part in parts)


@FAST
@given(st.text())
def test_parse_history_is_lossless_for_any_text(text):
    assert joined(history_parts(text)) == text


@FAST
@given(markdownish)
def test_parse_history_is_lossless_for_markdown_like_text(text):
    parts = history_parts(text)
    assert joined(parts) == text
    assert all(part.text for part in parts)


@FAST
@given(title=st.text(), author=st.text(), body=st.text(), note=st.text(), type=st.text(), status=st.text())
def test_render_block_parses_back_to_exactly_one_block(title, author, body, note, type, status):
    text = squad.render_block(
        date=WHEN, title=title, author=author, body=body, type=type, status=status, note=note
    )
    parts = parts_of(text)
    assert len(parts) == 1
    assert isinstance(parts[0], Block)
    assert parts[0].text == text


@FAST
@given(body=st.lists(st.sampled_from(MARKDOWN_LINES), max_size=20).map("\n".join), title=st.text())
def test_render_block_with_markdown_body_parses_back_to_exactly_one_block(body, title):
    text = squad.render_block(date=WHEN, title=title, author="Juno", body=body)
    parts = parts_of(text)
    assert [type(part) for part in parts] == [Block]
    assert parts[0].text == text


@FAST
@given(content=st.text(), type=st.sampled_from(["learning", "core_context", "pattern", "update"]))
def test_render_entry_parses_back_to_exactly_one_entry(content, type):
    text = squad.render_entry(type=type, content=content, date=WHEN)
    section = squad.SECTION_FOR_TYPE[type]
    entries = entries_of(f"## {section}\n\n{text}")
    assert len(entries) == 1
    assert entries[0].text == text
    assert entries[0].type == type


@FAST
@given(content=st.lists(st.sampled_from(MARKDOWN_LINES), min_size=1, max_size=20).map("\n".join))
def test_render_entry_with_markdown_content_parses_back_to_exactly_one_entry(content):
    text = squad.render_entry(type="learning", content=content, date=WHEN)
    entries = entries_of("## Learnings\n\n" + text)
    assert [entry.text for entry in entries] == [text]


@FAST
@given(st.dictionaries(st.text(), st.one_of(st.text(), st.integers(), st.lists(st.text())), max_size=5))
def test_render_now_front_matter_loads_back(meta):
    front, _ = squad.split_front_matter(squad.render_now(meta=meta, body="")) or ("", "")
    assert squad.load_yaml(front) == meta


@FAST
@given(filename=st.text(), text=st.one_of(st.text(), markdownish), folders=st.lists(st.text(max_size=8)))
def test_parse_native_proposal_never_raises(filename, text, folders):
    proposal = squad.parse_native_proposal(filename, text, folders)
    assert proposal.slug == squad.slug_from_filename(filename)


@FAST
@given(st.one_of(st.text(), st.text(alphabet="&*!:[]{}-? \n'\"ab1#|>")))
def test_load_yaml_raises_nothing_but_front_matter_errors(source):
    with contextlib.suppress(FrontMatterError):
        assert isinstance(squad.load_yaml(source), dict)


@FAST
@given(st.text())
def test_parse_date_never_raises(value):
    when = squad.parse_date(value)
    assert when is None or when.tzinfo is not None
