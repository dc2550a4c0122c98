"""Decision logs read as a person reads them, and written so that Squad's own programs see what Canon wrote.

Squad's readers are quoted from squad-sdk 0.13.1 / squad-cli 0.10.0: `parseDecisionsMarkdown` starts a
decision at every trimmed line matching `/^(###?)\\s+(.+)/`; `nap` splits the log at `/^###\\s/`; `nap`
appends an inbox file as `"\\n" + text.trimEnd() + "\\n"`; `squad_decide` and `squad memory write` write
the inbox files below.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.mirror import squad
from ledger.mirror.squad import Block, Text
from ledger.mirror.squad.lines import _FIELD, _heading, _one_line, _scan, _split_lines
from tests.ledger.test_squad_formats import MARKDOWN_LINES, TEAM_LOG

FAST = settings(max_examples=200, deadline=None)
WHEN = datetime(2026, 3, 2, 14, 5, 11, tzinfo=UTC)
AGENTS = ["marlow", "juno", "kestrel", "copilot"]


def parts_of(text: str, known_people: Iterable[str] = ()) -> list[Text | Block]:
    return squad.parse_decisions(text, known_people=known_people)


def blocks_of(text: str, known_people: Iterable[str] = ()) -> list[Block]:
    return [part for part in parts_of(text, known_people) if isinstance(part, Block)]


def texts_of(text: str) -> list[tuple[str, str]]:
    return [(part.reason, part.text) for part in parts_of(text) if isinstance(part, Text)]


# --- where a block ends -------------------------------------------------------------------------------


def test_a_rule_inside_a_decision_does_not_end_it():
    text = (
        "### 2026-03-04: Tide readings in UTC\n**By:** Marlow\n\nStore UTC.\n\n---\n\n"
        "Convert in the UI only.\n\n### 2026-03-05: Next\n"
    )
    first = blocks_of(text)[0]
    assert first.text.endswith("\n---\n\nConvert in the UI only.\n")


def test_sub_headings_inside_a_decision_stay_in_it():
    text = "### 2026-03-01: Colour tokens\n**By:** Juno\n\n## Decision\n\nFive tokens.\n\n## Why\n\nDrift.\n"
    assert [part.text for part in parts_of(text)] == [text]


def test_the_rule_and_blank_lines_before_the_next_block_are_separator_text():
    parts = parts_of("### 2026-03-01: One\nbody\n\n---\n\n### 2026-03-02: Two\nbody\n")
    assert parts[1] == Text("\n---\n\n", reason="separator")


def test_blank_lines_between_blocks_are_blank_text():
    parts = parts_of("### 2026-03-01: One\nbody\n\n\n### 2026-03-02: Two\n")
    assert parts[1] == Text("\n\n", reason="blank")


def test_rules_after_the_last_block_are_separator_text():
    assert parts_of("### 2026-03-01: One\nbody\n\n---\n")[-1] == Text("\n---\n", reason="separator")


def test_a_deeper_block_after_a_rule_is_a_decision_of_its_own():
    text = (
        "# Decision: Pin the SDK\n**Author:** Marlow\n## Context\nDrift.\n\n---\n\n### 2026-03-02: Later\nx\n"
    )
    assert [block.title for block in blocks_of(text)] == ["Pin the SDK", "Later"]


def test_a_deeper_signed_block_is_a_decision_of_its_own():
    text = (
        "## Adopt trunk-based releases\n**Author:** Kestrel\n\nShort branches.\n"
        "### 2026-11-26T11-04-35: Queue jobs\n**By:** Marlow\n**What:** Queue jobs\n"
    )
    assert [(b.level, b.title) for b in blocks_of(text)] == [
        (2, "Adopt trunk-based releases"),
        (3, "Queue jobs"),
    ]


def test_a_deeper_unsigned_dated_heading_stays_in_the_block():
    text = "# Decision: Pin the SDK\n**Author:** Marlow\n\n### 2026-03-05: Follow-up\nPinned to 0.9.\n"
    assert [block.title for block in blocks_of(text)] == ["Pin the SDK"]


def test_fenced_rules_and_headings_end_nothing():
    text = "### 2026-03-01: Script\n**By:** Kestrel\n\n```text\n---\n# Decision: not one\n## Why\n```\n"
    assert [part.text for part in parts_of(text)] == [text]


# --- day sections -------------------------------------------------------------------------------------

DAY_LOG = """\
# Squad Decisions

