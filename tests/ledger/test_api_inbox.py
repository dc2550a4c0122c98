"""Inbox routes (docs/ledger.md, docs/api.md)."""

from __future__ import annotations

import pytest

from ledger.models import AgentMemory, Decision, InboxEntry

ENTRY = {
    "slug": "Use Postgres",
    "type": "architectural",
    "title": "Use Postgres",
    "content": "Use PostgreSQL.",
}


def test_submit_stores_pending_and_returns_the_effective_slug(project, alice):
    response = alice.post("/decisions/inbox", {**ENTRY, "tags": "DB, Ops", "run_id": "r1"})
    assert response.status_code == 201
    body = response.json()
    assert (body["slug"], body["status"], body["agent_name"], body["tags"]) == (
        "use-postgres",
        "pending",
        "Alice",
        ["db", "ops"],
    )
    assert body["created_at"].endswith(("Z", "+00:00"))
    assert InboxEntry.objects.get().run_id == "r1"


def test_submit_is_idempotent_by_slug(project, alice):
    first = alice.post("/decisions/inbox", ENTRY).json()
    again = alice.post("/decisions/inbox", {**ENTRY, "content": "Use PostgreSQL 15."})
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert again.json()["content"] == "Use PostgreSQL 15."
    assert InboxEntry.objects.count() == 1


def test_same_slug_from_another_agent_is_decollided(project, alice, bob):
    alice.post("/decisions/inbox", ENTRY)
    response = bob.post("/decisions/inbox", ENTRY)
    assert response.status_code == 201
    assert response.json()["slug"] == "use-postgres--bob"
    retry = bob.post("/decisions/inbox", ENTRY)
    assert (retry.status_code, retry.json()["slug"]) == (200, "use-postgres--bob")
    assert InboxEntry.objects.count() == 2


def test_resubmitting_a_merged_entry_is_409(project, alice, coordinator):
    entry_id = alice.post("/decisions/inbox", ENTRY).json()["id"]
    coordinator.post(f"/decisions/inbox/{entry_id}/merge")
    response = alice.post("/decisions/inbox", ENTRY)
    assert response.status_code == 409
    assert response.json()["error"].startswith("already recorded as use-postgres (merged)")


def test_a_decollided_retry_of_a_decided_entry_names_the_slug_it_was_recorded_as(
    project, alice, bob, coordinator
):
    alice.post("/decisions/inbox", ENTRY)
    entry_id = bob.post("/decisions/inbox", ENTRY).json()["id"]
    coordinator.post(f"/decisions/inbox/{entry_id}/reject", {"reason": "not now"})
    response = bob.post("/decisions/inbox", ENTRY)
    assert response.status_code == 409
    assert response.json()["error"] == (
        "already recorded as use-postgres--bob (rejected); propose it again under a new slug"
    )


def test_merge_creates_a_decision_atomically(project, alice, coordinator):
    entry_id = alice.post("/decisions/inbox", {**ENTRY, "rationale": "ops"}).json()["id"]
    response = coordinator.post(f"/decisions/inbox/{entry_id}/merge")
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "merged" and body["merged_at"]
    decision = Decision.objects.get(pk=body["decision_id"])
    assert (decision.status, decision.title, decision.rationale) == ("active", "Use Postgres", "ops")
    entry = alice.get(f"/decisions/inbox/{entry_id}").json()
    assert (entry["status"], entry["decision_id"], entry["reviewed_by"]) == (
        "merged",
        decision.pk,
        "coordinator",
    )


def test_promote_is_merge(project, alice, coordinator):
    entry_id = alice.post("/decisions/inbox", {**ENTRY, "type": "learning", "importance": "high"}).json()[
        "id"
    ]
    response = coordinator.post(f"/decisions/inbox/{entry_id}/promote")
    assert response.status_code == 201
    memory = AgentMemory.objects.get(pk=response.json()["memory_id"])
    assert (memory.type, memory.importance, memory.agent.name) == ("learning", "high", "Alice")
    assert "decision_id" not in response.json()


