"""One search across the ledger (`ledger.finder.find`, docs/api.md "Search"): every kind of row in one
list, best first, with what each reader may see and nothing more."""

# The ledger is written as people write: en dashes stay.
# ruff: noqa: RUF001

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import finder, services
from ledger.models import AgentMemory, Decision, Episode, InboxEntry, Project, Session, Source
from ledger.search import EXCERPT_LENGTH

MARLOW, JUNO, ZOE = "Marlow", "Juno", "Zoë"


@dataclass
class Ledger:
    """The ids of a small team's ledger, written the way a Squad team writes."""

    queue: Decision
    palette: Decision
    redis: Decision
    jitter: AgentMemory
    juno_private: AgentMemory
    shared: AgentMemory
    ended: AgentMemory
    open_session: Session
    marlow_run: Episode
    juno_run: Episode
    proposal: InboxEntry
    juno_learning: InboxEntry


def decide(project: Project, title: str, content: str, rationale: str = "", agent: str = MARLOW) -> Decision:
    return services.decision_create(
        project=project,
        agent_name=agent,
        type="technical",
        title=title,
        content=content,
        rationale=rationale,
        by="lead",
    )


def remember(project: Project, agent: str, content: str, **fields: object) -> AgentMemory:
    return services.memory_record(
        project=project, agent_name=agent, type="learning", content=content, **fields
    )


@pytest.fixture
def ledger(project: Project) -> Ledger:
    redis = decide(
        project,
        "2026-02-18: Queue jobs in Redis",
        "**What:** Background jobs go to a Redis list.",
        "**Why:** Redis was already running.",
    )
    queue = decide(
        project,
        "2026-03-02T14:05:11Z: Queue jobs in PostgreSQL, not Redis",
        "**What:** Background jobs are rows claimed with SELECT … FOR UPDATE SKIP LOCKED.",
        "**Why:** One database to back up; the load is a few jobs a minute.",
    )
    services.decision_supersede(project=project, decision_id=redis.pk, superseded_by_id=queue.pk, by="lead")
    palette = decide(
        project,
        "2026-02-27 PT — Juno: colour tokens for the terminal UI",
        "## Decision\n\nUse the five palette tokens below for every panel:\n- `bg`: `#0b1320`\n- `fg`: `#e8f0ff`",
        "## Why\n\nPanels looked inconsistent across themes.",
        agent=JUNO,
    )
    jitter = remember(
        project,
        MARLOW,
        "**Retries need jitter:**\nThree clients retrying on the same second overloaded the gateway; "
        "add 0–500 ms of jitter.",
    )
    juno_private = remember(
        project,
        JUNO,
        "📌 2026-03-01 — The Ångström palette lives in `tokens.css`; the gateway never sees it.",
    )
    shared = services.memory_record(
        project=project,
        agent_name=project.coordinator_agent,
        type="learning",
        content="Never force-push to main: the gateway config was lost twice.",
        tags=["cross-team"],
        source=Source.COORDINATOR,
        injected_by="lead",
    )
    services.session_start(
        project=project,
        session_id="s-0301",
        summary="Froze the sync contract at v2; the web team builds on it.",
    )
    open_session = services.session_start(
        project=project,
        session_id="s-0302",
        summary="Moving the job queue off Redis; Juno pairs on the retry panel.",
        by=MARLOW,
    )
    ended = AgentMemory.objects.get(source=Source.SESSION_SUMMARY, session_id="s-0301")
    marlow_run = services.episode_record(
        project=project,
        agent_name=MARLOW,
        run_id="run-41",
        outcome="failed",
        tried="Moved the job queue to Redis streams.",
        difficulties="Consumers lost messages on restart.",
        files=["ledger/queue/worker.py"],
    ).episode
    juno_run = services.episode_record(
        project=project,
        agent_name=JUNO,
        run_id="run-42",
        outcome="succeeded",
        tried="Rebuilt the retry panel with the palette tokens.",
    ).episode
    proposal = services.entry_submit(
        project=project,
        agent_name=JUNO,
        slug="juno-retry-panel",
        type="technical",
        title="Show job retries in the panel",
        content="The retry panel lists each job's attempts.",
    ).entry
    juno_learning = services.entry_submit(
        project=project,
        agent_name=JUNO,
        slug="juno-gateway-throttle",
        type="learning",
        content="The gateway throttles at 50 requests a second per client.",
    ).entry
    return Ledger(
        queue=queue,
        palette=palette,
        redis=redis,
        jitter=jitter,
        juno_private=juno_private,
        shared=shared,
        ended=ended,
        open_session=open_session,
        marlow_run=marlow_run,
        juno_run=juno_run,
        proposal=proposal,
        juno_learning=juno_learning,
    )