## 2026-06-08 — Sprint review

### Cache tide tables for a day
**By:** Marlow

Readings change slowly.

### 2026-06-07: Drop the legacy export
**By:** Wren

---

## 2026-06-09

### Tag every release ⚓
**By:** Kestrel
**Date:** 2026-06-09T16:20:00Z
"""


def test_each_heading_under_a_day_is_one_block_taking_the_days_date():
    assert [(b.title, b.date, b.level) for b in blocks_of(DAY_LOG)] == [
        ("Cache tide tables for a day", datetime(2026, 6, 8, tzinfo=UTC), 3),
        ("Drop the legacy export", datetime(2026, 6, 7, tzinfo=UTC), 3),
        ("Tag every release ⚓", datetime(2026, 6, 9, 16, 20, tzinfo=UTC), 3),
    ]


def test_day_headings_are_text_saying_so():
    assert texts_of(DAY_LOG) == [
        ("preamble", "# Squad Decisions\n\n"),
        ("day heading", "## 2026-06-08 — Sprint review\n\n"),
        ("blank", "\n"),
        ("separator", "\n---\n\n"),
        ("day heading", "## 2026-06-09\n\n"),
    ]


def test_a_day_log_is_lossless():
    assert "".join(part.text for part in parts_of(DAY_LOG)) == DAY_LOG


def test_a_dated_heading_with_fields_of_its_own_is_one_decision():
    text = "## 2026-06-08 — Queue jobs\n**By:** Marlow\n\n### Option A\nRows.\n\n### Option B\nRedis.\n"
    assert [(b.title, b.level) for b in blocks_of(text)] == [("Queue jobs", 2)]


def test_a_dated_heading_over_the_parts_of_one_decision_is_one_decision():
    text = "## 2026-06-08 — Queue jobs in PostgreSQL\n\n### Context\nBursts.\n\n### Decision\nRows.\n"
    assert [b.title for b in blocks_of(text)] == ["Queue jobs in PostgreSQL"]


def test_separators_between_days_count_as_separators():
    assert squad.uses_separators(parts_of(DAY_LOG)) is True


# --- headings that only introduce blocks ----------------------------------------------------------------


def test_a_group_heading_between_blocks_is_preamble_text_not_part_of_the_block_before():
    text = (
        "## Active Decisions\n\n### 2026-03-04: Keep UTC\n**By:** Marlow\n\n"
        "## Superseded Decisions\n\n### 2026-01-10: Local times\n**By:** Juno\n"
    )
    assert blocks_of(text)[0].text == "### 2026-03-04: Keep UTC\n**By:** Marlow\n"
    assert texts_of(text) == [
        ("preamble", "## Active Decisions\n\n"),
        ("blank", "\n"),
        ("preamble", "## Superseded Decisions\n\n"),
    ]


def test_every_text_part_has_a_reason():
    for text in (TEAM_LOG, DAY_LOG):
        assert all(part.reason for part in parts_of(text) if isinstance(part, Text))


# --- titles, people and times -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("### 2026-03-01 — Release process: option (a)", "Release process: option (a)"),
        ("### 2026-03-01: Bump SDK: 0.9.4", "Bump SDK: 0.9.4"),
        ("### 2026-03-01 \u2013 Bump SDK: 0.9.4", "Bump SDK: 0.9.4"),
        ("## 2026-03-01 - Retry policy: twice", "Retry policy: twice"),
        ("### 2026-03-01T09:30:00Z: Décision prise: oui", "Décision prise: oui"),
    ],
)
def test_a_title_keeps_its_colons_when_nobody_known_is_named(heading, title):
    [block] = blocks_of(f"{heading}\n**Status:** Active\n")
    assert (block.title, block.author) == (title, "")


def test_a_known_person_in_the_heading_is_the_author():
    [block] = blocks_of("### 2026-02-27 PT — Juno: colour tokens\nx\n", known_people=["JUNO"])
    assert (block.author, block.title, block.date) == (
        "Juno",
        "colour tokens",
        datetime(2026, 2, 27, tzinfo=UTC),
    )


def test_known_people_are_compared_without_their_role():
    [block] = blocks_of("### 2026-02-27 — Zoë (UI): colour tokens\nx\n", known_people=["zoë"])
    assert (block.author, block.title) == ("Zoë", "colour tokens")


def test_squad_decide_timestamp_gives_the_time_in_utc():
    [block] = blocks_of("### 2026-11-26T11-04-35: Queue jobs in PostgreSQL\n**By:** Marlow\n")
    assert (block.title, block.date) == (
        "Queue jobs in PostgreSQL",
        datetime(2026, 11, 26, 11, 4, 35, tzinfo=UTC),
    )


def test_parse_date_reads_the_squad_decide_timestamp():
    assert squad.parse_date("2026-11-26T11-04-35") == datetime(2026, 11, 26, 11, 4, 35, tzinfo=UTC)


def test_canons_time_and_id_suffix_gives_the_time_and_leaves_the_title():
    [block] = blocks_of("### 2026-03-02: Cache tide tables (14:05:11Z, #42)\n**By:** Marlow\n")
    assert (block.title, block.date) == ("Cache tide tables", WHEN)


def test_a_time_suffix_after_a_heading_with_its_own_time_stays_in_the_title():
    [block] = blocks_of("### 2026-03-02T09:00:00Z: Standup (14:05:11Z)\nx\n")
    assert (block.title, block.date) == ("Standup (14:05:11Z)", datetime(2026, 3, 2, 9, tzinfo=UTC))


def test_a_time_that_is_no_time_stays_in_the_title():
    [block] = blocks_of("### 2026-03-02: Cache (25:00:00Z)\nx\n")
    assert (block.title, block.date) == ("Cache (25:00:00Z)", datetime(2026, 3, 2, tzinfo=UTC))


# --- what Squad's readers see in what Canon writes ------------------------------------------------------

_PARSE_DECISIONS_HEADING = re.compile(r"(###?)\s+(.+)")
_NAP_ENTRY = re.compile(r"###\s")


def squad_decision_lines(text: str) -> list[int]:
    """Lines outside fenced code where Squad's `parseDecisionsMarkdown` starts a decision."""
    _, contents = _split_lines(text)
    mask = _scan(contents).mask
    return [
        i for i, line in enumerate(contents) if not mask[i] and _PARSE_DECISIONS_HEADING.match(line.strip())
    ]


