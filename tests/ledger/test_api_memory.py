"""Memory routes (docs/ledger.md, docs/api.md), with the visibility rules."""

from __future__ import annotations

from ledger import services
from ledger.models import AgentMemory


def remember(project, agent, content, **kw):
    kw.setdefault("type", "learning")
    return services.memory_record(project=project, agent_name=agent, content=content, **kw)


def test_agent_records_its_own_memory(project, alice):
    response = alice.post(
        "/agents/alice/memory", {"type": "learning", "content": "UTC everywhere", "tags": "Time"}
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["agent_name"], body["source"], body["injected_by"], body["importance"], body["tags"]) == (
        "Alice",
        "agent",
        "",
        "medium",
        ["time"],
    )
    assert len(body["content_sha256"]) == 64 and body["tokens"] > 0


def test_coordinator_injects_a_learning_for_an_agent(project, coordinator):
    response = coordinator.post(
        "/agents/Bob/memory", {"type": "learning", "content": "x", "importance": "high"}
    )
    assert response.status_code == 201
    assert (response.json()["source"], response.json()["injected_by"]) == ("coordinator", "coordinator")
    assert response.json()["category"] == ""


def test_a_coordinators_learning_carries_its_category(project, coordinator):
    response = coordinator.post(
        "/agents/Bob/memory",
        {"type": "learning", "content": "Mock only what cannot run here", "category": "best-practice"},
    )
    assert response.status_code == 201
    assert response.json()["category"] == "best-practice"


def test_an_unknown_category_is_400_and_stores_nothing(project, coordinator):
    response = coordinator.post("/agents/Bob/memory", {"type": "learning", "content": "x", "category": "tip"})
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "category"
    assert not AgentMemory.objects.exists()


def test_an_agent_cannot_give_its_own_memory_a_category(project, alice):
    response = alice.post(
        "/agents/alice/memory", {"type": "learning", "content": "x", "category": "best-practice"}
    )
    assert response.status_code == 403
    assert not AgentMemory.objects.exists()


def test_memory_filters_by_type_and_importance(project, alice):
    remember(project, "Alice", "a", importance="high")
    remember(project, "Alice", "b", importance="low")
    remember(project, "Alice", "c", type="pattern", importance="high")
    response = alice.get("/agents/Alice/memory", type="learning", importance="high")
    assert [m["content"] for m in response.json()] == ["a"]


def test_cross_agent_whole_tag_search(project, alice):
    remember(project, "Bob", "shared", tags="cross-team,db")
    remember(project, "Bob", "private db", tags="db")
    remember(project, "Alice", "mine", tags="team")
    remember(project, "Alice", "other tag", tags="ops")
    found = alice.get("/memory", tags="team,db").json()
    # whole-tag OR: `team` does not match `cross-team`; Bob's private memory stays hidden.
    assert sorted(m["content"] for m in found) == ["mine", "shared"]


def test_coordinator_sees_every_memory(project, coordinator):
    remember(project, "Bob", "private")
    remember(project, "Alice", "other")
    assert len(coordinator.get("/memory").json()) == 2


def test_text_search_and_agent_filter(project, coordinator):
    remember(project, "Bob", "Payment webhooks arrive twice")
    remember(project, "Alice", "payment retries")
    remember(project, "Alice", "unrelated")
    assert [m["content"] for m in coordinator.get("/memory", q="PAYMENT", agent="alice").json()] == [
        "payment retries"
    ]


def test_agent_listing_another_agent_sees_only_cross_team(project, alice):
    remember(project, "Bob", "private")
    remember(project, "Bob", "shared", tags="cross-team")
    assert [m["content"] for m in alice.get("/agents/bob/memory").json()] == ["shared"]


def test_agent_reads_a_cross_team_memory_of_another_agent(project, alice):
    memory = remember(project, "Bob", "shared", tags="cross-team")
    assert alice.get(f"/agents/Bob/memory/{memory.pk}").status_code == 200


def test_memory_under_the_wrong_agent_is_404(project, coordinator):
    memory = remember(project, "Bob", "b")
    assert coordinator.get(f"/agents/Alice/memory/{memory.pk}").status_code == 404
    assert coordinator.get("/agents/Nobody/memory/1").status_code == 404


def test_patch_memory_and_archive(project, alice):
    memory = remember(project, "Alice", "old")
    response = alice.patch(
        f"/agents/Alice/memory/{memory.pk}", {"content": "new", "tags": ["a", "A"], "importance": "high"}
    )
    assert response.status_code == 200
    assert (response.json()["content"], response.json()["tags"], response.json()["importance"]) == (
        "new",
        ["a"],
        "high",
    )
    assert (
        alice.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "archived"}).json()["status"]
        == "archived"
    )
    assert alice.get("/agents/Alice/memory").json() == []
    assert len(alice.get("/agents/Alice/memory", status="archived").json()) == 1


def test_invalid_memory_is_400_and_stores_nothing(project, alice):
    from ledger.models import AgentMemory

    for body in ({"type": "core", "content": "x"}, {"type": "learning", "content": ""}, {"type": "learning"}):
        assert alice.post("/agents/Alice/memory", body).status_code == 400
    assert not AgentMemory.objects.exists()


def test_memory_of_another_project_is_404(project, other_project, coordinator):
    memory = remember(other_project, "Alice", "theirs")
    assert coordinator.get(f"/agents/Alice/memory/{memory.pk}").status_code == 404


def shared_memory(project, agent="Alice", content="rate limits live in redis"):
    """A memory of `agent` shared with the team, as a coordinator's merge leaves it."""
    return remember(project, agent, content, tags="cross-team", importance="high")


def test_agent_cannot_reactivate_its_shared_memory_after_a_coordinator_archived_it(
    project, alice, coordinator
):
    memory = shared_memory(project)
    assert coordinator.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "archived"}).status_code == 200
    response = alice.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "active"})
    assert response.status_code == 403 and "coordinator" in response.json()["error"]
    assert AgentMemory.objects.get(pk=memory.pk).status == "archived"


def test_coordinator_reactivates_a_shared_memory(project, coordinator):
    memory = shared_memory(project)
    coordinator.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "archived"})
    assert coordinator.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "active"}).status_code == 200


def test_agent_archives_its_shared_memory(project, alice):
    memory = shared_memory(project)
    assert alice.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "archived"}).status_code == 200


def test_agent_reactivates_its_own_private_memory(project, alice):
    memory = remember(project, "Alice", "mine alone")
    alice.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "archived"})
    assert alice.patch(f"/agents/Alice/memory/{memory.pk}", {"status": "active"}).status_code == 200


def test_agent_cannot_retag_or_reword_its_shared_memory(project, alice):
    memory = shared_memory(project)
    for change in (
        {"tags": ["ops"]},
        {"tags": ["cross-team", "ops"]},
        {"content": "x"},
        {"importance": "low"},
    ):
        response = alice.patch(f"/agents/Alice/memory/{memory.pk}", change)
        assert response.status_code == 403, change
    stored = AgentMemory.objects.get(pk=memory.pk)
    assert (stored.tags, stored.content, stored.importance) == (
        ["cross-team"],
        "rate limits live in redis",
        "high",
    )


def test_agent_cannot_share_a_private_memory_by_tagging_it(project, alice):
    memory = remember(project, "Alice", "mine alone")
    response = alice.patch(f"/agents/Alice/memory/{memory.pk}", {"tags": "ops, Cross-Team"})
    assert response.status_code == 403 and "review" in response.json()["error"]
    assert AgentMemory.objects.get(pk=memory.pk).tags == []
