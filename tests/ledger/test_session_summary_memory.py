"""A session's summary becomes a memory when the session ends (docs/ledger.md "Sessions")."""

from __future__ import annotations

from ledger import services, visibility
from ledger.models import Agent, AgentMemory

SUMMARY = "Shipped the retry queue; Ripley found the flaky test in billing — quarantine it next session."


def summary_memories(project):
    return AgentMemory.objects.filter(project=project, source="session_summary")


def test_ending_a_session_keeps_its_summary_as_a_coordinator_memory(project):
    session = services.session_start(project=project, session_id="s-1", summary=SUMMARY)
    services.session_update_current(project=project, end=True)
    memory = summary_memories(project).get()
    assert (memory.agent.name, memory.type, memory.importance) == ("coordinator", "update", "medium")
    assert (memory.content, memory.session_id) == (SUMMARY, session.session_id)
    assert memory.expires_at is not None  # session summaries have a time-to-live


def test_a_session_closed_by_the_next_one_keeps_its_summary(project):
    services.session_start(project=project, session_id="s-1", summary=SUMMARY)
    services.session_start(project=project, session_id="s-2")
    assert list(summary_memories(project).values_list("session_id", flat=True)) == ["s-1"]


def test_a_blank_summary_keeps_nothing(project):
    services.session_start(project=project, session_id="s-1", summary="  \n ")
    services.session_update_current(project=project, end=True)
    assert not summary_memories(project).exists()


def test_the_summary_is_kept_once_per_session(project):
    services.session_start(project=project, session_id="s-1", summary=SUMMARY)
    services.session_update_current(project=project, summary_append="and one more thing", end=True)
    services.session_start(project=project, session_id="s-2")
    assert summary_memories(project).count() == 1
    assert summary_memories(project).get().content == SUMMARY + "\nand one more thing"


def test_the_summary_goes_to_the_projects_named_coordinator(project):
    project, _ = services.project_create_or_update(slug="alpha", coordinator="Dallas")
    services.session_start(project=project, session_id="s-1", summary=SUMMARY)
    services.session_update_current(project=project, end=True)
    assert summary_memories(project).get().agent.name == "Dallas"


def test_every_agent_reads_session_summaries_but_not_each_others_memories(project):
    ripley = services.agent_get_or_create(project=project, name="Ripley")
    services.memory_record(project=project, agent_name="Dallas", type="learning", content="private to Dallas")
    services.session_start(project=project, session_id="s-1", summary=SUMMARY)
    services.session_update_current(project=project, end=True)
    seen = list(visibility.memories_visible_to(project, ripley).values_list("content", flat=True))
    assert seen == [SUMMARY]


def test_an_agent_reads_a_session_summary_through_the_api(project, alice):
    services.session_start(project=project, session_id="s-1", summary=SUMMARY)
    services.session_update_current(project=project, end=True)
    memory = summary_memories(project).get()
    assert alice.get(f"/agents/coordinator/memory/{memory.pk}").status_code == 200
    assert [m["id"] for m in alice.get("/memory").json()] == [memory.pk]


def test_an_agent_still_may_not_edit_a_session_summary(project, alice):
    services.session_start(project=project, session_id="s-1", summary=SUMMARY)
    services.session_update_current(project=project, end=True)
    memory = summary_memories(project).get()
    response = alice.patch(f"/agents/coordinator/memory/{memory.pk}", {"content": "rewritten"})
    assert response.status_code == 403
    memory.refresh_from_db()
    assert memory.content == SUMMARY
    assert Agent.objects.filter(project=project, name="coordinator").exists()