def nap_entry_lines(text: str) -> list[int]:
    """Lines outside fenced code where Squad's `nap` starts an entry."""
    _, contents = _split_lines(text)
    mask = _scan(contents).mask
    return [i for i, line in enumerate(contents) if not mask[i] and _NAP_ENTRY.match(line)]


def markdown_text(*extra: str, lines: int) -> st.SearchStrategy[str]:
    """Up to `lines` lines, each a line teams write (MARKDOWN_LINES and `extra`) or any short text."""
    return st.lists(
        st.one_of(st.sampled_from([*MARKDOWN_LINES, *extra]), st.text(max_size=12)), max_size=lines
    ).map("\n".join)


markdown_body = markdown_text("  ## indented", "   ### 2026-01-01: indented", "#### deep", "## ", lines=25)


@FAST
@given(body=markdown_body, note=markdown_body, title=st.text(max_size=40))
def test_squads_readers_see_one_decision_in_a_block_canon_writes(body, note, title):
    text = squad.render_block(date=WHEN, title=title, author="Juno", body=body, note=note, ref=9)
    assert squad_decision_lines(text) == [0]
    assert nap_entry_lines(text) == [0]


@FAST
@given(
    title=st.text(),
    body=markdown_body,
    date=st.datetimes(
        min_value=datetime(1900, 1, 2),
        max_value=datetime(2200, 1, 1),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=-8)), timezone(timedelta(hours=5, minutes=30))]
        ),
    ),
    ref=st.one_of(st.none(), st.integers(min_value=1, max_value=10**12)),
)
def test_render_block_reads_back_as_one_block_with_its_title_and_time(title, body, date, ref):
    text = squad.render_block(date=date, title=title, author="Marlow", body=body, ref=ref)
    [block] = parts_of(text)
    assert isinstance(block, Block)
    assert (block.text, block.title, block.date) == (
        text,
        _one_line(title),
        date.astimezone(UTC).replace(microsecond=0),
    )


