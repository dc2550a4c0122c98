"""The compiled block is structured by Canon alone (docs/compiler.md, "Untrusted text"): read by a
CommonMark parser, its headings, code blocks, HTML blocks and thematic breaks are exactly the ones
Canon puts there, whatever text the ledger holds."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ledger import context, services
from ledger.models import Project
from ledger.untrusted import heading
from ledger.values import InvalidValue, agent_key, agent_skeleton

MARKDOWN = MarkdownIt("commonmark")
# The block-level tokens that give the block its shape; Canon's own are headings only.
SHAPING = ("heading_open", "fence", "code_block", "html_block", "hr")
TASK = "Add a retry to the billing webhook handler"
LAYER_HEADINGS = {
    "boundaries": context.BOUNDARIES_HEADING.split("\n")[0],
    "memory": context.MEMORY_HEADING,
    "relevant": context.RELEVANT_HEADING,
    "session": context.SESSION_HEADING,
}


def shape(text: str) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """`text` as CommonMark reads it: each shaping block in order, a heading as its tag and its text
    (`("h2", "Memory")`), any other as its type and its content; and the link references it defines."""
    env: dict[str, Any] = {}
    tokens = MARKDOWN.parse(text, env)
    found = []
    for number, token in enumerate(tokens):
        if token.type == "heading_open":
            found.append((token.tag, tokens[number + 1].content))
        elif token.type in SHAPING:
            found.append((token.type, token.content))
    return found, env.get("references", {})


def layer_heading(layer: str) -> tuple[str, str]:
    return ("h2", LAYER_HEADINGS[layer].removeprefix("## "))


def canon_shape(result: context.CompiledContext, titles: dict[int, str]) -> list[tuple[str, str]]:
    """The headings Canon puts in the block of `result`: a layer's heading when it holds something,
    and each boundary's title; `titles` are the decisions' stored titles by id."""
    expected = []
    if result.boundaries.ids:
        expected.append(layer_heading("boundaries"))
        expected += [("h3", heading(titles[pk])) for pk in result.boundaries.ids]
    if result.memory.ids:
        expected.append(layer_heading("memory"))
    if result.relevant.ids or result.relevant.episodes or result.relevant.decisions:
        expected.append(layer_heading("relevant"))
    if result.session.ids:
        expected.append(layer_heading("session"))
    return expected


# Pieces of text that open or close a block in CommonMark, or that Canon's own structure uses.
FRAGMENTS = [
    "```", "````", "~~~", "~~~~~ py", "<!--", "-->", "<div>", "</div>", "<script>", "</script>", "<pre>",
    "<?php", "?>", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<my-tag>", "</p>", "* * *", "***", "---",
    "- - -", "___", "_ _ _", "-- -", "#", "## ", "###### ", "# Memory", "## Boundaries and Decisions",
    ">", "> ", "**Type:** ", "**Decided by:** ", "> **Rationale:** ", "**Focus:** ", "===", "=", "-",
    "*", "+", "1.", "2)", "- ", "* ", "+ ", "10. ", "- [core] ", "[core]: /x", "[", "]: /y", "\\", "`",
    "~", "<", "\n", "\n\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\t", " ", "  ",
    "    ", "      ", "\u00a0", "\u3000", "\u200b", "\u202e", "\ufeff", "\uff03", "x", "a b",
]  # fmt: skip
markdownish = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=24).map("".join)
# Lines shaped as CommonMark reads them: indentation, list markers, what may open a block, the rest.
OPENERS = [
    "```", "~~~", "<!--", "<div>", "<?x", "<![CDATA[", "<!X", "<a>", "</a>", "* * *", "***", "- - -",
    "-- -", "___", "_ _ _", "#", "# ", "###### x", ">", "===", "---", "[x]: /u", "[x", "]: /u", "-", "*",
    "1.",
]  # fmt: skip
markdown_line = st.tuples(
    st.sampled_from(["", " ", "  ", "   ", "    ", "      "]),
    st.lists(st.sampled_from(["- ", "* ", "+ ", "1. ", "2) ", "-    ", "-     "]), max_size=2).map("".join),
    st.sampled_from(OPENERS) | st.text(max_size=3),
    st.sampled_from(FRAGMENTS) | st.text(max_size=6),
).map("".join)
markdown_lines = st.lists(markdown_line | st.just(""), max_size=6).map("\n".join)
# Any text the ledger accepts (it refuses the NUL character).
free_text = (markdown_lines | markdownish | st.text(max_size=40)).map(lambda text: text.replace("\x00", ""))
required_text = free_text.map(lambda text: text if text.strip() else text + "x")
# Text the relevant layer finds for TASK, with free text around the word it is found by.
billing_text = st.tuples(free_text, free_text).map(lambda pair: f"{pair[0]} billing {pair[1]}")
# The agents the test writes as besides those it draws: Alice, who reads the block, and Bob, who
# writes the closed session; the project's coordinator agent keeps its summary.
NAMED = ("Alice", "Bob", "coordinator")


def skeleton(name: str) -> str | None:
    """What an agent's name looks like, or None when no agent can have it."""
    try:
        return agent_skeleton(agent_key(name))
    except InvalidValue:
        return None


