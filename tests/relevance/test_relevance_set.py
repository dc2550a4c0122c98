"""The relevance set (`corpus`, `measure`): the set itself is sound, and Canon's search and its
task-compiled layer each find the set's targets at least as well as plain BM25 over the same rows.

The floor is plain BM25's hit@5 on this set, measured in the same run on the same engine: search and
the layer must match or beat it. `python bench/relevance.py` prints every figure.
"""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import override_settings

from ledger.search import terms
from ledger.values import agent_key
from tests.relevance import measure
from tests.relevance.corpus import AGENT

# --- The set itself ---


def test_the_set_has_at_least_sixty_tasks_each_with_a_target():
    assert len(measure.tasks()) >= 60
    assert all(task.targets for _, task in measure.tasks())


def test_every_key_names_one_row_of_the_whole_set():
    keys = [
        item.key
        for team in measure.TEAMS
        for item in (*team.decisions, *team.memories, *team.episodes, *team.sessions)
    ]
    assert len(keys) == len(set(keys))


def test_every_target_is_a_row_the_task_agent_may_be_given():
    """In force (not archived, superseded or a boundary), and the agent's own, shared, a decision or a
    summary; an agent's memory written by the agent itself is young enough not to have expired."""
    wrong = []
    for team, task in measure.tasks():
        memories = {m.key: m for m in team.memories}
        episodes = {e.key: e for e in team.episodes}
        for key in task.targets:
            kind = team.kind_of(key)  # raises for a key the team does not have
            mine = (
                kind in ("decision", "summary")
                or (
                    kind == "memory"
                    and (memories[key].shared or agent_key(memories[key].agent) == agent_key(task.agent))
                )
                or (kind == "episode" and agent_key(episodes[key].agent) == agent_key(task.agent))
            )
            if not mine or key in team.retired() or key in team.boundaries():
                wrong.append((task.text, key))
    assert wrong == []


def test_memories_agents_recorded_and_summaries_are_within_their_lifetime():
    """Rows the lifecycle would have expired by their age are not in the set: every row it holds is live."""
    too_old = [
        m.key for team in measure.TEAMS for m in team.memories if m.source == AGENT and m.days_ago >= 180
    ]
    too_old += [s.key for team in measure.TEAMS for s in team.sessions if s.days_ago >= 90]
    assert too_old == []


def test_every_team_has_retired_rows_private_memories_and_boundaries_to_leave_out():
    for team in measure.TEAMS:
        kinds = {team.kind_of(key) for key in team.retired()}
        assert {"decision", "memory"} <= kinds, team.slug
        assert any(not m.shared for m in team.memories), team.slug
        assert team.boundaries(), team.slug


def test_no_task_repeats_the_title_or_first_line_of_a_target():
    """A task is put in other words than its targets: none holds every word of a target's title (a
    decision's title, a memory's or an episode's first line), stop words aside."""
    repeated = []
    for team, task in measure.tasks():
        said = set(terms(task.text))
        titles = {d.key: d.title for d in team.decisions}
        titles |= {m.key: m.content.split("\n")[0] for m in team.memories}
        titles |= {e.key: e.tried.split("\n")[0] for e in team.episodes}
        for key in task.targets:
            words = set(terms(titles.get(key, "")))
            if words and words <= said:
                repeated.append((task.text, key))
    assert repeated == []


# --- The floor ---


@pytest.fixture(scope="module")
def teams(django_db_setup, django_db_blocker):
    """Every team's ledger, loaded once for the checks below (each test then runs in a savepoint of
    its own), in a transaction rolled back after them."""
    with (
        django_db_blocker.unblock(),
        override_settings(CANON_EXPORT_ON_WRITE=False),
        transaction.atomic(),
    ):
        yield measure.load_teams()
        transaction.set_rollback(True)


def test_search_finds_targets_at_least_as_often_as_plain_bm25(teams, db):
    assert measure.search_is_available(), "ledger.finder (one search across the ledger) is missing"
    results = {"search": measure.run("search", teams), "bm25": measure.run("bm25", teams)}
    search, bm25 = (measure.Figures.of(results[s]) for s in ("search", "bm25"))
    assert search.hits[5] >= bm25.hits[5], measure.table(results) + "\n\n" + measure.per_task(results)


def test_the_task_compiled_layer_finds_targets_at_least_as_often_as_plain_bm25(teams, db):
    results = {"layer": measure.run("layer", teams), "bm25": measure.run("bm25", teams)}
    layer, bm25 = (measure.Figures.of(results[s]) for s in ("layer", "bm25"))
    assert layer.hits[5] >= bm25.hits[5], measure.table(results) + "\n\n" + measure.per_task(results)


def test_no_system_returns_a_retired_row_or_another_agents_private_one(teams, db):
    leaked = [
        (system, outcome.task.text, key)
        for system in measure.SYSTEMS
        for outcome in measure.run(system, teams)
        for key in outcome.unseeable()
    ]
    assert leaked == []