@FAST
@given(
    first=markdown_body, second=markdown_body, glue=st.sampled_from(["\n", "\n---\n\n", "---\n\n", "\n\n"])
)
def test_blocks_canon_writes_keep_their_text_wherever_they_stand_in_a_log(first, second, glue):
    a = squad.render_block(date=WHEN, title="Cache tide tables", author="Marlow", body=first, ref=1)
    b = squad.render_block(date=WHEN, title="Tag releases", author="Kestrel", body=second, ref=2)
    log = TEAM_LOG + glue + a + glue + b
    blocks = blocks_of(log)
    assert [block.text for block in blocks[-2:]] == [a, b]
    assert [block.text for block in blocks[:-2]] == [block.text for block in blocks_of(TEAM_LOG)]


def test_no_two_blocks_canon_writes_share_a_heading():
    one = squad.render_block(date=WHEN, title="Tag releases", author="Kestrel", body="x", ref=1)
    two = squad.render_block(date=WHEN, title="Tag releases", author="Kestrel", body="x", ref=2)
    assert one.splitlines()[0] != two.splitlines()[0]


# --- Canon's own inbox files ------------------------------------------------------------------------------


def canon_proposal(**changes: Any) -> str:
    fields: dict[str, Any] = {
        "date": datetime(2026, 11, 26, 11, 4, 35, 512_000, tzinfo=UTC),
        "title": "Queue jobs in PostgreSQL",
        "author": "Marlow",
        "content": "## Context\n\nJobs arrive in bursts.\n\n```sql\n### not a heading\nSELECT 1;\n```",
        "rationale": "One database to back up.\n\n**Pros:** fewer moving parts.",
        "type": "architectural",
        "importance": "high",
        "tags": ["queue", "postgres"],
        "run_id": "run-2026-11-26-a",
    }
    fields.update(changes)
    return squad.render_proposal(**fields)


def test_render_proposal_writes_squad_decides_shape_with_canons_fields():
    assert canon_proposal() == (
        "### 2026-11-26: Queue jobs in PostgreSQL (11:04:35Z)\n"
        "**By:** Marlow\n"
        "**What:** Queue jobs in PostgreSQL\n"
        "**Type:** architectural\n"
        "**Importance:** high\n"
        "**Tags:** queue, postgres\n"
        "**Run:** run-2026-11-26-a\n"
        "\n"
        "#### Context\n"
        "\n"
        "Jobs arrive in bursts.\n"
        "\n"
        "```sql\n"
        "### not a heading\n"
        "SELECT 1;\n"
        "```\n"
        "\n"
        "**Why:** One database to back up.\n"
        "\n"
        "**Pros:** fewer moving parts.\n"
    )


def test_render_proposal_leaves_out_what_is_not_set():
    text = canon_proposal(type="", importance="", tags=[], run_id="", rationale="", content="Rows.")
    assert text == (
        "### 2026-11-26: Queue jobs in PostgreSQL (11:04:35Z)\n**By:** Marlow\n"
        "**What:** Queue jobs in PostgreSQL\n\nRows.\n"
    )