# Names are one line wherever they are shown: any name an agent may have, pieces that would open a
# block at the start of a line among them, that looks like none of NAMED.
NAME_PIECES = [
    "#",
    "## ",
    ">",
    "**Type:** ",
    "```",
    "~~~",
    "<!--",
    "<div>",
    "* * *",
    "---",
    "[",
    "]: /x",
    " ",
]
printable = st.text(st.characters(categories=["L", "M", "N", "P", "S"], include_characters=" "), max_size=4)
names = (
    st.lists(st.sampled_from(NAME_PIECES) | printable, min_size=1, max_size=6)
    .map("".join)
    .filter(lambda name: skeleton(name) not in {None, *map(skeleton, NAMED)})
)
# Each example's other agents, no two alike; a row names one by its place (modulo their number).
agents = st.lists(names, min_size=1, max_size=3, unique_by=skeleton)
agent = st.integers(min_value=0, max_value=2)
decisions = st.lists(
    st.tuples(
        required_text.map(lambda title: title[:300]),
        required_text,
        free_text,
        agent,
        st.sampled_from(["architectural", "scope", "process", "technical"]),
    ),
    max_size=3,
)
# A memory's agent: Alice herself (None), or another.
memories = st.lists(
    st.tuples(
        required_text,
        st.none() | agent,
        st.sampled_from(["core_context", "learning", "pattern", "update"]),
        st.sampled_from(["high", "medium", "low"]),
    ),
    min_size=1,
    max_size=4,
)
relevant_memories = st.lists(st.tuples(billing_text, st.none() | agent), max_size=2)
episodes = st.lists(
    st.tuples(billing_text, free_text, free_text, st.sampled_from(["succeeded", "failed", "abandoned"])),
    max_size=2,
)
sessions = st.none() | st.tuples(free_text, st.lists(free_text, max_size=3), free_text, agent)