def found(project: Project, q: str, agent: str | None = None, **options: object) -> list[tuple[str, int]]:
    hits = finder.find(project, agent_name=agent, coordinator=agent is None, q=q, **options)  # type: ignore[arg-type]
    return [(hit.kind, hit.id) for hit in hits]


# Every kind, one list ------------------------------------------------------------------------------


def test_a_coordinator_finds_every_kind_of_row_in_one_list(project, ledger):
    hits = found(project, "queue")
    assert set(hits) == {
        ("decision", ledger.queue.pk),
        ("summary", finder.OPEN_SUMMARY_ID),
        ("episode", ledger.marlow_run.pk),
    }


def test_each_hit_says_what_it_is_where_it_matched_and_shows_the_words(project, ledger):
    [hit] = finder.find(project, agent_name=None, coordinator=True, q="jobs", kinds="decision")
    assert (hit.kind, hit.id, hit.status, hit.agent) == ("decision", ledger.queue.pk, "active", MARLOW)
    assert hit.title == "2026-03-02T14:05:11Z: Queue jobs in PostgreSQL, not Redis"
    assert hit.why == (
        finder.Why("title", ("jobs",)),
        finder.Why("content", ("jobs",)),
        finder.Why("rationale", ("jobs",)),
    )
    assert hit.words == ("jobs",)
    assert hit.excerpt == (
        "**What:** Background <mark>jobs</mark> are rows claimed with SELECT … FOR UPDATE SKIP LOCKED."
    )
    assert 0 < hit.score <= 1


def test_a_memory_is_titled_by_its_first_line_without_its_markdown(project, ledger):
    [hit] = finder.find(project, agent_name=None, coordinator=True, q="jitter", kinds="memory")
    assert hit.title == "Retries need jitter:"
    assert hit.excerpt.endswith("add 0–500 ms of <mark>jitter</mark>.")


def test_the_words_of_a_query_match_their_other_forms(project, ledger):
    [hit] = finder.find(project, agent_name=None, coordinator=True, q="retrying", kinds="memory")
    assert hit.id == ledger.jitter.pk
    assert hit.why == (finder.Why("content", ("retrying",)),)
    assert "<mark>Retries</mark>" in hit.excerpt and "<mark>retrying</mark>" in hit.excerpt


def test_a_long_text_is_excerpted_around_its_matches(project):
    filler = "The deploy script copies the static files first. " * 30
    decision = decide(project, "Release checklist", filler + "Then the rollback tag is pushed." + filler)
    [hit] = finder.find(project, agent_name=None, coordinator=True, q="rollback", kinds="decision")
    assert hit.id == decision.pk
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…")
    assert "<mark>rollback</mark> tag is pushed" in hit.excerpt
    assert len(hit.excerpt.replace("<mark>", "").replace("</mark>", "")) <= EXCERPT_LENGTH + 2
    assert "\n" not in hit.excerpt


def test_an_episode_is_found_by_what_it_tried_and_the_files_it_touched(project, ledger):
    hits = finder.find(project, agent_name=None, coordinator=True, q="worker", kinds="episode")
    assert [(h.id, h.status, h.run_id) for h in hits] == [(ledger.marlow_run.pk, "failed", "run-41")]
    assert hits[0].why == (finder.Why("files", ("worker",)),)
    assert hits[0].title == "Moved the job queue to Redis streams."


def test_summaries_of_the_ended_and_the_open_session_are_found(project, ledger):
    ended = finder.find(project, agent_name=MARLOW, coordinator=False, q="contract", kinds="summary")
    assert [(h.id, h.status, h.session_id) for h in ended] == [(ledger.ended.pk, "ended", "s-0301")]
    current = finder.find(project, agent_name=MARLOW, coordinator=False, q="pairs", kinds="summary")
    assert [(h.id, h.status, h.session_id, h.agent) for h in current] == [
        (finder.OPEN_SUMMARY_ID, "open", "s-0302", MARLOW)
    ]
    assert current[0].excerpt == "Moving the job queue off Redis; Juno <mark>pairs</mark> on the retry panel."


def test_a_summary_is_not_listed_again_as_a_memory(project, ledger):
    assert ("memory", ledger.ended.pk) not in found(project, "contract")


