"""The episode tools over MCP, through the SDK's own client in process (docs/mcp.md "Episodes")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ledger.actions.frame import Caller
from ledger.models import Episode, EpisodeSource, Project
from ledger.scribe import scribe_run
from tests.mcp_calls import answer, call, caller_for, refused

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice(project: Project) -> Caller:
    return caller_for(project, "agent", "Alice")


@pytest.fixture
def bob(project: Project) -> Caller:
    return caller_for(project, "agent", "Bob")


@pytest.fixture
def lead(project: Project) -> Caller:
    return caller_for(project, "coordinator")


def record(caller: Caller, **fields: Any) -> Any:
    return call(caller, "record_episode", **{"run_id": "run-1", "outcome": "failed", "tried": "a", **fields})


def test_agent_records_its_run_and_gets_the_api_shape(alice):
    episode = answer(
        record(alice, files=["ledger/scribe.py"], change_url="https://example.com/1", difficulties="slow CI")
    )
    assert episode["agent_name"] == "Alice"
    assert episode["source"] == EpisodeSource.AGENT
    assert episode["files"] == ["ledger/scribe.py"]
    assert set(episode) >= {"id", "run_id", "outcome", "tried", "feedback", "tokens", "created_at"}
    assert Episode.objects.get().difficulties == "slow CI"


def test_same_run_again_updates_the_episode(alice):
    first = answer(record(alice))
    second = answer(record(alice, outcome="succeeded"))
    assert second["id"] == first["id"]
    assert Episode.objects.get().outcome == "succeeded"


def test_agent_cannot_record_for_another_agent(alice):
    refused(record(alice, agent_name="Bob"), "acts as 'Alice'")
    assert not Episode.objects.exists()


def test_coordinator_names_the_agent(lead):
    refused(record(lead), "agent_name")
    episode = answer(record(lead, agent_name="Bob"))
    assert (episode["agent_name"], episode["source"]) == ("Bob", EpisodeSource.COORDINATOR)


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"outcome": "crashed"}, "outcome"),
        ({"change_url": "file:///etc/passwd"}, "change_url"),
        ({"tried": "x" * 20_001}, "tried"),
        ({"files": ["a", 1]}, "files"),
        ({"feedback": "nul \x00"}, "feedback"),
    ],
)
def test_bad_input_is_refused_and_nothing_stored(alice, fields, needle):
    refused(record(alice, **fields), needle)
    assert not Episode.objects.exists()


def test_agent_lists_only_its_own_and_coordinator_all(project, alice, bob, lead):
    mine = answer(record(alice))
    theirs = answer(record(bob))
    listing = answer(call(alice, "list_episodes"))
    assert [e["id"] for e in listing["items"]] == [mine["id"]]
    assert listing["total"] == 1
    assert answer(call(alice, "list_episodes", agent="Bob"))["items"] == []
    everything = answer(call(lead, "list_episodes"))
    assert [e["id"] for e in everything["items"]] == [theirs["id"], mine["id"]]


def test_list_searches_and_filters(alice):
    found = answer(record(alice, difficulties="the migration deadlocked"))
    answer(record(alice, run_id="run-2", outcome="succeeded", difficulties="none"))
    assert [e["id"] for e in answer(call(alice, "list_episodes", q="deadlock"))["items"]] == [found["id"]]
    assert answer(call(alice, "list_episodes", outcome="succeeded"))["total"] == 1
    refused(call(alice, "list_episodes", outcome="crashed"), "outcome")


def test_runtime_episode_replaces_the_scribes(project, alice):
    scribe_run(
        project=project,
        agent_name="Alice",
        run_id="run-1",
        started_at=timezone.now() - timedelta(hours=1),
        outcome="completed",
    )
    assert Episode.objects.get().source == EpisodeSource.SCRIBE
    episode = answer(record(alice, tried="what I really did"))
    assert (episode["source"], episode["tried"], episode["outcome"]) == (
        EpisodeSource.AGENT,
        "what I really did",
        "failed",
    )
    assert Episode.objects.count() == 1


def test_record_counts_a_write(project, alice, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    answer(record(alice))
    refused(record(alice, run_id="run-2"), "writes per minute")
    assert Episode.objects.count() == 1