def build(
    project: Project,
    *,
    agents: list[str],
    decisions: list[tuple[str, str, str, int, str]],
    memories: list[tuple[str, int | None, str, str]],
    relevant: list[tuple[str, int | None]],
    episodes: list[tuple[str, str, str, str]],
    closed_summary: str,
    session: tuple[str, list[str], str, int] | None,
) -> dict[int, str]:
    """Write the ledger Alice's block is compiled from; the decisions' stored titles by id."""

    def name(place: int | None) -> str:
        return "Alice" if place is None else agents[place % len(agents)]

    titles = {}
    for title, content, rationale, author, type_ in decisions:
        decision = services.decision_create(
            project=project,
            agent_name=name(author),
            type=type_,
            title=title,
            content=content,
            rationale=rationale,
            by="lead",
        )
        titles[decision.pk] = decision.title
    for content, author, type_, importance in memories:
        services.memory_record(
            project=project,
            agent_name=name(author),
            type=type_,
            importance=importance,
            content=content,
            tags="cross-team",
        )
    for content, author in relevant:
        services.memory_record(
            project=project, agent_name=name(author), type="learning", content=content, tags="cross-team"
        )
    for number, (tried, difficulties, feedback, outcome) in enumerate(episodes):
        services.episode_record(
            project=project,
            agent_name="Alice",
            run_id=f"run-{number}",
            outcome=outcome,
            tried=tried,
            difficulties=difficulties,
            feedback=feedback,
        )
    # A closed session's summary is a memory every agent may read.
    services.session_start(project=project, session_id="closed", summary=closed_summary, by="Bob")
    if session is None:
        services.session_update_current(project=project, end=True)
    else:
        focus_area, issues, summary, by = session
        services.session_start(
            project=project,
            session_id="open",
            focus_area=focus_area,
            active_issues=issues,
            summary=summary,
            by=name(by),
        )
    return titles


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    agents=agents,
    decisions=decisions,
    memories=memories,
    relevant=relevant_memories,
    episodes=episodes,
    closed_summary=billing_text,
    session=sessions,
)
def test_the_block_has_only_the_structure_canon_gives_it(
    db, agents, decisions, memories, relevant, episodes, closed_summary, session
):
    # Each example writes its ledger and rolls it back: examples do not see each other's rows.
    with transaction.atomic():
        project, _ = services.project_create_or_update(slug="shapes", name="Shapes")
        titles = build(
            project,
            agents=agents,
            decisions=decisions,
            memories=memories,
            relevant=relevant,
            episodes=episodes,
            closed_summary=closed_summary,
            session=session,
        )
        for task in ("", TASK):
            result = context.compile(project, "Alice", task=task)
            assert result.error is None
            found, references = shape(result.text or "")
            assert found == canon_shape(result, titles)
            assert references == {}
        transaction.set_rollback(True)


# --- what was reported: each would have changed the block's shape -------------------------------


def test_an_html_comment_in_a_boundary_hides_nothing_after_it(project):
    services.decision_create(
        project=project,
        agent_name="lead",
        type="architectural",
        title="Use queues",
        content="Queues everywhere.\n<!-- the rest is hidden",
        by="lead",
    )
    services.memory_record(project=project, agent_name="Alice", type="core_context", content="Alice owns it.")
    found, _ = shape(context.compile(project, "Alice").text)
    assert found == [layer_heading("boundaries"), ("h3", "Use queues"), layer_heading("memory")]


def test_an_unclosed_fence_in_a_rationale_swallows_nothing_after_it(project):
    services.decision_create(
        project=project,
        agent_name="lead",
        type="scope",
        title="No billing",
        content="Out of scope.",
        rationale="Because:\n```\nall that follows is code",
        by="lead",
    )
    services.session_start(project=project, session_id="s1", focus_area="Billing")
    found, _ = shape(context.compile(project, "Alice").text)
    assert found == [layer_heading("boundaries"), ("h3", "No billing"), layer_heading("session")]


def test_a_spaced_thematic_break_in_a_memory_draws_no_rule(project):
    services.memory_record(
        project=project, agent_name="Alice", type="core_context", content="Part one.\n* * *\nPart two."
    )
    found, _ = shape(context.compile(project, "Alice").text)
    assert found == [layer_heading("memory")]


@pytest.mark.parametrize("title", ["Use queues ##", "#"])
def test_a_boundary_title_keeps_a_closing_run_of_hashes(project, title):
    decision = services.decision_create(
        project=project, agent_name="lead", type="scope", title=title, content="x", by="lead"
    )
    found, _ = shape(context.compile(project, "Alice").text)
    assert found == [layer_heading("boundaries"), ("h3", heading(decision.title))]
    assert heading(decision.title).endswith("\\" + title.split()[-1])


@pytest.mark.parametrize("name", ["Bob]: /x", 'Bob]: /x "t"', "Bo[b]", "Bob\\"])
def test_an_agent_name_cannot_close_canons_label(project, name):
    """`[learning from {name}]` and `[set by {name}]`: a name holding `]:` with a quoted title after it
    would make the item a link reference definition, hiding the line."""
    services.memory_record(
        project=project,
        agent_name=name,
        type="learning",
        importance="high",
        content='"t"',
        tags="cross-team",
    )
    services.session_start(project=project, session_id="s1", focus_area='"t"', by=name)
    text = context.compile(project, "Alice").text or ""
    _, references = shape(text)
    assert references == {}
    assert text.count('] "t"\n') == 2  # both lines, each with its text after Canon's label