def test_merge_twice_is_409(project, alice, coordinator):
    entry_id = alice.post("/decisions/inbox", ENTRY).json()["id"]
    coordinator.post(f"/decisions/inbox/{entry_id}/merge")
    response = coordinator.post(f"/decisions/inbox/{entry_id}/merge")
    assert response.status_code == 409
    assert Decision.objects.count() == 1


def test_reject_keeps_the_row_with_no_decision(project, alice, coordinator):
    entry_id = alice.post("/decisions/inbox", ENTRY).json()["id"]
    response = coordinator.post(f"/decisions/inbox/{entry_id}/reject", {"reason": "duplicate of #3"})
    assert response.status_code == 200
    assert response.json()["status"] == "rejected"
    entry = alice.get(f"/decisions/inbox/{entry_id}").json()
    assert (entry["status"], entry["reason"], entry["decision_id"]) == ("rejected", "duplicate of #3", None)
    assert not Decision.objects.exists()
    assert coordinator.post(f"/decisions/inbox/{entry_id}/merge").status_code == 409


def test_reject_without_a_body(project, alice, coordinator):
    entry_id = alice.post("/decisions/inbox", ENTRY).json()["id"]
    response = coordinator.post(f"/decisions/inbox/{entry_id}/reject", raw="")
    assert response.status_code == 200


@pytest.mark.parametrize("action", ["merge", "reject"])
def test_review_of_unknown_or_foreign_entry_is_404(project, other_project, coordinator, action):
    from ledger import services

    foreign = services.entry_submit(
        project=other_project, agent_name="x", slug="s", type="scope", content="c"
    )
    assert coordinator.post(f"/decisions/inbox/{foreign.entry.pk}/{action}").status_code == 404
    assert coordinator.post(f"/decisions/inbox/999999/{action}").status_code == 404
    assert coordinator.get(f"/decisions/inbox/{foreign.entry.pk}").status_code == 404


def test_inbox_defaults_to_pending_newest_first(project, alice, coordinator):
    ids = [alice.post("/decisions/inbox", {**ENTRY, "slug": f"e{i}"}).json()["id"] for i in range(3)]
    coordinator.post(f"/decisions/inbox/{ids[0]}/reject")
    response = alice.get("/decisions/inbox")
    assert [e["id"] for e in response.json()] == [ids[2], ids[1]]
    assert response["X-Total-Count"] == "2"
    everything = alice.get("/decisions/inbox", status="all").json()
    assert [e["id"] for e in everything] == [ids[2], ids[1], ids[0]]
    assert [e["id"] for e in alice.get("/decisions/inbox", status="rejected").json()] == [ids[0]]


def test_inbox_filters_combine(project, alice, bob):
    alice.post("/decisions/inbox", {**ENTRY, "slug": "a1", "type": "scope", "run_id": "r1"})
    alice.post("/decisions/inbox", {**ENTRY, "slug": "a2", "type": "learning", "run_id": "r1"})
    alice.post("/decisions/inbox", {**ENTRY, "slug": "a3", "type": "scope", "run_id": "r2"})
    bob.post("/decisions/inbox", {**ENTRY, "slug": "b1", "type": "scope", "run_id": "r1"})
    response = alice.get("/decisions/inbox", type="scope", agent="ALICE", run_id="r1")
    assert [e["slug"] for e in response.json()] == ["a1"]


def test_inbox_pagination(project, alice):
    for i in range(5):
        alice.post("/decisions/inbox", {**ENTRY, "slug": f"e{i}"})
    page = alice.get("/decisions/inbox", limit=2, offset=2)
    assert [e["slug"] for e in page.json()] == ["e2", "e1"]
    assert page["X-Total-Count"] == "5"
    assert alice.get("/decisions/inbox", limit=0).status_code == 400
    assert alice.get("/decisions/inbox", limit=5000).status_code == 400


@pytest.mark.parametrize("params", [{"status": "open"}, {"type": "opinion"}])
def test_unknown_filter_values_are_400(project, alice, params):
    response = alice.get("/decisions/inbox", **params)
    assert response.status_code == 400
    assert "not one of" in response.json()["error"]
