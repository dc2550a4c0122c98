"""An agent's history.md as teams and Squad's own code write it: every memory a row, with its date.

The fixtures are made up, in the shapes real histories have: `squad init`'s and casting's sections,
`squad_memory`'s `### YYYY-MM-DD` entries in `## Learnings`, `## Decisions` and `## Context`, people's
dated `###` entries and `**Label:**` paragraphs, and the Scribe's `📌 Team update (…)` lines appended at
the very end of the file.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.mirror import squad
from ledger.mirror.squad import Entry, Text
from ledger.mirror.squad.lines import HEADING_OF_ROWS
from tests.timing import fastest

FAST = settings(max_examples=300, deadline=None)
WHEN = datetime(2026, 3, 2, 14, 5, tzinfo=UTC)

MARLOW = """\
# Marlow — History

> Backend. Keeps the sync service boring.

# Project Context

- **Project:** Tidepool — a terminal dashboard for fishing fleets.
- **Stack:** TypeScript, pnpm workspace, React.

## Core Context

- **My role:** Backend. I own the sync service and its schema.
- **Hard rule:** the sync service never writes to the fleet database directly.

## Recent Updates

📌 Team initialized on 2026-02-20
📌 2026-03-01 — Sync contract frozen at v2; the web team builds on it.
📌 **Team update (2026-03-04):** Juno owns the harbour map from now on.

## Learnings

<!-- Append learnings below -->

**Retries need jitter:**
Three clients retrying on the same second overloaded the gateway; add up to 500 ms of jitter.

**Fixtures drift:** Regenerate fixtures from the schema, never edit them by hand.

- Backoff caps at 30 s.
  Past that the operator pages anyway.

### 2026-06-05

Keep tide readings in UTC; the UI converts for Zoë's boats in «שלום» time zones.

### 2026-06-07 — Crate audit

Audited every crate the sync service pulls in.

**Verdict:** All 7 crates pass

- `serde` pinned to 1.0
- `tokio` pinned to 1.38

---

### Retries on the gateway (2026-03-15T05:30:00Z)

```python
## not a section
backoff = min(30, 2 ** attempt)
```

#### What changed

The client now waits before each retry. 👩🏽‍🍳

## Decisions

### 2026-06-08

Queue jobs in PostgreSQL, not Redis.

## Context

### 2026-06-09

Paired with Rai on the sync contract review.

## Team

- Juno (UI), Rai (Review)

## Patterns

- Prefer idempotent handlers.

