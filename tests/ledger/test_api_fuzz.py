"""Generated requests against every operation of the published OpenAPI schema.

The schema is loaded from the Django application in-process; each operation gets a bounded number
of generated cases (valid ones and ones that break the schema), sent with a real token of a real
project. Every answer must be a documented status with a body that matches its documented schema,
and never a 5xx. Derandomized, so a failure reproduces on every run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.result import Ok

from config.wsgi import application
from ledger import services
from ledger.models import Project

SCHEMA = schemathesis.openapi.from_wsgi("/api/openapi.json", application)
LOADED = list(SCHEMA.get_all_operations())
OPERATIONS = [result.ok() for result in LOADED if isinstance(result, Ok)]
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance, content_type_conformance]
# Routes that refuse every agent token: fuzzed with the coordinator's token only.
COORDINATOR_ONLY = {
    ("POST", "/api/projects/{project}/decisions"),
    ("PATCH", "/api/projects/{project}/decisions/{decision_id}"),
    ("POST", "/api/projects/{project}/decisions/inbox/{entry_id}/merge"),
    ("POST", "/api/projects/{project}/decisions/inbox/{entry_id}/promote"),
    ("POST", "/api/projects/{project}/decisions/inbox/{entry_id}/reject"),
    ("POST", "/api/projects/{project}/memory/export"),
    ("POST", "/api/projects/{project}/memory/import"),
}
EXAMPLES_PER_OPERATION = 20


@pytest.fixture
def wsgi_requests_keep_the_test_connection() -> Iterator[None]:
    """Requests go through the WSGI handler, which closes the database connection after each one; the
    test's transaction lives on that connection, so keep it open, as Django's test client does."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def tokens(
    db: None, tmp_path: Path, settings: Any, wsgi_requests_keep_the_test_connection: None
) -> dict[str, Any]:
    """A project with a workspace, an agent and a coordinator token, and one row of each kind to find."""
    # Low enough that the fuzzing meets the 429 too.
    settings.CANON_AGENT_WRITES_PER_MINUTE = 10
    project, _ = services.project_create_or_update(slug="alpha", name="Alpha", workspace=str(tmp_path))
    _, agent = services.token_issue(project=project, role="agent", agent_name="alice")
    _, coordinator = services.token_issue(project=project, role="coordinator")
    return {"project": project, "agent": agent, "coordinator": coordinator, "ids": _seed(project)}


def _seed(project: Project) -> dict[str, list[Any]]:
    """Rows for generated cases to find: path parameters are drawn from these half of the time."""
    entries = [
        services.entry_submit(
            project=project, agent_name="alice", slug=f"use-postgres-{n}", type=kind, content="Use it."
        ).entry.pk
        for n, kind in enumerate(["technical", "learning", "scope", "pattern"])
    ]
    decision = services.decision_create(
        project=project, agent_name="alice", type="scope", title="Scope", content="Small.", by="lead"
    )
    memories = [
        services.memory_record(project=project, agent_name="alice", type="learning", content=text).pk
        for text in ("Remember.", "And this.")
    ]
    services.session_start(project=project, session_id="s-1")
    return {
        "entry_id": entries,
        "decision_id": [decision.pk],
        "memory_id": memories,
        "name": ["alice", "Alice"],
        "session_id": ["s-1", "current"],
    }


def test_every_operation_of_the_schema_is_fuzzed() -> None:
    assert len(OPERATIONS) == len(LOADED) >= 20


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.label)
def test_generated_requests_get_documented_answers(operation: Any, tokens: dict[str, Any]) -> None:
    project = tokens["project"]
    coordinator_only = (operation.method.upper(), operation.path) in COORDINATOR_ONLY
    roles = ["coordinator"] if coordinator_only else ["agent", "coordinator"]

    fixed = {"path_parameters": {"project": project.slug}}
    cases = st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE, **fixed),
        operation.as_strategy(GenerationMode.NEGATIVE, **fixed),
    )

    @given(case=cases, role=st.sampled_from(roles), data=st.data())
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: Any, role: str, data: st.DataObject) -> None:
        for name, known in tokens["ids"].items():
            if name in (case.path_parameters or {}) and data.draw(st.booleans()):
                case.path_parameters[name] = data.draw(st.sampled_from(known))
        case.call_and_validate(headers={"Authorization": f"Bearer {tokens[role]}"}, checks=CHECKS)

    fuzz()