def test_a_rationale_opening_with_code_starts_below_the_why_field():
    text = canon_proposal(rationale="```sh\nmake bench\n```")
    assert text.endswith("\n**Why:**\n```sh\nmake bench\n```\n")
    assert squad.parse_native_proposal("marlow-q.md", text, AGENTS).rationale == "```sh\nmake bench\n```"


def test_canons_proposal_reads_back_field_by_field():
    proposal = squad.parse_native_proposal("marlow-queue-jobs-in-postgresql.md", canon_proposal(), AGENTS)
    assert proposal == squad.Proposal(
        slug="marlow-queue-jobs-in-postgresql",
        agent="Marlow",
        title="Queue jobs in PostgreSQL",
        type="architectural",
        content="#### Context\n\nJobs arrive in bursts.\n\n```sql\n### not a heading\nSELECT 1;\n```",
        rationale="One database to back up.\n\n**Pros:** fewer moving parts.",
        date=datetime(2026, 11, 26, 11, 4, 35, tzinfo=UTC),
        importance="high",
        tags=("queue", "postgres"),
        run_id="run-2026-11-26-a",
    )


def test_a_title_starting_with_decision_reads_back():
    text = canon_proposal(title="Decision: keep Redis")
    assert text.startswith("### 2026-11-26: Decision: Decision: keep Redis (11:04:35Z)\n")
    assert squad.parse_native_proposal("m.md", text, AGENTS).title == "Decision: keep Redis"


def js_trim_end(text: str) -> str:
    """JavaScript's `String.prototype.trimEnd`: white space and line terminators as ECMAScript names them."""
    return re.sub("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+\\Z", "", text)


def test_squad_nap_appending_canons_proposal_appends_one_block():
    text = canon_proposal()
    appended = TEAM_LOG + "\n" + js_trim_end(text) + "\n"
    parts = parts_of(appended)
    assert isinstance(parts[-1], Block)
    assert parts[-1].text == js_trim_end(text) + "\n"
    assert [b.text for b in blocks_of(appended)][:-1] == [b.text for b in blocks_of(TEAM_LOG)]
    assert (parts[-1].title, parts[-1].author) == ("Queue jobs in PostgreSQL", "Marlow")


_ENDS_WHY = {
    "by",
    "author",
    "owner",
    "date",
    "type",
    "importance",
    "tags",
    "run",
    "what",
    "status",
    "references",
    "why",
    "rationale",
}


def restricted(text: str) -> bool:
    """True when `text` holds no line outside fenced code that a proposal reads as one of its fields:
    a Why/Rationale heading or a bold field that ends a `**Why:**` (render_proposal's documented limits)."""
    _, contents = _split_lines(text)
    mask = _scan(contents).mask
    for i, line in enumerate(contents):
        if mask[i]:
            continue
        heading = _heading(line)
        if heading is not None and heading[1].rstrip(":").strip().casefold() in ("why", "rationale"):
            return False
        field = _FIELD.match(line) if "**" in line else None
        if field is not None and field.group(1).strip().casefold() in _ENDS_WHY:
            return False
    return True


def ends_with_rule(text: str) -> bool:
    lines = [line for line in text.replace("\r", "\n").split("\n") if line.strip()]
    return bool(lines) and re.fullmatch(r"---[ \t]*", lines[-1]) is not None


