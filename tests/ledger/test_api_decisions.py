"""Decision routes (docs/ledger.md, docs/api.md)."""

from __future__ import annotations

import pytest

from ledger import services
from ledger.models import Decision

NEW = {"agent_name": "lead", "type": "architectural", "title": "Use Postgres", "content": "PostgreSQL 15."}


def make(project, title, type="architectural"):
    return services.decision_create(
        project=project, agent_name="lead", type=type, title=title, content="c", by="lead"
    )


def test_create_decision_is_201_and_active(project, coordinator):
    response = coordinator.post("/decisions", {**NEW, "tags": ["db"], "rationale": "ops"})
    assert response.status_code == 201
    body = response.json()
    assert (body["status"], body["agent_name"], body["tags"], body["supersedes"], body["revisions"]) == (
        "active",
        "lead",
        ["db"],
        [],
        [],
    )


def test_create_decision_superseding_others(project, coordinator):
    a, b = make(project, "a"), make(project, "b")
    response = coordinator.post("/decisions", {**NEW, "supersedes": [a.pk, b.pk]})
    assert response.status_code == 201
    new_id = response.json()["id"]
    assert sorted(response.json()["supersedes"]) == sorted([a.pk, b.pk])
    old = coordinator.get(f"/decisions/{a.pk}").json()
    assert (old["status"], old["superseded_by_id"]) == ("superseded", new_id)


def test_decisions_default_to_active(project, alice):
    a, b = make(project, "a"), make(project, "b")
    services.decision_archive(project=project, decision_id=a.pk, by="lead")
    assert [d["id"] for d in alice.get("/decisions").json()] == [b.pk]
    assert {d["id"] for d in alice.get("/decisions", status="all").json()} == {a.pk, b.pk}
    assert [d["id"] for d in alice.get("/decisions", status="archived").json()] == [a.pk]


def test_decision_filters_by_type_and_agent(project, alice):
    make(project, "a", type="scope")
    make(project, "b", type="process")
    services.decision_create(
        project=project, agent_name="Bob", type="scope", title="c", content="c", by="lead"
    )
    assert [d["title"] for d in alice.get("/decisions", type="scope", agent="bob").json()] == ["c"]


def test_decision_detail_has_revisions_links_and_source_entry(project, alice, coordinator):
    entry_id = alice.post(
        "/decisions/inbox", {"slug": "s", "type": "scope", "title": "T", "content": "v1"}
    ).json()["id"]
    decision_id = coordinator.post(f"/decisions/inbox/{entry_id}/merge").json()["decision_id"]
    coordinator.patch(f"/decisions/{decision_id}", {"content": "v2"})
    body = alice.get(f"/decisions/{decision_id}").json()
    assert body["source_entry_id"] == entry_id
    assert body["content"] == "v2"
    assert [(r["content"], r["changed_by"]) for r in body["revisions"]] == [("v1", "coordinator")]


def test_patch_supersede(project, coordinator):
    old, new = make(project, "old"), make(project, "new")
    response = coordinator.patch(f"/decisions/{old.pk}", {"status": "superseded", "superseded_by_id": new.pk})
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["superseded_by_id"]) == ("superseded", new.pk)
    assert coordinator.get(f"/decisions/{new.pk}").json()["supersedes"] == [old.pk]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"superseded_by_id": "self"}, 400),
        ({"status": "superseded"}, 400),
        ({"status": "retired"}, 400),
        ({"superseded_by_id": 999999}, 400),
    ],
)
def test_supersede_validates(project, coordinator, body, status):
    decision = make(project, "d")
    if body.get("superseded_by_id") == "self":
        body = {"superseded_by_id": decision.pk}
    response = coordinator.patch(f"/decisions/{decision.pk}", body)
    assert response.status_code == status
    assert "error" in response.json()
    decision.refresh_from_db()
    assert decision.status == "active"


def test_supersede_by_an_inactive_decision_is_409(project, coordinator):
    old, new = make(project, "old"), make(project, "new")
    services.decision_archive(project=project, decision_id=new.pk, by="lead")
    response = coordinator.patch(f"/decisions/{old.pk}", {"superseded_by_id": new.pk})
    assert response.status_code == 409


def test_supersede_by_another_projects_decision_is_400(project, other_project, coordinator):
    mine, theirs = make(project, "mine"), make(other_project, "theirs")
    response = coordinator.patch(f"/decisions/{mine.pk}", {"superseded_by_id": theirs.pk})
    assert response.status_code == 400
    assert Decision.objects.get(pk=mine.pk).status == "active"


def test_archive_then_any_other_status_change_is_409(project, coordinator):
    d = make(project, "d")
    assert coordinator.patch(f"/decisions/{d.pk}", {"status": "archived"}).json()["status"] == "archived"
    assert coordinator.patch(f"/decisions/{d.pk}", {"status": "active"}).status_code == 409
    assert coordinator.patch(f"/decisions/{d.pk}", {"status": "archived"}).status_code == 409


def test_decision_of_another_project_is_404(project, other_project, coordinator):
    theirs = make(other_project, "theirs")
    assert coordinator.get(f"/decisions/{theirs.pk}").status_code == 404
    assert coordinator.patch(f"/decisions/{theirs.pk}", {"title": "x"}).status_code == 404


def test_creating_with_unknown_type_stores_nothing(project, coordinator):
    response = coordinator.post("/decisions", {**NEW, "type": "learning"})
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "type"
    assert not Decision.objects.exists()
