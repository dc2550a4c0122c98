"""GET /context and `manage.py compile_context` (docs/compiler.md)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ledger import context, services
from ledger.models import Compilation


@pytest.fixture
def ledger(project):
    services.decision_create(
        project=project, agent_name="lead", type="scope", title="No billing", content="c", by="l"
    )
    services.memory_record(
        project=project, agent_name="Alice", type="core_context", content="Alice owns HTTP."
    )
    services.memory_record(project=project, agent_name="Bob", type="core_context", content="Bob owns the DB.")
    return project


def test_agent_gets_its_own_context(ledger, alice):
    response = alice.get("/context", agent="alice", run_id="r1")
    assert response.status_code == 200
    body = response.json()
    assert body["text"].startswith("## Boundaries and Decisions")
    assert "Alice owns HTTP." in body["text"] and "Bob owns" not in body["text"]
    assert set(body["layers"]) == {"boundaries", "memory", "relevant", "session"}
    assert body["sha256"] and body["tokens"] > 0 and body["skipped"] == []
    assert Compilation.objects.get().run_id == "r1"


def test_agent_asking_for_another_agent_is_403(ledger, alice):
    assert alice.get("/context", agent="Bob").status_code == 403


def test_coordinator_may_ask_for_anyone(ledger, coordinator):
    assert "Bob owns the DB." in coordinator.get("/context", agent="bob").json()["text"]


def test_token_of_another_project_is_404(ledger, other_project, make_api):
    stranger = make_api("coordinator", target=other_project)
    assert stranger.get("/context", agent="Alice").status_code == 404


def test_no_token_is_401(ledger, client):
    assert client.get("/api/projects/alpha/context", {"agent": "Alice"}).status_code == 401


def test_child_mode_and_limits_as_query_parameters(ledger, alice):
    body = alice.get("/context", agent="Alice", child="true").json()
    assert "## Memory" not in body["text"]
    body = alice.get("/context", agent="Alice", max_items=0).json()
    assert body["layers"]["memory"]["ids"] == []


def test_a_task_brings_the_decisions_that_bear_on_it_into_the_relevant_layer(ledger, alice):
    def decide(type, title):
        return services.decision_create(
            project=ledger, agent_name="lead", type=type, title=title, content="Keep it short.", by="l"
        ).pk

    queue = decide("technical", "Queue background jobs in PostgreSQL")
    review = decide("process", "Review every queue migration twice")
    unrelated = decide("technical", "Serve fonts from the CDN")
    boundary = decide("architectural", "Background jobs stay in one queue")
    body = alice.get("/context", agent="alice", task="background jobs queue migration").json()
    relevant, boundaries = body["layers"]["relevant"], body["layers"]["boundaries"]
    assert set(relevant["decisions"]) == {queue, review}
    assert unrelated not in relevant["decisions"]
    # A boundary is in every block already: never in the relevant layer again.
    assert boundary in boundaries["ids"] and boundary not in relevant["decisions"]
    # Listed in block order: the order their lines have in the text.
    titles = {queue: "Queue background jobs in PostgreSQL", review: "Review every queue migration twice"}
    assert relevant["decisions"] == sorted(
        relevant["decisions"], key=lambda pk: body["text"].index(titles[pk])
    )


def test_without_a_task_the_relevant_layer_lists_no_decisions(ledger, alice):
    services.decision_create(
        project=ledger, agent_name="lead", type="technical", title="Queue jobs", content="c", by="l"
    )
    relevant = alice.get("/context", agent="alice").json()["layers"]["relevant"]
    assert relevant["decisions"] == [] and relevant["episodes"] == []


def test_empty_context_is_null_text(project, alice):
    body = alice.get("/context", agent="Alice").json()
    assert body["text"] is None and body["sha256"] is None


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"agent": "Alice", "max_items": -1},
        {"agent": "Alice", "max_tokens": "lots"},
        {"agent": "Alice", "max_items": 10**6},
    ],
)
def test_bad_parameters_are_400(ledger, alice, params):
    response = alice.get("/context", **params)
    assert response.status_code == 400
    assert response.json()["error"]


def test_internal_error_is_200_with_null_text_and_error(ledger, alice, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(context, "_compile", broken)
    response = alice.get("/context", agent="Alice")
    assert response.status_code == 200
    assert response.json()["text"] is None
    assert response.json()["error"]


def test_command_prints_the_block(ledger):
    out = StringIO()
    call_command("compile_context", "--project", "alpha", "--agent", "ALICE", stdout=out)
    assert out.getvalue() == context.compile(ledger, "Alice").text


def test_command_json_and_run_id(ledger):
    out = StringIO()
    call_command(
        "compile_context", "--project", "alpha", "--agent", "Alice", "--json", "--run-id", "r9", stdout=out
    )
    body = json.loads(out.getvalue())
    assert body["sha256"] == context.compile(ledger, "Alice").sha256
    assert Compilation.objects.filter(run_id="r9").exists()


def test_command_child_mode(ledger):
    out = StringIO()
    call_command("compile_context", "--project", "alpha", "--agent", "Alice", "--child", stdout=out)
    assert "## Memory" not in out.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        ["--project", "nope", "--agent", "Alice"],
        ["--project", "alpha", "--agent", "x" * 65],
        ["--project", "alpha", "--agent", "Alice", "--max-items", "-3"],
    ],
)
def test_command_bad_arguments_exit_2(ledger, args):
    with pytest.raises(CommandError) as info:
        call_command("compile_context", *args, stdout=StringIO())
    assert info.value.returncode == 2


def test_a_compile_recorded_for_a_run_counts_as_a_write(project, alice, settings):
    from ledger.models import Compilation

    settings.CANON_AGENT_WRITES_PER_MINUTE = 3
    answers = [alice.get("/context", agent="alice", run_id=f"r{n}").status_code for n in range(5)]
    assert answers == [200, 200, 200, 429, 429]
    assert Compilation.objects.count() == 3
    # A compile that records nothing stores nothing and is not counted.
    assert alice.get("/context", agent="alice").status_code == 200


def test_a_coordinators_recorded_compiles_are_not_counted(project, coordinator, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    for n in range(3):
        assert coordinator.get("/context", agent="alice", run_id=f"r{n}").status_code == 200