def test_rows_of_another_project_are_never_found(project, other_project, ledger):
    theirs = decide(other_project, "Queue jobs in SQS", "Jobs go to SQS.")
    their_memory = remember(other_project, MARLOW, "The SQS queue holds jobs for 14 days.")
    assert set(found(other_project, "queue jobs")) == {("decision", theirs.pk), ("memory", their_memory.pk)}
    ours = found(project, "queue jobs")
    assert ("decision", ledger.queue.pk) in ours
    assert ("decision", theirs.pk) not in ours and ("memory", their_memory.pk) not in ours


# Who sees what -------------------------------------------------------------------------------------


def test_an_agent_finds_its_own_memories_the_shared_ones_and_never_another_agents(project, ledger):
    assert set(found(project, "gateway", agent=MARLOW, kinds="memory")) == {
        ("memory", ledger.jitter.pk),
        ("memory", ledger.shared.pk),
    }
    assert ("memory", ledger.juno_private.pk) in found(project, "gateway", agent=JUNO)
    assert ("memory", ledger.juno_private.pk) in found(project, "gateway")


PRIVATE_WORDS = [
    "ångström",
    "angstrom",
    "palette",
    "lives",
    "tokens",
    "css",
    "gateway",
    "never",
    "sees",
    "2026",
]
OTHER_WORDS = ["queue", "jobs", "retry", "panel", "jitter", "main", "summary", "the", "of", "redis"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    words=st.lists(st.sampled_from(PRIVATE_WORDS + OTHER_WORDS), min_size=1, max_size=6),
    kinds=st.sampled_from([None, "memory", "memory,summary", "decision,memory,episode"]),
    inactive=st.booleans(),
)
def test_a_private_memory_of_another_agent_is_never_found_by_any_query(
    project, ledger, words, kinds, inactive
):
    q = " ".join(words)
    hits = finder.find(
        project, agent_name=MARLOW, coordinator=False, q=q, limit=100, kinds=kinds, inactive=inactive
    )
    assert ("memory", ledger.juno_private.pk) not in {(h.kind, h.id) for h in hits}


def test_the_private_memory_is_findable_by_its_own_agent_with_those_words(project, ledger):
    """The property above is not empty: the same queries find the memory for Juno."""
    assert ("memory", ledger.juno_private.pk) in found(project, "Ångström palette", agent=JUNO)
    assert ("memory", ledger.juno_private.pk) not in found(project, "Ångström palette", agent=MARLOW)


def test_an_archived_private_memory_stays_private_when_inactive_rows_are_asked_for(project, ledger):
    services.memory_archive(project=project, memory_id=ledger.juno_private.pk, by=JUNO)
    assert ("memory", ledger.juno_private.pk) not in found(project, "palette", agent=MARLOW, inactive=True)
    assert ("memory", ledger.juno_private.pk) in found(project, "palette", agent=JUNO, inactive=True)


def test_an_agent_finds_only_its_own_episodes(project, ledger):
    assert found(project, "retry", agent=MARLOW, kinds="episode") == []
    assert found(project, "retry", agent=JUNO, kinds="episode") == [("episode", ledger.juno_run.pk)]
    assert ("episode", ledger.juno_run.pk) in found(project, "retry")


def test_inbox_entries_are_found_by_coordinators_only(project, ledger):
    assert ("entry", ledger.proposal.pk) in found(project, "retries panel")
    assert all(kind != "entry" for kind, _ in found(project, "retries panel", agent=JUNO))
    with pytest.raises(services.Invalid, match="coordinators only"):
        finder.find(project, agent_name=JUNO, coordinator=False, q="panel", kinds="entry")


def test_a_coordinator_searching_as_an_agent_sees_the_entries_that_agent_may_see(project, ledger):
    as_marlow = finder.find(
        project, agent_name=MARLOW, coordinator=True, q="gateway throttles", kinds="entry"
    )
    assert as_marlow == []
    as_juno = finder.find(project, agent_name=JUNO, coordinator=True, q="gateway throttles", kinds="entry")
    assert [h.id for h in as_juno] == [ledger.juno_learning.pk]


# What is no longer in force -------------------------------------------------------------------------


def test_a_superseded_decision_is_left_out_unless_asked_for_then_ranked_lower_and_marked(project, ledger):
    assert found(project, "queue jobs redis", kinds="decision") == [("decision", ledger.queue.pk)]
    hits = finder.find(
        project, agent_name=None, coordinator=True, q="queue jobs redis", kinds="decision", inactive=True
    )
    assert [(h.id, h.status) for h in hits] == [(ledger.queue.pk, "active"), (ledger.redis.pk, "superseded")]
    assert hits[1].score <= finder.INACTIVE_WEIGHT


