"""POST /scribe and POST /memory/export|import (docs/ledger.md, docs/api.md, docs/mirror.md)."""

from __future__ import annotations

import pytest

from ledger import services
from ledger.models import InboxEntry, MirrorRun

STARTED = "2020-01-01T00:00:00Z"


def test_agent_runs_the_scribe_for_itself(project, alice):
    services.entry_submit(
        project=project, agent_name="Alice", slug="l", type="learning", content="x", run_id="r1"
    )
    services.entry_submit(
        project=project, agent_name="Alice", slug="a", type="scope", content="x", run_id="r1"
    )
    response = alice.post("/scribe", {"run_id": "r1", "started_at": STARTED, "outcome": "succeeded"})
    assert response.status_code == 200
    body = response.json()
    assert [e["slug"] for e in body["merged"]] == ["l"] and body["merged"][0]["memory_id"]
    assert [e["slug"] for e in body["needs_review"]] == ["a"]
    assert body["summary_line"] == "Run r1 by Alice succeeded."


def test_agent_cannot_run_the_scribe_for_another_agent(project, alice):
    assert (
        alice.post("/scribe", {"agent_name": "Bob", "run_id": "r1", "started_at": STARTED}).status_code == 403
    )


def test_coordinator_runs_the_scribe_for_anyone_but_must_name_the_agent(project, coordinator):
    assert coordinator.post("/scribe", {"run_id": "r1", "started_at": STARTED}).status_code == 400
    assert (
        coordinator.post("/scribe", {"agent_name": "Bob", "run_id": "r1", "started_at": STARTED}).status_code
        == 200
    )


@pytest.mark.parametrize("started_at", ["2020-01-01T00:00:00", "yesterday", 5])
def test_scribe_needs_a_time_with_a_zone(project, alice, started_at):
    response = alice.post("/scribe", {"run_id": "r1", "started_at": started_at})
    assert response.status_code == 400
    assert "started_at" in response.json()["error"]


def test_export_and_import_are_for_coordinators(project, alice):
    assert alice.post("/memory/export").status_code == 403
    assert alice.post("/memory/import").status_code == 403


def test_export_reports_what_it_wrote(project, coordinator, tmp_path):
    project.workspace = str(tmp_path)
    project.save()
    response = coordinator.post("/memory/export")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and ".squad/decisions.md" in body["written"]
    assert MirrorRun.objects.get().trigger == "api"


def test_failed_export_is_reported_as_failed_not_500(project, coordinator, tmp_path):
    project.workspace = str(tmp_path / "missing")
    project.save()
    response = coordinator.post("/memory/export")
    assert response.status_code == 503
    assert response.json()["ok"] is False and "does not exist" in response.json()["error"]


def test_import_reports_created_and_skipped(project, coordinator, tmp_path):
    project.workspace = str(tmp_path)
    project.save()
    inbox = tmp_path / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    (inbox / "a.md").write_text("---\nagent: Dave\nslug: a\ntype: scope\ntitle: A\n---\nBody.\n")
    (inbox / "b.md").write_bytes(b"\xff not UTF-8\n")
    body = coordinator.post("/memory/import").json()
    assert body["created"] == ["a"]
    assert body["skipped"] == [{"path": ".squad/decisions/inbox/b.md", "reason": "not UTF-8"}]
    assert InboxEntry.objects.get().source == "import"


@pytest.mark.parametrize(
    "started_at", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-23:59", "9999-12-31T23:00:00-01:30"]
)
def test_scribe_refuses_a_start_that_leaves_the_calendar_in_utc(project, alice, started_at):
    response = alice.post("/scribe", {"run_id": "r1", "started_at": started_at})
    assert response.status_code == 400
    body = response.json()
    assert [d["field"] for d in body["details"]] == ["started_at"]


def test_scribe_takes_a_start_with_a_far_offset_that_stays_in_range(project, alice):
    services.entry_submit(project=project, agent_name="Alice", slug="l", type="learning", content="x")
    response = alice.post("/scribe", {"run_id": "r1", "started_at": "2000-01-01T00:00:00-23:59"})
    assert response.status_code == 200
    assert [e["slug"] for e in response.json()["merged"]] == ["l"]


@pytest.mark.parametrize("field", ["run_id", "outcome"])
def test_scribe_refuses_text_that_cannot_be_stored(project, alice, field):
    alice.post("/sessions", {"session_id": "s1"})
    services.entry_submit(project=project, agent_name="Alice", slug="l", type="learning", content="x")
    body = {"run_id": "r1", "started_at": STARTED, field: "bad\x00"}
    response = alice.post("/scribe", body)
    assert response.status_code == 400
    assert [d["field"] for d in response.json()["details"]] == [field]
    assert InboxEntry.objects.get().status == "pending"


def test_an_agent_token_for_the_coordinator_agents_name_cannot_run_the_backstop(project, make_api):
    lead = make_api("agent", "lead")  # issued while "lead" was an ordinary agent's name
    services.project_create_or_update(slug=project.slug, coordinator="Lead")
    entry = services.entry_submit(
        project=project, agent_name="Lead", slug="a", type="architectural", content="x", run_id="r1"
    ).entry
    response = lead.post("/scribe", {"run_id": "r1", "started_at": STARTED, "approved": True})
    assert response.status_code == 403
    assert "coordinator agent" in response.json()["error"]
    assert InboxEntry.objects.get(pk=entry.pk).status == "pending"


def test_coordinator_token_runs_the_backstop(project, coordinator):
    services.project_create_or_update(slug=project.slug, coordinator="Lead")
    entry = services.entry_submit(
        project=project,
        agent_name="Lead",
        slug="a",
        type="architectural",
        content="x",
        run_id="r1",
        source="coordinator",
    ).entry
    body = coordinator.post(
        "/scribe", {"agent_name": "lead", "run_id": "r1", "started_at": STARTED, "approved": True}
    ).json()
    assert [e["id"] for e in body["merged"]] == [entry.pk]
