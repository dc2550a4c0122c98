"""Consolidation (docs/ledger.md "Memory"): near-duplicates flagged, merged or dismissed by a
coordinator; corrections supersede; two identical writes at once make one memory."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from ledger import services
from ledger.models import AgentMemory, AuditEvent, InboxEntry
from tests.mcp_calls import call, caller_for, recorded, refused
from tests.threads import race

RETRY = "Retry the billing webhook three times with exponential backoff before paging the on-call engineer"
RETRY_AGAIN = "Retry the billing webhook three times with exponential backoff before paging on-call"


def remember(project, agent="Ripley", content=RETRY, **kw):
    kw.setdefault("type", "learning")
    return services.memory_store(project=project, agent_name=agent, content=content, **kw)


# --- near-duplicates ------------------------------------------------------------------------------


def test_a_close_repeat_is_flagged_against_the_earlier_memory(project):
    earlier = remember(project).memory
    later = remember(project, content=RETRY_AGAIN).memory
    assert later.similar_to_id == earlier.pk
    assert 90 <= later.similarity <= 100
    assert AgentMemory.objects.count() == 2


def test_a_different_memory_is_not_flagged(project):
    remember(project)
    other = remember(project, content="Résumé parsing: normalise ﬁ ligatures before tokenising names").memory
    assert other.similar_to_id is None and other.similarity is None


def test_the_threshold_comes_from_the_setting(project, settings):
    settings.CANON_NEAR_DUPLICATE_SIMILARITY = 100
    remember(project)
    later = remember(project, content=RETRY + " on weekends, when the pager is quiet").memory
    # Every word of the earlier memory is in the later one: token-set similarity 100.
    assert later.similarity == 100
    settings.CANON_NEAR_DUPLICATE_SIMILARITY = 101
    assert remember(project, content=RETRY + " always").memory.similar_to_id is None


def test_another_agents_private_memory_is_no_candidate(project):
    remember(project, agent="Dallas")
    later = remember(project, agent="Ripley", content=RETRY_AGAIN).memory
    assert later.similar_to_id is None


def test_a_cross_team_memory_is_compared_with_the_teams_cross_team_memories(project):
    shared = remember(project, agent="Dallas", tags="cross-team", source="coordinator").memory
    later = remember(
        project, agent="Ripley", content=RETRY_AGAIN, tags="cross-team", source="coordinator"
    ).memory
    assert later.similar_to_id == shared.pk


def test_an_expired_memory_is_no_candidate(project):
    earlier = remember(project).memory
    AgentMemory.objects.filter(pk=earlier.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert remember(project, content=RETRY_AGAIN).memory.similar_to_id is None


def test_merge_keeping_the_earlier_supersedes_the_flagged(project, coordinator):
    earlier = remember(project, agent="Alice").memory
    later = remember(project, agent="Alice", content=RETRY_AGAIN).memory
    response = coordinator.post(f"/agents/alice/memory/{later.pk}/merge", {"keep": earlier.pk})
    assert response.status_code == 200 and response.json()["id"] == earlier.pk
    later.refresh_from_db()
    assert (later.status, later.superseded_by_id, later.similar_to_id) == ("superseded", earlier.pk, None)
    actions = set(AuditEvent.objects.filter(object_type="agentmemory").values_list("action", flat=True))
    assert {"supersede", "merge"} <= actions


def test_merge_keeping_the_flagged_supersedes_the_earlier(project, coordinator):
    earlier = remember(project, agent="Alice").memory
    later = remember(project, agent="Alice", content=RETRY_AGAIN).memory
    response = coordinator.post(f"/agents/alice/memory/{later.pk}/merge", {"keep": later.pk})
    assert response.status_code == 200
    assert (response.json()["similar_to"], response.json()["status"]) == (None, "active")
    earlier.refresh_from_db()
    assert (earlier.status, earlier.superseded_by_id) == ("superseded", later.pk)


def test_merge_keeping_a_third_memory_is_a_400(project, coordinator):
    remember(project, agent="Alice")
    later = remember(project, agent="Alice", content=RETRY_AGAIN).memory
    third = remember(project, agent="Alice", content="Unrelated: the coffee machine is on floor 3").memory
    response = coordinator.post(f"/agents/alice/memory/{later.pk}/merge", {"keep": third.pk})
    assert response.status_code == 400 and "keep" in response.json()["error"]
    assert AgentMemory.objects.filter(status="superseded").count() == 0


def test_merge_of_an_unflagged_memory_is_a_409(project, coordinator):
    memory = remember(project, agent="Alice").memory
    response = coordinator.post(f"/agents/alice/memory/{memory.pk}/merge", {"keep": memory.pk})
    assert response.status_code == 409 and "not flagged" in response.json()["error"]


def test_merge_and_dismiss_are_for_coordinators(project, alice):
    remember(project, agent="Alice")
    later = remember(project, agent="Alice", content=RETRY_AGAIN).memory
    assert alice.post(f"/agents/alice/memory/{later.pk}/merge", {"keep": later.pk}).status_code == 403
    assert alice.post(f"/agents/alice/memory/{later.pk}/dismiss-similar").status_code == 403
    later.refresh_from_db()
    assert later.similar_to_id is not None


def test_dismiss_clears_the_flag_and_keeps_both(project, coordinator):
    earlier = remember(project, agent="Alice").memory
    later = remember(project, agent="Alice", content=RETRY_AGAIN).memory
    response = coordinator.post(f"/agents/alice/memory/{later.pk}/dismiss-similar")
    assert response.status_code == 200
    assert (response.json()["similar_to"], response.json()["similarity"]) == (None, None)
    assert AgentMemory.objects.filter(status="active").count() == 2
    event = AuditEvent.objects.get(action="dismiss-similar")
    assert event.detail["similar_to"] == earlier.pk


def test_the_near_duplicates_filter_lists_the_flagged(project, coordinator):
    remember(project, agent="Alice")
    later = remember(project, agent="Alice", content=RETRY_AGAIN).memory
    assert [m["id"] for m in coordinator.get("/memory", similar="true").json()] == [later.pk]


# --- corrections ----------------------------------------------------------------------------------


def test_a_correction_supersedes_the_memory_it_names(project, alice):
    old = remember(project, agent="Alice", content="The staging database is db-2").memory
    response = alice.post(
        "/agents/alice/memory",
        {"type": "learning", "content": "The staging database is db-3", "corrects": old.pk},
    )
    assert response.status_code == 201
    old.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("superseded", response.json()["id"])
    event = AuditEvent.objects.get(action="supersede", object_id=old.pk)
    assert event.detail == {"superseded_by": response.json()["id"], "reason": "correction"}


def test_correcting_another_agents_memory_is_a_403_and_writes_nothing(project, alice):
    old = remember(project, agent="Bob", content="The staging database is db-2").memory
    response = alice.post("/agents/alice/memory", {"type": "learning", "content": "db-3", "corrects": old.pk})
    assert response.status_code == 403 and "another agent" in response.json()["error"]
    assert AgentMemory.objects.count() == 1


def test_correcting_an_unknown_memory_is_a_404(project, alice, other_project):
    elsewhere = remember(other_project, agent="Alice").memory
    response = alice.post(
        "/agents/alice/memory", {"type": "learning", "content": "x", "corrects": elsewhere.pk}
    )
    assert response.status_code == 404
    assert AgentMemory.objects.filter(project=project).count() == 0


def test_correcting_an_archived_memory_is_a_409_and_writes_nothing(project, coordinator):
    old = remember(project, agent="Alice").memory
    services.memory_archive(project=project, memory_id=old.pk, by="lead")
    response = coordinator.post(
        "/agents/Alice/memory", {"type": "learning", "content": "x", "corrects": old.pk}
    )
    assert response.status_code == 409 and "not active" in response.json()["error"]
    assert AgentMemory.objects.count() == 1


def test_an_agents_cross_team_proposal_corrects_nothing(project, alice):
    old = remember(project, agent="Alice").memory
    response = alice.post(
        "/agents/alice/memory", {"type": "learning", "content": "x", "tags": "cross-team", "corrects": old.pk}
    )
    assert response.status_code == 400 and response.json()["details"][0]["field"] == "corrects"
    assert not InboxEntry.objects.exists()


def test_a_correction_saying_the_same_as_an_existing_memory_links_to_it(project):
    old = remember(project, agent="Alice", content="Use db-2").memory
    kept = remember(project, agent="Alice", content="Use db-3").memory
    result = remember(project, agent="Alice", content="use db-3.", corrects=old.pk)
    assert not result.created and result.memory.pk == kept.pk
    old.refresh_from_db()
    assert old.superseded_by_id == kept.pk


@pytest.mark.django_db(transaction=True)
def test_mcp_record_memory_corrects_and_says_when_already_recorded(project):
    alice = caller_for(project)
    old = recorded(call(alice, "record_memory", agent_name="Alice", type="learning", content="Use db-2"))
    new = recorded(
        call(
            alice,
            "record_memory",
            agent_name="Alice",
            type="learning",
            content="Use db-3",
            corrects=old["id"],
        )
    )
    assert new["already_recorded"] is False
    assert AgentMemory.objects.get(pk=old["id"]).superseded_by_id == new["id"]
    again = recorded(call(alice, "record_memory", agent_name="Alice", type="learning", content="use  DB-3"))
    assert again["already_recorded"] is True and again["message"] == f"already recorded as memory {new['id']}"
    refused(
        call(alice, "record_memory", agent_name="Alice", type="learning", content="x", pinned=True), "pin"
    )


# --- two identical writes at once -----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_identical_writes_racing_make_one_memory(transactional_db):
    project, _ = services.project_create_or_update(slug="race", name="Race")
    _, secret = services.token_issue(project=project, role="agent", agent_name="Ripley")

    def write():
        response = Client().post(
            "/api/projects/race/agents/Ripley/memory",
            {"type": "learning", "content": "Seal the airlock before venting"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {secret}",
        )
        return response.status_code, response.json()["id"]

    results = race([write for _ in range(8)])
    assert sorted(status for status, _ in results) == [200] * 7 + [201]
    assert len({memory_id for _, memory_id in results}) == 1
    assert AgentMemory.objects.filter(project=project).count() == 1
