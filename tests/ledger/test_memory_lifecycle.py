"""A memory's lifecycle (docs/ledger.md "Memory"): kept once, pinned, expired and superseded ones hidden
from lists but never lost."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import services
from ledger.filters import MemoryFilter
from ledger.models import AgentMemory, AuditEvent

ZOMBIE = "Ripley: never trust the shuttle's auto-pilot during re-entry — fly it by hand."


def remember(project, agent="Ripley", content=ZOMBIE, **kw):
    kw.setdefault("type", "learning")
    return services.memory_store(project=project, agent_name=agent, content=content, **kw)


def expire(memory):
    AgentMemory.objects.filter(pk=memory.pk).update(expires_at=timezone.now() - timedelta(days=1))


# --- the same memory twice is one memory -------------------------------------------------------


def test_the_same_content_again_is_the_same_memory(project):
    first = remember(project)
    again = remember(
        project, content="  ripley: NEVER trust the shuttle's auto-pilot during re-entry — fly it by hand  "
    )
    assert first.created and not again.created
    assert again.memory.pk == first.memory.pk
    assert again.message == f"already recorded as memory {first.memory.pk}"
    assert AgentMemory.objects.count() == 1


def test_another_agent_may_hold_the_same_content(project):
    remember(project, agent="Ripley")
    other = remember(project, agent="Dallas")
    assert other.created and AgentMemory.objects.count() == 2


def test_an_archived_memory_does_not_absorb_the_same_content(project):
    first = remember(project).memory
    services.memory_archive(project=project, memory_id=first.pk, by="lead")
    assert remember(project).created


def test_an_expired_duplicate_is_renewed_not_copied(project):
    first = remember(project).memory
    expire(first)
    again = remember(project)
    assert not again.created and again.renewed
    assert "it had expired and is renewed" in again.message
    first.refresh_from_db()
    assert first.expires_at > timezone.now() + timedelta(days=179)
    assert AuditEvent.objects.filter(action="renew", object_id=first.pk).count() == 1


def test_api_answers_200_with_the_memory_already_recorded(project, alice):
    body = {"type": "learning", "content": "Dates are stored in UTC"}
    created = alice.post("/agents/alice/memory", body)
    assert created.status_code == 201 and created.json()["already_recorded"] is False
    again = alice.post("/agents/alice/memory", {**body, "content": "dates are stored in UTC."})
    assert again.status_code == 200
    assert again.json()["already_recorded"] is True
    assert again.json()["id"] == created.json()["id"]
    assert again.json()["message"] == f"already recorded as memory {created.json()['id']}"
    assert AgentMemory.objects.count() == 1


# --- pinned --------------------------------------------------------------------------------------


def test_memory_out_shows_the_lifecycle_fields(project, alice):
    body = alice.post("/agents/alice/memory", {"type": "learning", "content": "Prefer small PRs"}).json()
    assert body["pinned"] is False and body["expired"] is False
    assert body["expires_at"] is not None
    assert (body["superseded_by"], body["similar_to"], body["similarity"]) == (None, None, None)


def test_coordinator_pins_and_unpins_a_memory(project, coordinator):
    memory = remember(project, agent="Alice").memory
    pinned = coordinator.patch(f"/agents/alice/memory/{memory.pk}", {"pinned": True})
    assert pinned.status_code == 200
    assert (pinned.json()["pinned"], pinned.json()["expires_at"]) == (True, None)
    before = timezone.now()
    unpinned = coordinator.patch(f"/agents/alice/memory/{memory.pk}", {"pinned": False})
    memory.refresh_from_db()
    assert unpinned.json()["pinned"] is False
    assert memory.expires_at >= before + timedelta(days=180)
    events = AuditEvent.objects.filter(object_type="agentmemory", object_id=memory.pk).order_by("id")
    assert list(events.values_list("action", flat=True)) == ["pin", "unpin"]


def test_an_agent_may_not_pin_its_own_memory(project, alice):
    memory = remember(project, agent="Alice").memory
    response = alice.patch(f"/agents/alice/memory/{memory.pk}", {"pinned": True})
    assert response.status_code == 403 and "coordinator" in response.json()["error"]
    memory.refresh_from_db()
    assert memory.pinned is False


def test_an_agent_may_not_record_a_pinned_memory(project, alice):
    response = alice.post("/agents/alice/memory", {"type": "learning", "content": "x", "pinned": True})
    assert response.status_code == 403
    assert not AgentMemory.objects.exists()


def test_coordinator_records_a_pinned_memory_that_never_expires(project, coordinator):
    body = coordinator.post(
        "/agents/Dallas/memory", {"type": "core_context", "content": "Nostromo crew of seven", "pinned": True}
    ).json()
    assert (body["pinned"], body["expires_at"]) == (True, None)


def test_a_superseded_memory_keeps_its_status(project, coordinator):
    old = remember(project, agent="Alice").memory
    remember(project, agent="Alice", content="Fly the shuttle by hand, always", corrects=old.pk)
    response = coordinator.patch(f"/agents/alice/memory/{old.pk}", {"status": "active"})
    assert response.status_code == 409 and "superseded by memory" in response.json()["error"]


def test_patch_refuses_setting_superseded_directly(project, coordinator):
    memory = remember(project, agent="Alice").memory
    response = coordinator.patch(f"/agents/alice/memory/{memory.pk}", {"status": "superseded"})
    assert response.status_code == 400
    memory.refresh_from_db()
    assert memory.status == "active"


# --- expired and superseded are hidden, not lost -------------------------------------------------


def test_lists_leave_out_expired_and_superseded_memories(project, alice):
    live = remember(project, agent="Alice", content="Kane: do not touch the eggs").memory
    gone = remember(project, agent="Alice", content="Ash is a synthetic").memory
    old = remember(project, agent="Alice", content="Mother is helpful").memory
    remember(project, agent="Alice", content="Mother serves the company, not the crew", corrects=old.pk)
    expire(gone)
    ids = [m["id"] for m in alice.get("/memory").json()]
    assert live.pk in ids and gone.pk not in ids and old.pk not in ids
    agent_ids = [m["id"] for m in alice.get("/agents/alice/memory").json()]
    assert gone.pk not in agent_ids and old.pk not in agent_ids


def test_an_explicit_filter_shows_expired_and_superseded(project, alice):
    gone = remember(project, agent="Alice", content="Ash is a synthetic").memory
    old = remember(project, agent="Alice", content="Mother is helpful").memory
    remember(project, agent="Alice", content="Mother serves the company, not the crew", corrects=old.pk)
    expire(gone)
    assert [m["id"] for m in alice.get("/memory", expired="true").json()] == [gone.pk]
    assert gone.pk in [m["id"] for m in alice.get("/agents/alice/memory", expired="all").json()]
    superseded = alice.get("/memory", status="superseded").json()
    assert [m["id"] for m in superseded] == [old.pk]
    assert superseded[0]["superseded_by"] is not None


def test_one_expired_memory_is_still_readable(project, alice):
    memory = remember(project, agent="Alice").memory
    expire(memory)
    response = alice.get(f"/agents/alice/memory/{memory.pk}")
    assert response.status_code == 200 and response.json()["expired"] is True


def test_an_unknown_expired_value_is_a_400_naming_the_choices(project, alice):
    response = alice.get("/memory", expired="maybe")
    assert response.status_code == 400
    assert "'maybe' is not one of: all, false, true" in response.json()["error"]


def test_the_filter_hides_expired_only_from_the_active_list(project):
    memory = remember(project, agent="Alice").memory
    services.memory_archive(project=project, memory_id=memory.pk, by="lead")
    expire(memory)
    rows = AgentMemory.objects.all()
    assert list(MemoryFilter({"status": "archived"}, queryset=rows).qs) == [memory]
    assert list(MemoryFilter({}, queryset=rows).qs) == []


@pytest.mark.parametrize("never", ["coordinator", "notes"])
def test_sources_without_a_lifetime_never_expire(project, never):
    memory = remember(project, source=never).memory
    assert memory.expires_at is None and not memory.expired
