"""Episodes: what a run tried and how it ended (docs/ledger.md "Episodes", docs/api.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from ledger import services
from ledger.models import AuditEvent, Episode, EpisodeOutcome, EpisodeSource
from ledger.scribe import episode_outcome, scribe_run
from ledger.tokens import count_tokens

EPISODES = "/episodes"


def report(**fields: Any) -> dict[str, Any]:
    return {"run_id": "run-1", "outcome": "failed", "tried": "retry the flaky upload", **fields}


def scribe(project, agent="Alice", run_id="run-1", outcome="completed"):
    return scribe_run(
        project=project,
        agent_name=agent,
        run_id=run_id,
        started_at=timezone.now() - timedelta(hours=1),
        outcome=outcome,
    )


def record(project, agent="Alice", run_id="run-1", **fields: Any) -> Episode:
    values = {"outcome": "succeeded", "tried": "something", **fields}
    return services.episode_record(project=project, agent_name=agent, run_id=run_id, **values).episode


# Recording ----------------------------------------------------------------------------------------


def test_agent_records_its_own_failed_run_with_every_note(project, alice):
    body = report(
        files=["ledger/search.py", "docs/api.md"],
        change_url="https://example.com/pr/7",
        difficulties="the upload times out under load",
        feedback="should have read the retry docs first",
    )
    response = alice.post(EPISODES, body)
    assert response.status_code == 201, response.json()
    episode = response.json()
    assert episode["agent_name"] == "Alice"
    assert episode["source"] == EpisodeSource.AGENT
    assert episode["outcome"] == "failed"
    for key in ("tried", "files", "change_url", "difficulties", "feedback"):
        assert episode[key] == body[key]
    stored = Episode.objects.get()
    assert stored.tokens == count_tokens(
        "\n".join([stored.tried, stored.difficulties, stored.feedback, *stored.files])
    )
    assert episode["tokens"] == stored.tokens > 0
    event = AuditEvent.objects.get(object_type="episode")
    assert (event.object_id, event.action, event.actor, event.to_state) == (
        stored.pk,
        "record",
        "Alice",
        "failed",
    )


def test_abandoned_run_keeps_its_notes(project, alice):
    alice.post(
        EPISODES, report(outcome="abandoned", difficulties="blocked on credentials", feedback="ask first")
    )
    episode = Episode.objects.get()
    assert (episode.outcome, episode.difficulties, episode.feedback) == (
        "abandoned",
        "blocked on credentials",
        "ask first",
    )


def test_coordinator_records_for_the_agent_it_names(project, coordinator):
    response = coordinator.post(EPISODES, report(agent_name="Bob"))
    assert response.status_code == 201
    assert response.json()["agent_name"] == "Bob"
    assert response.json()["source"] == EpisodeSource.COORDINATOR


def test_coordinator_must_name_the_agent(project, coordinator):
    response = coordinator.post(EPISODES, report())
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "agent_name"
    assert not Episode.objects.exists()


def test_retry_of_the_same_run_updates_in_place(project, alice):
    first = alice.post(EPISODES, report())
    again = alice.post(EPISODES, report())
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert AuditEvent.objects.filter(object_type="episode").count() == 1  # nothing changed the second time
    corrected = alice.post(EPISODES, report(outcome="succeeded", feedback="it worked on the third try"))
    assert corrected.status_code == 200
    assert Episode.objects.count() == 1
    episode = Episode.objects.get()
    assert (episode.outcome, episode.feedback) == ("succeeded", "it worked on the third try")
    assert AuditEvent.objects.filter(object_type="episode", action="edit").get().from_state == "failed"


def test_same_run_id_of_another_agent_is_another_episode(project, alice, bob):
    assert alice.post(EPISODES, report()).status_code == 201
    assert bob.post(EPISODES, report()).status_code == 201
    assert Episode.objects.count() == 2


def test_agent_cannot_record_for_another_agent(project, alice):
    response = alice.post(EPISODES, report(agent_name="Bob"))
    assert response.status_code == 403
    assert not Episode.objects.exists()


def test_token_of_another_project_is_404(project, other_project, make_api):
    stranger = make_api("agent", "Alice", target=other_project)
    assert stranger.post(EPISODES, report()).status_code == 404
    assert stranger.get(EPISODES).status_code == 404
    assert not Episode.objects.exists()


def test_episode_of_another_project_is_not_found(project, other_project, coordinator):
    theirs = record(other_project)
    assert coordinator.get(f"{EPISODES}/{theirs.pk}").status_code == 404


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"outcome": "crashed"}, "outcome"),
        ({"change_url": "ftp://example.com/x"}, "change_url"),
        ({"change_url": "javascript:alert(1)"}, "change_url"),
        ({"change_url": "https://"}, "change_url"),
        ({"tried": "x" * 20_001}, "tried"),
        ({"difficulties": "x" * 20_001}, "difficulties"),
        ({"feedback": "x" * 20_001}, "feedback"),
        ({"tried": "  "}, "tried"),
        ({"files": "ledger/search.py"}, "files"),
        ({"files": ["ok.py", 3]}, "files"),
        ({"files": [f"f{i}.py" for i in range(501)]}, "files"),
        ({"files": ["x" * 501]}, "files"),
        ({"tried": "nul \x00 here"}, "tried"),
        ({"files": ["a\x00b"]}, "files"),
        ({"feedback": "lone \ud800"}, "feedback"),
        ({"run_id": ""}, "run_id"),
        ({"run_id": "r" * 201}, "run_id"),
    ],
)
def test_bad_input_is_400_naming_the_field_and_stores_nothing(project, alice, fields, field):
    response = alice.post(EPISODES, report(**fields))
    assert response.status_code == 400, response.json()
    assert field in {detail["field"].split(".")[0] for detail in response.json()["details"]}
    assert not Episode.objects.exists()


def test_files_are_trimmed_and_kept_once(project):
    episode = record(project, files=[" a.py ", "a.py", "", "b/c.py"])
    assert episode.files == ["a.py", "b/c.py"]


def test_one_episode_per_run_is_a_constraint(project):
    episode = record(project)
    with pytest.raises(IntegrityError), transaction.atomic():
        Episode.objects.create(
            project=project, agent=episode.agent, run_id="run-1", outcome="failed", tried="again"
        )


@pytest.mark.parametrize(("field", "value"), [("outcome", "crashed"), ("source", "admin"), ("run_id", "")])
def test_choices_and_run_id_are_constraints(project, field, value):
    episode = record(project)
    with pytest.raises(IntegrityError), transaction.atomic():
        Episode.objects.filter(pk=episode.pk).update(**{field: value})


# Reading ------------------------------------------------------------------------------------------


def test_agent_lists_only_its_own_episodes_and_coordinator_all(project, alice, coordinator):
    mine = record(project, "Alice", "run-1")
    theirs = record(project, "Bob", "run-1")
    response = alice.get(EPISODES)
    assert [e["id"] for e in response.json()] == [mine.pk]
    assert response["X-Total-Count"] == "1"
    assert alice.get(EPISODES, agent="Bob").json() == []
    assert alice.get(f"{EPISODES}/{theirs.pk}").status_code == 404
    assert alice.get(f"{EPISODES}/{mine.pk}").json()["id"] == mine.pk
    everything = coordinator.get(EPISODES)
    assert [e["id"] for e in everything.json()] == [theirs.pk, mine.pk]
    assert everything["X-Total-Count"] == "2"


def test_list_filters_and_pages(project, coordinator):
    ok = record(project, "Alice", "run-1", outcome="succeeded")
    failed = record(project, "Alice", "run-2", outcome="failed")
    bobs = record(project, "Bob", "run-1", outcome="failed")
    ids = lambda response: [e["id"] for e in response.json()]  # noqa: E731
    assert ids(coordinator.get(EPISODES, outcome="failed")) == [bobs.pk, failed.pk]
    assert ids(coordinator.get(EPISODES, agent="alice")) == [failed.pk, ok.pk]
    assert ids(coordinator.get(EPISODES, run_id="run-1")) == [bobs.pk, ok.pk]
    assert ids(coordinator.get(EPISODES, source="coordinator")) == []
    page = coordinator.get(EPISODES, limit=1, offset=1)
    assert ids(page) == [failed.pk]
    assert page["X-Total-Count"] == "3"
    refused = coordinator.get(EPISODES, outcome="crashed")
    assert refused.status_code == 400
    assert refused.json()["details"][0]["field"] == "outcome"


def test_search_finds_an_episode_by_a_word_of_its_difficulties(project, alice, coordinator):
    found = record(project, "Alice", "run-1", difficulties="the webhook signatures kept failing")
    record(project, "Alice", "run-2", difficulties="nothing special", feedback="fine")
    record(project, "Bob", "run-3", difficulties="webhook trouble too")
    assert [e["id"] for e in alice.get(EPISODES, q="signature").json()] == [found.pk]
    assert len(coordinator.get(EPISODES, q="webhook").json()) == 2


def test_search_finds_an_episode_by_a_file_it_touched(project, coordinator):
    found = record(project, files=["ledger/search_index.py"])
    record(project, run_id="run-2", files=["docs/api.md"])
    assert [e["id"] for e in coordinator.get(EPISODES, q="search_index").json()] == [found.pk]


def test_search_follows_an_update(project, coordinator):
    record(project, difficulties="alpha")
    record(project, difficulties="omega")
    assert [e["difficulties"] for e in coordinator.get(EPISODES, q="omega").json()] == ["omega"]
    assert coordinator.get(EPISODES, q="alpha").json() == []


# The Scribe ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "outcome"),
    [
        ("completed", EpisodeOutcome.SUCCEEDED),
        ("Succeeded", EpisodeOutcome.SUCCEEDED),
        ("failed", EpisodeOutcome.FAILED),
        ("timed out", EpisodeOutcome.ABANDONED),
        ("cancelled", EpisodeOutcome.ABANDONED),
    ],
)
def test_scribe_outcome_maps_to_an_episode_outcome(said, outcome):
    assert episode_outcome(said) == outcome


def test_scribe_writes_a_minimal_episode_for_a_run_without_one(project):
    services.entry_submit(
        project=project, agent_name="Alice", slug="retry", type="learning", content="c", run_id="run-1"
    )
    services.entry_submit(
        project=project,
        agent_name="Alice",
        slug="use-redis",
        type="architectural",
        content="c",
        run_id="run-1",
    )
    result = scribe(project, outcome="failed")
    episode = Episode.objects.get()
    assert result.episode == episode
    assert result.as_dict()["episode_id"] == episode.pk
    assert (episode.source, episode.outcome, episode.agent.name) == (EpisodeSource.SCRIBE, "failed", "Alice")
    assert "retry" in episode.tried and "use-redis" in episode.tried
    assert "Merged: retry" in episode.tried and "Left for review: use-redis" in episode.tried
    again = scribe(project, outcome="completed")
    assert again.episode is None
    assert Episode.objects.get().outcome == "failed"


def test_scribe_writes_no_episode_for_an_agent_the_project_does_not_know(project):
    result = scribe(project, agent="Nobody")
    assert result.episode is None
    assert not Episode.objects.exists()


def test_runtime_episode_replaces_the_scribes(project, alice):
    services.agent_get_or_create(project=project, name="Alice")
    scribe(project, outcome="completed")
    minimal = Episode.objects.get()
    response = alice.post(EPISODES, report(outcome="failed", difficulties="tests flaked"))
    assert response.status_code == 200
    assert response.json()["id"] == minimal.pk
    episode = Episode.objects.get()
    assert (episode.source, episode.outcome, episode.tried, episode.difficulties) == (
        EpisodeSource.AGENT,
        "failed",
        "retry the flaky upload",
        "tests flaked",
    )
    assert AuditEvent.objects.filter(object_type="episode", action="replace").count() == 1


def test_scribe_never_overwrites_the_runtimes_episode(project, alice):
    alice.post(EPISODES, report(outcome="failed", feedback="my notes"))
    result = scribe(project, outcome="completed")
    assert result.episode is None
    episode = Episode.objects.get()
    assert (episode.source, episode.outcome, episode.feedback) == (EpisodeSource.AGENT, "failed", "my notes")


def test_scribe_route_answers_the_episode_id(project, alice):
    response = alice.post(
        "/scribe", {"run_id": "run-9", "started_at": "2026-01-01T00:00:00Z", "outcome": "gave up"}
    )
    assert response.status_code == 200, response.json()
    episode = Episode.objects.get()
    assert response.json()["episode_id"] == episode.pk
    assert episode.outcome == EpisodeOutcome.ABANDONED