proposal_body = markdown_text("## Context", "### Option A", "- **Pros:** fewer parts", "Date: soon", lines=20)
one_line = st.text(max_size=30).map(_one_line)
proposals = st.fixed_dictionaries(
    {
        "date": st.datetimes(
            min_value=datetime(1900, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
        ),
        "title": one_line,
        "author": st.sampled_from(["Marlow", "Juno", "Kestrel Ó'Brien", "Zoë", "李雷", "agent-7"]),
        "content": proposal_body.filter(restricted),
        "rationale": proposal_body.filter(restricted),
        "type": st.sampled_from(["", *squad.ENTRY_TYPES]),
        "importance": st.sampled_from(["", *squad.IMPORTANCE_LEVELS]),
        "tags": st.lists(one_line.filter(lambda tag: tag and "," not in tag), max_size=4),
        "run_id": one_line,
    }
).filter(lambda p: not ends_with_rule(p["rationale"] if p["rationale"].strip() else p["content"]))


@FAST
@given(proposals)
def test_canons_proposal_reads_back_and_writes_again_unchanged(fields):
    text = squad.render_proposal(**fields)
    proposal = squad.parse_native_proposal("marlow-x.md", text, AGENTS)
    assert (proposal.title, proposal.agent, proposal.type, proposal.importance) == (
        fields["title"],
        fields["author"],
        fields["type"],
        fields["importance"],
    )
    assert (proposal.tags, proposal.run_id, proposal.date) == (
        tuple(fields["tags"]),
        fields["run_id"],
        fields["date"].replace(microsecond=0),
    )
    again = squad.render_proposal(
        date=proposal.date or WHEN,
        title=proposal.title,
        author=proposal.agent,
        content=proposal.content,
        rationale=proposal.rationale,
        type=proposal.type,
        importance=proposal.importance,
        tags=proposal.tags,
        run_id=proposal.run_id,
    )
    assert again == text


plain_lines = st.lists(
    st.one_of(
        st.sampled_from(["#### Detail", "- a bullet", "| a | b |", "Date: soon", "---", "שלום", "", "  "]),
        st.text(alphabet=st.characters(blacklist_characters="\n\r#`~*"), max_size=12),
    ),
    max_size=12,
).map("\n".join)


@FAST
@given(
    content=plain_lines, rationale=plain_lines.filter(lambda text: text.strip() and not ends_with_rule(text))
)
def test_content_and_rationale_without_shallow_headings_or_code_read_back_exactly(content, rationale):
    text = canon_proposal(content=content, rationale=rationale)
    proposal = squad.parse_native_proposal("marlow-x.md", text, AGENTS)
    assert (proposal.content, proposal.rationale) == (content.strip(), rationale.strip())


@FAST
@given(proposals)
def test_squad_nap_appends_any_canon_proposal_as_one_block(fields):
    text = squad.render_proposal(**fields)
    appended = js_trim_end(text) + "\n"
    parts = parts_of(TEAM_LOG + "\n" + appended)
    assert parts[-1] == blocks_of(appended)[0]
    assert parts[-1].text == appended
    assert nap_entry_lines(text) == [0] and squad_decision_lines(text) == [0]


# --- inbox files Squad and people write -----------------------------------------------------------------

# As squad-sdk 0.13.1's `squad_decide` writes it: no blank lines, no final newline.
SQUAD_DECIDE = (
    "### 2026-11-26T11-04-35: Queue jobs in PostgreSQL\n"
    "**By:** Marlow\n"
    "**What:** Queue jobs in PostgreSQL\n"
    "**References:** kestrel, #41\n"
    "**Why:** One database to back up.\n\nThe load is a few jobs a minute."
)


def test_squad_decide_file_reads_title_time_agent_and_a_rationale_of_several_paragraphs():
    proposal = squad.parse_native_proposal("marlow-queue-jobs-in-postgresql.md", SQUAD_DECIDE, AGENTS)
    assert (proposal.title, proposal.date, proposal.agent, proposal.rationale) == (
        "Queue jobs in PostgreSQL",
        datetime(2026, 11, 26, 11, 4, 35, tzinfo=UTC),
        "Marlow",
        "One database to back up.\n\nThe load is a few jobs a minute.",
    )


def test_squad_decide_file_keeps_only_what_no_attribute_holds_in_its_content():
    assert squad.parse_native_proposal("m.md", SQUAD_DECIDE, AGENTS).content == "**References:** kestrel, #41"


def test_the_heading_that_gives_the_title_is_not_content():
    text = "# Decision: Queue berth bookings\n\n**Status:** Proposed\n\nBookings arrive in bursts.\n"
    proposal = squad.parse_native_proposal("marlow-berth.md", text, AGENTS)
    assert (proposal.title, proposal.content) == (
        "Queue berth bookings",
        "**Status:** Proposed\n\nBookings arrive in bursts.",
    )


def test_a_what_field_saying_more_than_the_title_stays_content():
    text = "### 2026-03-02T14:05:11Z: User directive\n**By:** user (via Copilot)\n**What:** Tag releases.\n"
    proposal = squad.parse_native_proposal("copilot-directive.md", text, AGENTS)
    assert proposal.content == "**What:** Tag releases."


def test_fields_further_down_stay_content():
    text = "# Retry policy\n\nRetry twice.\n\n**Type:** process\n"
    proposal = squad.parse_native_proposal("kestrel-retry.md", text, AGENTS)
    assert (proposal.type, proposal.content) == ("process", "Retry twice.\n\n**Type:** process")


def test_a_file_without_canons_fields_gets_their_defaults():
    proposal = squad.parse_native_proposal("m.md", SQUAD_DECIDE, AGENTS)
    assert (proposal.importance, proposal.tags, proposal.run_id) == ("", (), "")


def test_an_importance_canon_does_not_know_is_empty():
    text = "# Retry policy\n**Importance:** Urgent!\n**Tags:** ops, , retries \n"
    proposal = squad.parse_native_proposal("k.md", text, AGENTS)
    assert (proposal.importance, proposal.tags) == ("", ("ops", "retries"))


def test_the_heading_date_wins_over_a_plain_date_line_in_the_text():
    text = "### 2026-11-26T11-04-35: Move the cron\n**By:** Kestrel\n\nDate: whenever ops agree, 2027-01-01\n"
    assert squad.parse_native_proposal("k.md", text, AGENTS).date == datetime(
        2026, 11, 26, 11, 4, 35, tzinfo=UTC
    )


# --- Squad's governed-memory inbox files ----------------------------------------------------------------

MEMORY_META = {
    "id": "8845bc6c-d3f8-4705-8d80-cdeacd5ffd76",
    "class": "DECISION",
    "loadGuidance": ["ALWAYS"],
    "title": "Harbour map: colours",
    "author": "juno",
    "createdAt": "2026-11-26T15:17:05.185Z",
    "metadata": {},
}
MEMORY_BODY = "\nUse the sea palette.\r\n\r\n## Why\r\n\r\nNight mode — ünreadable.\n"


def test_squad_memory_decision_reads_agent_title_date_content_and_slug():
    proposal = squad.parse_squad_memory(
        "decisions/inbox/juno-harbour-map-colours-8845bc6c.md", MEMORY_META, MEMORY_BODY
    )
    assert proposal == squad.Proposal(
        slug="juno-harbour-map-colours-8845bc6c",
        agent="juno",
        title="Harbour map: colours",
        type="",
        content="Use the sea palette.\n\n## Why\n\nNight mode — ünreadable.",
        rationale="",
        date=datetime(2026, 11, 26, 15, 17, 5, 185_000, tzinfo=UTC),
    )


def test_squad_memory_without_an_author_names_nobody():
    meta = {**MEMORY_META, "author": "unknown"}
    assert squad.parse_squad_memory("retry-twice-c7067e96.md", meta, "Retry twice.\n").agent == ""


@pytest.mark.parametrize(
    "meta", [{}, {"title": None, "author": ["x"], "createdAt": 17}, {"title": 42, "createdAt": "soon"}]
)
def test_squad_memory_with_odd_front_matter_never_raises(meta):
    proposal = squad.parse_squad_memory("x-1.md", meta, "")
    assert (proposal.agent, proposal.date, proposal.content) == ("", None, "")
