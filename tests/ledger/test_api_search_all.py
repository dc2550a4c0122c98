"""GET /api/projects/{project}/search: one search across the ledger over HTTP (docs/api.md "Search")."""

from __future__ import annotations

import pytest

from ledger import finder, services
from ledger.models import AgentMemory, AuditEvent, Compilation, Source


@pytest.fixture
def rows(project, alice, bob):
    """Alice's and Bob's ledger: a decision, a private memory each, a shared memory, an episode each,
    an ended session's summary and a pending proposal."""
    decision = services.decision_create(
        project=project,
        agent_name="Alice",
        type="technical",
        title="2026-03-02: Deploy the docs site from `deploy-web-pages.sh`",
        content="**What:** The docs site is published by the script, never by hand.",
        by="lead",
    )
    alice_memory = services.memory_record(
        project=project,
        agent_name="Alice",
        type="learning",
        content="The docs site deploy needs the CDN purge.",
    )
    bob_memory = services.memory_record(
        project=project,
        agent_name="Bob",
        type="learning",
        content="Bob's note: the docs site deploy token lives in the vault under ops/docs.",
    )
    shared = services.memory_record(
        project=project,
        agent_name=project.coordinator_agent,
        type="learning",
        content="Every docs site deploy is announced in #releases.",
        tags=["cross-team"],
        source=Source.COORDINATOR,
    )
    alice_run = services.episode_record(
        project=project,
        agent_name="Alice",
        run_id="run-7",
        outcome="succeeded",
        tried="Deployed the docs site.",
    ).episode
    bob_run = services.episode_record(
        project=project,
        agent_name="Bob",
        run_id="run-8",
        outcome="failed",
        tried="Deployed the docs site twice.",
    ).episode
    services.session_start(project=project, session_id="sprint/12", summary="Shipped the docs site deploy.")
    services.session_start(project=project, session_id="sprint/13")
    summary = AgentMemory.objects.get(source=Source.SESSION_SUMMARY)
    entry = services.entry_submit(
        project=project,
        agent_name="Bob",
        slug="bob-docs-site-preview",
        type="process",
        title="Preview every docs site deploy",
        content="Deploy a preview of the docs site for each change.",
    ).entry
    return {
        "decision": decision.pk,
        "alice_memory": alice_memory.pk,
        "bob_memory": bob_memory.pk,
        "shared": shared.pk,
        "alice_run": alice_run.pk,
        "bob_run": bob_run.pk,
        "summary": summary.pk,
        "entry": entry.pk,
    }


def kinds_and_ids(answer):
    return {(hit["kind"], hit["id"]) for hit in answer["hits"]}


def test_an_agent_token_searches_as_its_agent(alice, rows):
    response = alice.get("/search", q="docs site deploy")
    assert response.status_code == 200
    assert kinds_and_ids(response.json()) == {
        ("decision", rows["decision"]),
        ("memory", rows["alice_memory"]),
        ("memory", rows["shared"]),
        ("episode", rows["alice_run"]),
        ("summary", rows["summary"]),
    }


def test_the_answer_has_the_documented_shape(alice, rows):
    answer = alice.get("/search", q="Deploy the docs", limit=3).json()
    assert answer["q"] == "Deploy the docs"
    assert answer["words"] == ["deploy", "docs"]
    assert answer["limit"] == 3
    assert len(answer["hits"]) == 3
    hit = next(h for h in answer["hits"] if h["kind"] == "decision")
    assert set(hit) == {
        "kind",
        "id",
        "title",
        "excerpt",
        "score",
        "why",
        "words",
        "status",
        "agent",
        "created_at",
        "session_id",
        "run_id",
        "path",
    }
    assert hit["title"] == "2026-03-02: Deploy the docs site from `deploy-web-pages.sh`"
    assert hit["excerpt"] == (
        "**What:** The <mark>docs</mark> site is published by the script, never by hand."
    )
    assert {"field": "title", "words": ["deploy", "docs"]} in hit["why"]
    assert hit["status"] == "active" and hit["agent"] == "Alice"
    scores = [h["score"] for h in answer["hits"]]
    assert scores == sorted(scores, reverse=True)


def test_each_hit_names_the_route_that_reads_it_and_the_token_may_read_it(alice, rows):
    answer = alice.get("/search", q="docs site", limit=20).json()
    paths = {hit["kind"]: hit["path"] for hit in answer["hits"]}
    assert paths["decision"] == f"/api/projects/alpha/decisions/{rows['decision']}"
    assert paths["summary"] == "/api/projects/alpha/sessions/sprint/12"
    assert paths["episode"] == f"/api/projects/alpha/episodes/{rows['alice_run']}"
    for hit in answer["hits"]:
        read = alice.client.get(hit["path"], HTTP_AUTHORIZATION=f"Bearer {alice.token}")
        assert read.status_code == 200, hit["path"]