📌 Team update (2026-11-26T14:05:11Z): Queue jobs in PostgreSQL — decided by Marlow
"""


def parts_of(text: str) -> list[Text | Entry]:
    return squad.parse_history(text)


def entries_of(text: str) -> list[Entry]:
    return [part for part in squad.parse_history(text) if isinstance(part, Entry)]


def entry_starting(text: str, start: str) -> Entry:
    return next(e for e in entries_of(text) if e.text.startswith(start))


def day(year: int, month: int, dd: int) -> datetime:
    return datetime(year, month, dd, tzinfo=UTC)


def share_read(parts: list[Text | Entry]) -> float:
    """Non-blank lines inside entries or in a heading of rows, over all non-blank lines."""
    read = total = 0
    for part in parts:
        lines = [line for line in part.text.split("\n") if line.strip()]
        total += len(lines)
        if isinstance(part, Entry) or part.reason == HEADING_OF_ROWS:
            read += len(lines)
    return read / total


# --- 📌 lines --------------------------------------------------------------------------------------------


def test_the_scribes_update_after_the_patterns_section_is_an_update_not_a_pattern():
    pin = entries_of(MARLOW)[-1]
    assert (pin.section, pin.type, pin.date) == (
        "Patterns",
        "update",
        datetime(2026, 11, 26, 14, 5, 11, tzinfo=UTC),
    )
    assert pin.content == "Team update (2026-11-26T14:05:11Z): Queue jobs in PostgreSQL — decided by Marlow"
    assert [e.content for e in entries_of(MARLOW) if e.type == "pattern"] == ["Prefer idempotent handlers."]


def test_a_pins_leading_date_is_its_date_and_leaves_its_content():
    pin = entry_starting(MARLOW, "📌 2026-03-01")
    assert (pin.type, pin.date, pin.content) == (
        "update",
        day(2026, 3, 1),
        "Sync contract frozen at v2; the web team builds on it.",
    )


def test_a_pin_dated_inside_its_text_keeps_its_text():
    assert entry_starting(MARLOW, "📌 Team initialized").date == day(2026, 2, 20)
    pin = entry_starting(MARLOW, "📌 **Team update")
    assert (pin.date, pin.content) == (
        day(2026, 3, 4),
        "**Team update (2026-03-04):** Juno owns the harbour map from now on.",
    )


def test_a_pin_ends_a_dated_entry_and_keeps_the_plain_lines_after_it():
    text = (
        "## Learnings\n\n### 2026-06-05\n\nSquad memory text.\n"
        "📌 Team update (2026-06-06T09:00:00Z): Rai reviews every schema change.\n"
        "It applies to the sync service first.\n\n- Later bullet\n"
    )
    dated, pin, bullet = entries_of(text)
    assert (dated.content, dated.date) == ("Squad memory text.", day(2026, 6, 5))
    assert pin.type == "update"
    assert pin.content.endswith("Rai reviews every schema change.\nIt applies to the sync service first.")
    assert (bullet.content, bullet.type, bullet.date) == ("Later bullet", "learning", day(2026, 6, 5))


def test_pins_are_updates_in_core_context_in_bullets_and_in_untyped_sections():
    text = (
        "# Juno — History\n\n📌 2026-01-02 — Cast as UI.\n\n## Core Context\n\n- **Role:** UI\n"
        "📌 2026-03-26 — Owns the harbour map.\n\n## Learnings\n\n- 📌 2026-03-27 — Map tiles are cached.\n\n"
        "## Team\n\n- Marlow (Backend)\n📌 2026-03-28 — Rai joined.\n"
    )
    pins = [(e.section, e.type, e.content) for e in entries_of(text) if e.text.lstrip("- ").startswith("📌")]
    assert pins == [
        ("Juno — History", "update", "Cast as UI."),
        ("Core Context", "update", "Owns the harbour map."),
        ("Learnings", "update", "Map tiles are cached."),
        ("Team", "update", "Rai joined."),
    ]
    team = [p for p in parts_of(text) if isinstance(p, Text) and p.section == "Team"]
    assert [p.reason for p in team] == ["untyped section 'Team'"]


def test_a_pin_inside_fenced_code_or_a_comment_is_no_entry():
    text = "## Team\n\n```\n📌 2026-01-01 — example\n```\n<!--\n📌 2026-01-02 — template\n-->\n"
    assert entries_of(text) == []


# --- sections and their types ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "type"),
    [
        ("# Project Context", "core_context"),
        ("## Project Context", "core_context"),
        ("## Core Context", "core_context"),
        ("## References", "core_context"),
        ("## Learnings", "learning"),
        ("## Key Learnings", "learning"),
        ("## LEARNINGS:", "learning"),
        ("## Issues", "learning"),
        ("## Open Questions", "learning"),
        ("## Recent Updates", "update"),
        ("## Team Updates", "update"),
        ("## Decisions", "update"),
        ("## Context", "update"),
        ("## Patterns", "pattern"),
        ("## Design Patterns", "pattern"),
    ],
)
def test_a_sections_words_give_its_entries_type(heading, type):
    entries = entries_of(f"{heading}\n\n- Rai reviews schema changes.\n")
    assert [(e.type, e.date) for e in entries] == [(type, None)]


@pytest.mark.parametrize("heading", ["## Team", "## Context and background", "## Build Context", "## Notes"])
def test_other_sections_are_text_that_says_so(heading):
    parts = parts_of(f"{heading}\n\n- Rai reviews schema changes.\n")
    assert parts == [
        Text(f"{heading}\n\n- Rai reviews schema changes.\n", heading[3:], f"untyped section '{heading[3:]}'")
    ]


@pytest.mark.parametrize(
    "heading",
    ["## Learnings — 2026-06-08: Rate limits", "## 2026-06-08 Learnings", "## Learnings (2026-06-08)"],
)
def test_a_dated_section_heading_is_typed_by_its_words_and_dates_its_entries(heading):
    parts = parts_of(f"{heading}\n\n- Back off on 429.\n\nThe gateway says when.\n")
    assert parts[0] == Text(f"{heading}\n", heading[3:], HEADING_OF_ROWS)
    assert [
        (e.type, e.date, e.content)
        for e in entries_of(f"{heading}\n\n- Back off on 429.\n\nThe gateway says when.\n")
    ] == [
        ("learning", day(2026, 6, 8), "Back off on 429."),
        ("learning", day(2026, 6, 8), "The gateway says when."),
    ]


def test_a_dated_section_heading_without_a_type_is_one_dated_update():
    text = (
        "## 2026-04-15 — Sprint review\nDuration: 40 min\n\n- Juno demoed the map.\n\n## Learnings\n\n- x\n"
    )
    note, _ = entries_of(text)
    assert note.text == "## 2026-04-15 — Sprint review\nDuration: 40 min\n\n- Juno demoed the map.\n"
    assert (note.type, note.date, note.content) == (
        "update",
        day(2026, 4, 15),
        "Sprint review\n\nDuration: 40 min\n\n- Juno demoed the map.",
    )


def test_a_pinned_team_update_section_holds_dated_updates():
    text = "## 📌 Team update — 2026-08-20T11:59:44-07:00\n\nTriage done; five issues ship now.\n"
    (update,) = entries_of(text)
    assert (update.type, update.content) == ("update", "Triage done; five issues ship now.")
    assert update.date == datetime(2026, 8, 20, 11, 59, 44, tzinfo=timezone(timedelta(hours=-7)))


def test_every_text_says_why_it_is_not_a_row():
    reasons = {(p.reason, p.text.split("\n")[0]) for p in parts_of(MARLOW) if isinstance(p, Text)}
    assert ("title", "# Marlow — History") in reasons
    assert ("comment", "<!-- Append learnings below -->") in reasons
    assert ("separator", "---") in reasons
    assert ("untyped section 'Team'", "## Team") in reasons
    assert {reason for reason, _ in reasons} == {
        "title",
        "comment",
        "separator",
        "blank",
        "untyped section 'Team'",
        HEADING_OF_ROWS,
    }
    headings = [first for reason, first in reasons if reason == HEADING_OF_ROWS]
    assert sorted(headings) == sorted(
        [
            "# Project Context",
            "## Core Context",
            "## Recent Updates",
            "## Learnings",
            "## Decisions",
            "## Context",
            "## Patterns",
        ]
    )
    assert parts_of("Notes before any heading.\n## Learnings\n")[0] == Text(
        "Notes before any heading.\n", "", "preamble"
    )


def test_a_long_untyped_heading_is_shortened_in_its_reason():
    heading = "Notes from the harbour-master meeting with Juno, Rai and Marlow about winter berths"
    (part,) = parts_of(f"## {heading}\n- Ice on pier 3.\n")
    assert part.reason == f"untyped section '{heading[:59]}…'"


def test_blank_lines_are_text_of_their_own():
    parts = parts_of("## Learnings\n\n- one\n\n\n- two\n")
    assert [(type(p).__name__, p.text) for p in parts] == [
        ("Text", "## Learnings\n"),
        ("Text", "\n"),
        ("Entry", "- one\n"),
        ("Text", "\n\n"),
        ("Entry", "- two\n"),
    ]
    assert [p.reason for p in parts if isinstance(p, Text)] == [HEADING_OF_ROWS, "blank", "blank"]


# --- ### entries -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "content"),
    [
        ("### 2026-06-07\nCrate audit done.\n", "Crate audit done."),
        ("### 2026-06-07\n\nCrate audit done.\n", "Crate audit done."),
        ("### 2026-06-07 — Crate audit\n\nAll pass.\n", "Crate audit\n\nAll pass."),
        ("### 2026-06-07: Crate audit\nAll pass.\n", "Crate audit\n\nAll pass."),
        ("### 2026-06-07 — Crate audit\n", "Crate audit"),
    ],
)
def test_a_dated_heading_and_its_body_are_one_entry(written, content):
    text = f"## Learnings\n\n{written}\n### 2026-06-09\n\nNext.\n"
    first, second = entries_of(text)
    assert (first.text, first.content, first.date, first.type) == (
        written,
        content,
        day(2026, 6, 7),
        "learning",
    )
    assert (second.content, second.date) == ("Next.", day(2026, 6, 9))


def test_a_label_list_and_rule_inside_a_dated_entry_stay_with_it():
    audit = entry_starting(MARLOW, "### 2026-06-07")
    assert audit.content == (
        "Crate audit\n\nAudited every crate the sync service pulls in.\n\n**Verdict:** All 7 crates pass\n\n"
        "- `serde` pinned to 1.0\n- `tokio` pinned to 1.38"
    )
    assert audit.text.endswith("- `tokio` pinned to 1.38\n")


def test_an_undated_sub_heading_holds_its_body_code_and_deeper_headings():
    retries = entry_starting(MARLOW, "### Retries")
    assert retries.date == datetime(2026, 3, 15, 5, 30, tzinfo=UTC)
    assert retries.content.startswith("Retries on the gateway\n\n```python\n## not a section\n")
    assert retries.content.endswith("#### What changed\n\nThe client now waits before each retry. 👩🏽‍🍳")
    assert retries.section == "Learnings"


def test_squad_memorys_sections_give_dated_rows():
    rows = [
        (e.section, e.type, e.date, e.content)
        for e in entries_of(MARLOW)
        if e.section in ("Decisions", "Context")
    ]
    assert rows == [
        ("Decisions", "update", day(2026, 6, 8), "Queue jobs in PostgreSQL, not Redis."),
        ("Context", "update", day(2026, 6, 9), "Paired with Rai on the sync contract review."),
    ]


def test_a_comment_after_the_last_dated_entry_is_not_part_of_it():
    text = "## Learnings\n\n### 2026-06-07\n\nKeep it.\n\n<!--\nAppend learnings below\n-->\n\n## Patterns\n"
    (entry,) = entries_of(text)
    assert entry.text == "### 2026-06-07\n\nKeep it.\n"
    assert [p.reason for p in parts_of(text) if isinstance(p, Text)][2:5] == ["blank", "comment", "blank"]


def test_a_bold_label_standing_alone_keeps_the_list_it_labels():
    text = "## Learnings\n\n**Key findings:**\n\n- Drift is slow.\n- Drift is real.\n\n**Retries:** jitter them.\n"
    assert [e.content for e in entries_of(text)] == [
        "**Key findings:**\n\n- Drift is slow.\n- Drift is real.",
        "**Retries:** jitter them.",
    ]


def test_bullets_and_title_paragraphs_read_as_before():
    assert [e.content for e in entries_of(MARLOW) if e.section == "Learnings"][:3] == [
        "**Retries need jitter:**\nThree clients retrying on the same second overloaded the gateway; add up to 500 ms of jitter.",
        "**Fixtures drift:** Regenerate fixtures from the schema, never edit them by hand.",
        "Backoff caps at 30 s.\nPast that the operator pages anyway.",
    ]


# --- whole files -----------------------------------------------------------------------------------------


def test_a_realistic_history_is_lossless_and_only_its_frame_is_left_as_text():
    parts = parts_of(MARLOW)
    assert "".join(p.text for p in parts) == MARLOW
    left = [
        line
        for p in parts
        if isinstance(p, Text) and p.reason != HEADING_OF_ROWS
        for line in p.text.split("\n")
        if line.strip()
    ]
    assert left == [
        "# Marlow — History",
        "> Backend. Keeps the sync service boring.",
        "<!-- Append learnings below -->",
        "---",
        "## Team",
        "- Juno (UI), Rai (Review)",
    ]


def test_crlf_gives_the_same_entries():
    crlf = MARLOW.replace("\n", "\r\n")
    parts = parts_of(crlf)
    assert "".join(p.text for p in parts) == crlf
    lf = [(e.type, e.date, e.content, e.section) for e in entries_of(MARLOW)]
    assert [(e.type, e.date, e.content, e.section) for e in entries_of(crlf)] == lf


def test_odd_unicode_is_kept_verbatim():
    text = (
        "\ufeff## Learnings\n\n### 2026-06-07 — Zoe\u0308 ≠ Zoë\n\nNames are compared after NFC:"
        " Ame\u0301lie, Nin\u0303o, 👩🏽‍🍳, «שלום», a\u2028line separator inside one line.\n"
        "📌 2026-06-08 — مرحبا to the night shift"
    )
    first, pin = entries_of(text)
    assert first.content.startswith("Zoe\u0308 ≠ Zoë\n\nNames are compared after NFC: Ame\u0301lie")
    assert (pin.content, pin.date) == ("مرحبا to the night shift", day(2026, 6, 8))
    assert "".join(p.text for p in parts_of(text)) == text


def long_history(sections: int) -> str:
    chunks = [MARLOW]
    for k in range(sections):
        when = day(2026, 1, 1) + timedelta(days=k)
        chunks.append(
            f"\n## Learnings — {when:%Y-%m-%d}: Round {k}\n\n- Juno's map tile {k} caches for a day.\n"
            f"  Tiles older than that are refetched.\n\n### {when:%Y-%m-%d} — Audit {k}\n\n**Verdict:** pass\n\n"
            f"```bash\nmake audit ROUND={k}\n```\n\n📌 Team update ({when:%Y-%m-%d}T09:00:00Z): round {k} closed"
            " — decided by Rai\n"
        )
    return "".join(chunks)


def test_a_long_history_is_read_into_rows_in_linear_time():
    # Eight times the text: linear time is about eight times as long, quadratic sixty-four; the bound
    # leaves room for a busy machine.
    small, large = long_history(200), long_history(1600)
    small_time, small_parts = fastest(lambda: parts_of(small), runs=5)
    large_time, large_parts = fastest(lambda: parts_of(large), runs=3)
    assert "".join(p.text for p in large_parts) == large
    assert share_read(large_parts) >= 0.95
    assert len([p for p in large_parts if isinstance(p, Entry)]) > 7 * len(
        [p for p in small_parts if isinstance(p, Entry)]
    )
    assert large_time < 2.0 and large_time < 24 * small_time


@pytest.mark.parametrize(
    "text",
    [
        "### x\n" * 10_000,
        "📌 x\n" * 10_000,
        "<!--\n" * 10_000,
        "## Learnings\n" + "### 2026-01-01\n-->\n" * 5_000,
    ],
)
def test_pathological_histories_parse_quickly(text):
    elapsed, parts = fastest(lambda: parts_of("## Learnings\n" + text), runs=3)
    assert "".join(p.text for p in parts) == "## Learnings\n" + text
    assert elapsed < 1.0


# --- writing ---------------------------------------------------------------------------------------------


def test_an_update_is_a_dated_pin():
    assert squad.render_entry(type="update", content="API frozen\nfor v3", date=WHEN) == (
        "📌 2026-03-02 — API frozen\n  for v3\n"
    )


@pytest.mark.parametrize("type", ["learning", "core_context", "pattern"])
def test_other_memories_are_dated_bullets(type):
    assert squad.render_entry(type=type, content="First line\n\nsecond line", date=WHEN) == (
        "- 2026-03-02 — First line\n  \n  second line\n"
    )


def test_empty_content_is_the_dated_marker_alone():
    assert squad.render_entry(type="learning", content=" \n", date=WHEN) == "- 2026-03-02 —\n"
    assert squad.render_entry(type="update", content="", date=WHEN) == "📌 2026-03-02 —\n"


def test_a_bullet_someone_adds_after_canons_stays_its_own_entry():
    text = (
        "## Learnings\n\n"
        + squad.render_entry(type="learning", content="Retries need jitter.\nSee the runbook.", date=WHEN)
        + "- Juno: the gateway caches tokens for an hour.\n"
    )
    assert [(e.content, e.date) for e in entries_of(text)] == [
        ("Retries need jitter.\nSee the runbook.", day(2026, 3, 2)),
        ("Juno: the gateway caches tokens for an hour.", None),
    ]


@pytest.mark.parametrize(
    "content",
    [
        "## Why\nThe gateway fell over.",
        "Context first\n### 2026-01-01: not an entry",
        "Reviewed by Rai\n📌 not a pin",
        "Then a rule\n---",
        "Ends on a note\n<!-- keep -->",
        "#\nA bare hash",
    ],
)
def test_content_that_would_split_the_entry_is_indented_and_read_back(content):
    text = squad.render_entry(type="learning", content=content, date=WHEN)
    assert text.startswith("- 2026-03-02 — ") and all(
        line.startswith("  ") for line in text.split("\n")[1:-1] if line
    )
    (entry,) = entries_of(f"## Learnings\n\n{text}\n## Patterns\n\n- kept\n")[:1]
    assert (entry.text, entry.content, entry.date) == (text, content, day(2026, 3, 2))


def test_fenced_code_left_open_is_closed():
    text = squad.render_entry(type="learning", content="Run:\n```bash\nmake run", date=WHEN)
    assert text == "- 2026-03-02 — Run:\n  ```bash\n  make run\n  ```\n"
    entries = entries_of(f"## Learnings\n\n{text}\n## Patterns\n\n- Prefer idempotent handlers.\n")
    assert [(e.type, e.content) for e in entries] == [
        ("learning", "Run:\n```bash\nmake run\n```"),
        ("pattern", "Prefer idempotent handlers."),
    ]
    pin = squad.render_entry(type="update", content="Run this:\n~~~\nsquad nap", date=WHEN)
    assert pin == "📌 2026-03-02 — Run this:\n  ~~~\n  squad nap\n  ~~~\n"


def test_canons_entries_sit_beside_squad_memorys_and_people_s():
    text = (
        "## Learnings\n\n- Older bullet by Juno.\n\n"
        + squad.render_entry(type="learning", content="Canon's learning.", date=WHEN)
        + "\n### 2026-06-07\nSquad's learning.\n\n"
        + squad.render_entry(
            type="learning", content="## Sub\nCanon's second.", date=WHEN + timedelta(days=1)
        )
    )
    assert [(e.content, e.date) for e in entries_of(text)] == [
        ("Older bullet by Juno.", None),
        ("Canon's learning.", day(2026, 3, 2)),
        ("Squad's learning.", day(2026, 6, 7)),
        ("## Sub\nCanon's second.", day(2026, 3, 3)),
    ]


def test_canons_older_bullets_still_read_back():
    text = "## Learnings\n\n- First line\n  \n  second line\n"
    (entry,) = entries_of(text)
    assert (entry.text, entry.content) == ("- First line\n  \n  second line\n", "First line\n\nsecond line")


# --- properties: what render_entry writes reads back -------------------------------------------------------

MARKDOWN_LINES = [
    "# Title",
    "## Why",
    "### 2026-03-02: Title",
    "#### Deeper",
    "##",
    "#hashtag",
    "📌 2026-03-01 — pinned",
    "- 📌 pinned bullet",
    "- bullet",
    "  - nested",
    "1. numbered",
    "**Verdict:** pass",
    "**Key findings:**",
    "---",
    "***",
    "```",
    "```python",
    "~~~",
    "  ```",
    "<!--",
    "-->",
    "<!-- note -->",
    "| a | b |",
    "",
    "  ",
    "\t",
    "Rai's review, «שלום», 👩🏽‍🍳",
    "\ufeff### 2026-01-01: bom",
]
markdown_content = st.lists(
    st.one_of(st.sampled_from(MARKDOWN_LINES), st.text(max_size=12)), min_size=0, max_size=20
).map("\n".join)
types = st.sampled_from(["learning", "core_context", "pattern", "update"])
dates = st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.just(UTC))


def normalised(content: str) -> str:
    """The content as render_entry reads it: "\\n" line endings, stripped, white-space lines emptied."""
    lines = content.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n")
    return "\n".join("" if not line.strip() else line for line in lines)


def surrounded(section: str, text: str) -> str:
    return f"# Marlow — History\n\n## {section}\n\n- An older memory.\n\n{text}\n## Team\n\n- Juno (UI)\n"


def squad_sections(text: str) -> list[tuple[str, str]]:
    """(name, content) of each section as Squad's `parseHistory` splits them: `^##\\s+(.+?)\\s*$`,
    content trimmed."""
    headers = list(re.finditer(r"^##\s+(.+?)\s*$", text, re.MULTILINE))
    return [
        (h.group(1), text[h.end() : headers[k + 1].start() if k + 1 < len(headers) else len(text)].strip())
        for k, h in enumerate(headers)
    ]


def read_back(content: str, type: str, when: datetime) -> tuple[str, Entry, str]:
    text = squad.render_entry(type=type, content=content, date=when)
    section = squad.SECTION_FOR_TYPE[type]
    whole = surrounded(section, text)
    entries = entries_of(whole)
    assert [e.content for e in entries if e.text != text] == ["An older memory."]
    (entry,) = [e for e in entries if e.text == text]
    return text, entry, whole


@FAST
@given(content=st.one_of(st.text(), markdown_content), type=types, when=dates)
def test_a_rendered_memory_reads_back_as_one_entry_with_its_content_and_date(content, type, when):
    _, entry, whole = read_back(content, type, when)
    assert (entry.type, entry.date) == (type, datetime.combine(when.date(), time(), UTC))
    said = normalised(content)
    assert entry.content == said or re.fullmatch(re.escape(said) + r"\n(`{3,}|~{3,})", entry.content)
    assert "".join(p.text for p in parts_of(whole)) == whole


@FAST
@given(content=markdown_content, type=types)
def test_squads_reader_sees_a_rendered_memory_inside_its_section(content, type):
    text, _, whole = read_back(content, type, WHEN)
    sections = squad_sections(whole)
    assert [name for name, _ in sections] == [squad.SECTION_FOR_TYPE[type], "Team"]
    assert text.strip() in sections[0][1]
    assert text.split("\n", 1)[0].split(" ", 1)[1].startswith("2026-03-02 —")


@FAST
@given(st.text())
def test_any_text_is_read_losslessly(text):
    parts = parts_of(text)
    assert "".join(p.text for p in parts) == text
    assert all(p.text for p in parts)
    assert all(p.reason for p in parts if isinstance(p, Text))


@FAST
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*MARKDOWN_LINES, "## Learnings", "## Team", "## 2026-04-15 — Review"]),
            st.sampled_from(["\n", "\r\n", ""]),
        ),
        max_size=40,
    )
)
def test_markdown_like_text_is_read_losslessly_with_reasons(pairs):
    text = "".join(line + ending for line, ending in pairs)
    parts = parts_of(text)
    assert "".join(p.text for p in parts) == text
    assert all(p.text for p in parts)
    assert all(p.reason for p in parts if isinstance(p, Text))
