"""Limits a caller cannot push past: tag counts, JSON everywhere under /api/, a valid agent for the
context, a retryable answer to a lost Scribe race, and a per-agent write rate (docs/api.md)."""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from ledger import services
from ledger.models import EntryStatus, InboxEntry, Session
from ledger.values import MAX_TAGS, InvalidValue, normalize_tags
from tests.threads import race

ENTRY = {"slug": "use-postgres", "type": "architectural", "content": "Use PostgreSQL."}


def tags(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]


# --- tags -----------------------------------------------------------------------------------------


def test_normalize_tags_accepts_the_maximum():
    assert normalize_tags(tags(MAX_TAGS)) == tags(MAX_TAGS)


def test_normalize_tags_refuses_one_more_than_the_maximum():
    with pytest.raises(InvalidValue, match=f"at most {MAX_TAGS} tags"):
        normalize_tags(",".join(tags(MAX_TAGS + 1)))


def test_repeated_tags_count_once():
    assert normalize_tags(["a", "A", " a "] * 1000) == ["a"]


def test_an_inbox_entry_with_too_many_tags_is_400(project, alice):
    response = alice.post("/decisions/inbox", {**ENTRY, "tags": tags(MAX_TAGS + 1)})
    assert response.status_code == 400
    assert f"at most {MAX_TAGS} tags" in response.json()["error"]
    assert response.json()["details"][0]["field"] == "tags"
    assert not InboxEntry.objects.exists()


def test_a_decision_with_too_many_tags_is_400(project, coordinator):
    body = {"agent_name": "lead", "type": "technical", "title": "t", "content": "c", "tags": tags(40)}
    response = coordinator.post("/decisions", body)
    assert response.status_code == 400
    assert f"at most {MAX_TAGS} tags" in response.json()["error"]


def test_a_memory_with_too_many_tags_is_400(project, alice):
    response = alice.post("/agents/alice/memory", {"type": "learning", "content": "x", "tags": tags(33)})
    assert response.status_code == 400
    assert f"at most {MAX_TAGS} tags" in response.json()["error"]


def test_editing_a_memory_to_too_many_tags_is_400(project, alice):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="x")
    response = alice.patch(f"/agents/alice/memory/{memory.pk}", {"tags": ",".join(tags(33))})
    assert response.status_code == 400
    memory.refresh_from_db()
    assert memory.tags == []


def test_a_memory_search_with_too_many_tags_is_400(project, alice):
    response = alice.get("/memory", tags=",".join(tags(MAX_TAGS + 1)))
    assert response.status_code == 400
    body = response.json()
    assert f"at most {MAX_TAGS} tags" in body["error"]
    assert body["details"] == [{"field": "tags", "message": body["details"][0]["message"]}]


def test_a_memory_search_with_the_maximum_of_tags_works(project, alice):
    services.memory_record(project=project, agent_name="Alice", type="learning", content="x", tags="t31")
    response = alice.get("/memory", tags=",".join(tags(MAX_TAGS)))
    assert response.status_code == 200
    assert [m["content"] for m in response.json()] == ["x"]


def test_a_hundred_thousand_tags_are_refused_quickly(project, alice):
    many = tags(100_000)
    started = time.perf_counter()
    posted = alice.post("/decisions/inbox", {**ENTRY, "tags": many})
    searched = alice.get("/memory", tags=",".join(many))
    elapsed = time.perf_counter() - started
    assert (posted.status_code, searched.status_code) == (400, 400)
    assert elapsed < 2


def test_normalize_tags_is_linear_in_the_number_of_repeats():
    started = time.perf_counter()
    assert normalize_tags(["same"] * 200_000) == ["same"]
    assert time.perf_counter() - started < 2


# --- every /api/ path answers JSON ----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/projects/x%0A/decisions",
        "/api/projects/alpha/decisions%0A",
        "/api/nothing%0Ahere",
        "/api/%0A",
        "/api/projects/alpha/%0Adecisions/inbox",
    ],
)
def test_a_path_with_a_newline_is_a_json_404(project, alice, path):
    response = Client().get(path, HTTP_AUTHORIZATION=f"Bearer {alice.token}")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]


def test_a_newline_path_without_a_token_is_json_too(client):
    response = client.post("/api/projects/x%0A/decisions", "{}", content_type="application/json")
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]


# --- GET /context with a blank or invalid agent ----------------------------------------------------


@pytest.mark.parametrize("agent", [" ", "", "x" * 65, "tab\there"])
def test_context_for_a_blank_or_invalid_agent_is_400(project, coordinator, agent, caplog):
    response = coordinator.get("/context", agent=agent)
    assert response.status_code == 400
    body = response.json()
    assert body["error"]
    assert body["details"][0]["field"] == "agent"
    assert not [r for r in caplog.records if r.exc_info]


# --- per-agent write rate --------------------------------------------------------------------------


def submit(api, n: int):
    return api.post("/decisions/inbox", {**ENTRY, "slug": f"entry-{n}"})


