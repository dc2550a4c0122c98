"""Who may call what (docs/api.md): 401 without a valid token, 404 for another project, 403 for roles."""

from __future__ import annotations

import pytest
from django.test import Client

from ledger import services

ENTRY = {"slug": "use-postgres", "type": "architectural", "content": "Use PostgreSQL."}


def test_no_token_is_401(project):
    response = Client().get("/api/projects/alpha/decisions/inbox")
    assert response.status_code == 401
    assert "error" in response.json()


def test_bad_token_is_401(project):
    response = Client().get("/api/projects/alpha/decisions/inbox", HTTP_AUTHORIZATION="Bearer canon_nope")
    assert response.status_code == 401
    assert "bearer" in response.json()["error"]


def test_revoked_token_is_401(project, alice):
    from django.utils import timezone

    from ledger.models import ApiToken

    ApiToken.objects.update(revoked_at=timezone.now())
    assert alice.get("/decisions/inbox").status_code == 401


def test_token_of_another_project_is_404(project, other_project, alice):
    response = alice.get("/decisions/inbox", project="beta")
    assert response.status_code == 404
    assert alice.post("/decisions/inbox", ENTRY, project="beta").status_code == 404


def test_unknown_project_is_404(project, alice):
    assert alice.get("/decisions", project="nope").status_code == 404


def test_agent_submitting_as_another_agent_is_403(project, alice):
    response = alice.post("/decisions/inbox", {**ENTRY, "agent_name": "Bob"})
    assert response.status_code == 403
    assert "Alice" in response.json()["error"]


def test_agent_name_of_the_token_in_another_case_is_accepted(project, alice):
    assert alice.post("/decisions/inbox", {**ENTRY, "agent_name": "ALICE"}).status_code == 201


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/decisions/inbox/{id}/merge", None),
        ("post", "/decisions/inbox/{id}/promote", None),
        ("post", "/decisions/inbox/{id}/reject", {"reason": "no"}),
        ("post", "/decisions", {"agent_name": "a", "type": "scope", "title": "t", "content": "c"}),
        ("patch", "/decisions/{decision}", {"title": "x"}),
    ],
)
def test_agent_calling_a_coordinator_route_is_403(project, alice, method, path, body):
    entry = services.entry_submit(
        project=project, agent_name="Alice", slug="s", type="scope", content="c"
    ).entry
    decision = services.decision_create(
        project=project, agent_name="lead", type="scope", title="t", content="c", by="lead"
    )
    response = alice.send(method, path.format(id=entry.pk, decision=decision.pk), body)
    assert response.status_code == 403
    entry.refresh_from_db()
    assert entry.status == "pending"


def test_agent_reading_another_agents_private_memory_is_403(project, alice):
    memory = services.memory_record(project=project, agent_name="Bob", type="learning", content="secret")
    response = alice.get(f"/agents/Bob/memory/{memory.pk}")
    assert response.status_code == 403


def test_agent_writing_another_agents_memory_is_403(project, alice):
    memory = services.memory_record(
        project=project, agent_name="Bob", type="learning", content="shared", tags="cross-team"
    )
    assert alice.post("/agents/Bob/memory", {"type": "learning", "content": "x"}).status_code == 403
    assert alice.patch(f"/agents/Bob/memory/{memory.pk}", {"content": "hijack"}).status_code == 403
    memory.refresh_from_db()
    assert memory.content == "shared"


def test_coordinator_submitting_must_name_the_agent(project, coordinator):
    response = coordinator.post("/decisions/inbox", ENTRY)
    assert response.status_code == 400
    response = coordinator.post("/decisions/inbox", {**ENTRY, "agent_name": "Bob"})
    assert response.status_code == 201
    assert response.json()["source"] == "coordinator"
    assert response.json()["agent_name"] == "Bob"