def test_another_agents_private_memory_and_episode_are_never_found(alice, rows):
    for q in ["vault", "Bob's note", "docs site deploy token vault ops", "twice", "bob"]:
        found = kinds_and_ids(alice.get("/search", q=q, inactive="true").json())
        assert ("memory", rows["bob_memory"]) not in found, q
        assert ("episode", rows["bob_run"]) not in found, q


def test_an_agent_token_may_name_itself_but_not_another_agent(alice, rows):
    assert alice.get("/search", q="docs", agent="ALICE").status_code == 200
    response = alice.get("/search", q="docs", agent="Bob")
    assert response.status_code == 403
    assert response.json()["error"] == "this token acts as 'Alice', not 'Bob'"


def test_a_coordinator_finds_everything_and_the_inbox(coordinator, rows):
    found = kinds_and_ids(coordinator.get("/search", q="docs site deploy", limit=50).json())
    assert {
        ("decision", rows["decision"]),
        ("memory", rows["alice_memory"]),
        ("memory", rows["bob_memory"]),
        ("memory", rows["shared"]),
        ("episode", rows["alice_run"]),
        ("episode", rows["bob_run"]),
        ("summary", rows["summary"]),
        ("entry", rows["entry"]),
    } == found


def test_a_coordinator_searches_as_the_agent_it_names(coordinator, rows):
    found = kinds_and_ids(coordinator.get("/search", q="docs site deploy", agent="bob").json())
    assert ("memory", rows["bob_memory"]) in found
    assert ("memory", rows["alice_memory"]) not in found
    assert ("episode", rows["alice_run"]) not in found
    assert ("entry", rows["entry"]) in found


def test_kinds_keeps_only_those_kinds(coordinator, rows):
    answer = coordinator.get("/search", q="docs site", kinds="entry,decision").json()
    assert kinds_and_ids(answer) == {("decision", rows["decision"]), ("entry", rows["entry"])}


def test_another_projects_search_is_a_404(alice, other_project, rows):
    response = alice.get("/search", project="beta", q="docs")
    assert response.status_code == 404
    assert response.json()["error"] == "no project 'beta' for this token"


def test_a_token_of_another_project_finds_nothing_of_this_one(make_api, other_project, rows):
    theirs = make_api("coordinator", target=other_project)
    response = theirs.get("/search", project="beta", q="docs site deploy")
    assert response.status_code == 200
    assert response.json()["hits"] == []


def test_without_a_token_it_is_a_401(client, rows):
    assert client.get("/api/projects/alpha/search", {"q": "docs"}).status_code == 401


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({}, "q", "Field required"),
        ({"q": ""}, "q", "must not be blank"),
        ({"q": "   "}, "q", "must not be blank"),
        ({"q": "x" * 2001}, "q", "must be at most 2000 characters, got 2001"),
        ({"q": "docs", "kinds": "decision,wiki"}, "kinds", "'wiki': not one of decision, memory"),
        ({"q": "docs", "kinds": "entry"}, "kinds", "coordinators only"),
        ({"q": "docs", "limit": 0}, "limit", "must be between 1 and 100"),
        ({"q": "docs", "limit": 101}, "limit", "must be between 1 and 100"),
        ({"q": "docs", "limit": "ten"}, "limit", ""),
    ],
)
def test_a_bad_query_is_a_400_naming_the_field(alice, rows, params, field, message):
    response = alice.get("/search", **params)
    assert response.status_code == 400
    [detail] = response.json()["details"]
    assert detail["field"] == field
    assert message in detail["message"]


def test_a_coordinator_naming_an_agent_the_project_lacks_gets_a_404(coordinator, rows):
    response = coordinator.get("/search", q="docs", agent="Zoë")
    assert response.status_code == 404
    assert "no agent 'Zoë'" in response.json()["error"]


def test_a_query_of_common_words_only_finds_nothing(alice, rows):
    answer = alice.get("/search", q="which of the").json()
    assert (answer["words"], answer["hits"]) == ([], [])


def test_searching_is_not_a_write(alice, rows, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    before = (AuditEvent.objects.count(), Compilation.objects.count())
    assert [alice.get("/search", q="docs").status_code for _ in range(4)] == [200] * 4
    assert (AuditEvent.objects.count(), Compilation.objects.count()) == before


def test_the_route_takes_only_get(alice, rows):
    response = alice.post("/search", {"q": "docs"})
    assert response.status_code == 405
    assert "GET" in response["Allow"]


def test_limit_defaults_to_twenty(coordinator, project):
    for n in range(25):
        services.memory_record(
            project=project,
            agent_name="Alice",
            type="learning",
            content=f"Deploy note {n} for the docs site.",
        )
    answer = coordinator.get("/search", q="deploy").json()
    assert answer["limit"] == finder.DEFAULT_LIMIT == 20
    assert len(answer["hits"]) == 20