def test_writes_past_the_rate_are_429_with_retry_after(project, alice, settings, caplog):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 3
    assert [submit(alice, n).status_code for n in range(3)] == [201, 201, 201]
    refused = submit(alice, 3)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "3 writes per minute" in refused.json()["error"]
    assert InboxEntry.objects.count() == 3
    assert any("rate-limited" in r.getMessage() and "Alice" in r.getMessage() for r in caplog.records)


def test_reads_are_not_counted(project, alice, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 2
    for _ in range(5):
        assert alice.get("/decisions/inbox").status_code == 200
    assert [submit(alice, n).status_code for n in range(3)] == [201, 201, 429]


def test_patch_counts_as_a_write(project, alice, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="x")
    assert alice.patch(f"/agents/alice/memory/{memory.pk}", {"importance": "high"}).status_code == 200
    assert alice.patch(f"/agents/alice/memory/{memory.pk}", {"importance": "low"}).status_code == 429


def test_the_rate_is_per_agent(project, alice, bob, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    assert submit(alice, 1).status_code == 201
    assert submit(alice, 2).status_code == 429
    assert submit(bob, 3).status_code == 201


def test_two_tokens_of_one_agent_share_its_rate(project, make_api, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    assert submit(make_api("agent", "Alice"), 1).status_code == 201
    assert submit(make_api("agent", "alice"), 2).status_code == 429


def test_the_window_rolls(project, alice, settings, monkeypatch):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    now = [1_000_000.0]
    monkeypatch.setattr("ledger.actions.frame._clock", lambda: now[0])
    assert submit(alice, 1).status_code == 201
    now[0] += 59
    refused = submit(alice, 2)
    assert (refused.status_code, refused["Retry-After"]) == (429, "1")
    now[0] += 1.5
    assert submit(alice, 3).status_code == 201


def test_coordinator_tokens_are_exempt(project, coordinator, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    body = {**ENTRY, "agent_name": "Alice"}
    statuses = [
        coordinator.post("/decisions/inbox", {**body, "slug": f"e-{n}"}).status_code for n in range(3)
    ]
    assert statuses == [201, 201, 201]


def test_zero_turns_the_limit_off(project, alice, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 0
    assert {submit(alice, n).status_code for n in range(5)} == {201}


# --- a Scribe run that loses a race ---------------------------------------------------------------


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True)
def test_concurrent_scribe_runs_merge_once_and_a_loser_may_retry():
    project, _ = services.project_create_or_update(slug="race", name="Race")
    secret = services.token_issue(project=project, role="agent", agent_name="Alice")[1]
    started_at = datetime.now(UTC) - timedelta(minutes=1)
    for n in range(20):
        services.entry_submit(
            project=project, agent_name="Alice", slug=f"learned-{n}", type="learning", content=f"l {n}"
        )
    services.session_start(project=project)

    def scribe():
        response = Client().post(
            "/api/projects/race/scribe",
            json.dumps({"run_id": "run-1", "started_at": started_at.isoformat()}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {secret}",
        )
        return response.status_code, response.json()

    results = race([scribe for _ in range(6)])
    statuses = Counter(r[0] if isinstance(r, tuple) else type(r).__name__ for r in results)
    print(f"\nscribe runs={len(results)} statuses={dict(statuses)}")
    assert set(statuses) <= {200, 409}, statuses
    for status, body in (r for r in results if isinstance(r, tuple)):
        if status == 409:
            assert body["retryable"] is True
    assert sum(len(body["merged"]) for status, body in results if status == 200) == 20
    assert InboxEntry.objects.filter(status=EntryStatus.MERGED).count() == 20
    assert Session.objects.get(project=project).summary.count("Run run-1 by Alice completed.") == 1
    retried = scribe()
    assert retried[0] == 200 and retried[1]["merged"] == []


COORDINATOR_ROUTES = [
    ("post", "/decisions", {"agent_name": "alice", "type": "scope", "title": "t", "content": "c"}),
    ("patch", "/decisions/1", {"status": "archived"}),
    ("post", "/decisions/inbox/1/merge", {}),
    ("post", "/decisions/inbox/1/promote", {}),
    ("post", "/decisions/inbox/1/reject", {}),
    ("post", "/agents/alice/memory/1/merge", {"keep": 1}),
    ("post", "/agents/alice/memory/1/dismiss-similar", {}),
    ("post", "/memory/export", {}),
    ("post", "/memory/import", {}),
]


def test_a_coordinators_route_refuses_an_agent_without_using_its_writes(project, alice, settings):
    """The role is checked before the write is counted: an agent refused 403 on every coordinators'
    route can still make its one write of the minute."""
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    for method, path, body in COORDINATOR_ROUTES:
        response = alice.send(method, path, body)
        assert response.status_code == 403, (path, response.status_code)
        assert "coordinator" in response.json()["error"]
    assert (
        alice.post("/agents/alice/memory", {"type": "learning", "content": "still allowed"}).status_code
        == 201
    )