def test_archived_and_expired_memories_are_left_out_unless_asked_for(project, ledger):
    services.memory_archive(project=project, memory_id=ledger.jitter.pk, by=MARLOW)
    expired = remember(project, MARLOW, "The gateway certificate rotates on Mondays.")
    AgentMemory.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    assert found(project, "gateway", agent=MARLOW, kinds="memory") == [("memory", ledger.shared.pk)]
    hits = finder.find(
        project, agent_name=MARLOW, coordinator=False, q="gateway", kinds="memory", inactive=True
    )
    statuses = {h.id: h.status for h in hits}
    assert statuses == {ledger.shared.pk: "active", ledger.jitter.pk: "archived", expired.pk: "expired"}
    assert hits[0].id == ledger.shared.pk


def test_decided_inbox_entries_are_left_out_unless_asked_for(project, ledger):
    services.entry_reject(project=project, entry_id=ledger.proposal.pk, by="lead", reason="later")
    assert found(project, "retries panel", kinds="entry") == []
    hits = finder.find(project, agent_name=None, coordinator=True, q="retries", kinds="entry", inactive=True)
    assert [(h.id, h.status) for h in hits] == [(ledger.proposal.pk, "rejected")]


# One order ------------------------------------------------------------------------------------------


def test_hits_come_best_first_and_the_limit_holds(project, ledger):
    for n in range(30):
        remember(project, MARLOW, f"Gateway note {n}: the gateway drops idle connections after {n} minutes.")
    hits = finder.find(project, agent_name=None, coordinator=True, q="gateway", limit=7)
    assert len(hits) == 7
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_row_holding_more_of_the_query_comes_before_the_best_of_another_kind(project, ledger):
    """Scores of different kinds compare: the memory holding three of the words comes before the best
    decision, which holds one of them."""
    hits = finder.find(project, agent_name=MARLOW, coordinator=False, q="clients overloaded gateway tokens")
    assert hits[0].kind == "memory" and hits[0].id == ledger.jitter.pk
    assert hits[0].words == ("clients", "overloaded", "gateway")
    palette = next(h for h in hits if h.kind == "decision")
    assert palette.id == ledger.palette.pk and palette.score < hits[0].score


def test_equal_scores_put_decisions_first(project, ledger):
    hits = finder.find(project, agent_name=None, coordinator=True, q="redis")
    assert hits[0].kind == "decision"
    assert {h.score for h in hits if h.kind in ("decision", "episode")} == {1.0}


# Refusals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("q", ["", "   ", "\n"])
def test_a_blank_query_is_refused(project, q):
    with pytest.raises(services.Invalid, match="q: must not be blank"):
        finder.find(project, agent_name=None, coordinator=True, q=q)


def test_a_query_longer_than_a_task_is_refused(project):
    with pytest.raises(services.Invalid, match="q: must be at most 2000 characters, got 2001"):
        finder.find(project, agent_name=None, coordinator=True, q="a" * 2001)


def test_a_query_of_stop_words_only_finds_nothing(project, ledger):
    assert finder.find(project, agent_name=None, coordinator=True, q="which of the") == []


@pytest.mark.parametrize("limit", [0, 101, -1])
def test_a_limit_outside_its_range_is_refused(project, limit):
    with pytest.raises(services.Invalid, match="limit: must be between 1 and 100"):
        finder.find(project, agent_name=None, coordinator=True, q="queue", limit=limit)


def test_an_unknown_kind_is_refused_naming_the_kinds(project):
    with pytest.raises(services.Invalid, match="kinds: 'decisions': not one of decision, memory"):
        finder.find(project, agent_name=None, coordinator=True, q="queue", kinds="decisions,memory")


def test_an_agent_must_be_named_unless_a_coordinator_searches(project):
    with pytest.raises(services.Invalid, match="agent"):
        finder.find(project, agent_name=None, coordinator=False, q="queue")


def test_an_agent_the_project_does_not_have_is_not_found(project, ledger):
    with pytest.raises(services.NotFound, match="no agent 'Zoë'"):
        finder.find(project, agent_name=ZOE, coordinator=True, q="queue")


def test_query_syntax_is_read_as_words(project, ledger):
    hits = found(project, 'queue" OR (jobs* -redis) : ')
    assert ("decision", ledger.queue.pk) in hits
