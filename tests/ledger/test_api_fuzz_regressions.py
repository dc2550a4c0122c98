"""Answers the fuzzing of the OpenAPI schema found undocumented, pinned one by one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ledger.api import api

WRITES = [
    ("post", "/api/projects/{project}/decisions/inbox"),
    ("post", "/api/projects/{project}/decisions"),
    ("patch", "/api/projects/{project}/decisions/{decision_id}"),
    ("post", "/api/projects/{project}/decisions/inbox/{entry_id}/merge"),
    ("post", "/api/projects/{project}/decisions/inbox/{entry_id}/reject"),
    ("post", "/api/projects/{project}/agents/{name}/memory"),
    ("patch", "/api/projects/{project}/agents/{name}/memory/{memory_id}"),
    ("post", "/api/projects/{project}/sessions"),
    ("patch", "/api/projects/{project}/sessions/current"),
    ("post", "/api/projects/{project}/scribe"),
    ("post", "/api/projects/{project}/memory/export"),
]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    """The schema as published at /api/openapi.json (JSON keys, so status codes are strings)."""
    return json.loads(json.dumps(api.get_openapi_schema()))


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_every_write_documents_the_rate_limit(schema, method, path):
    assert "429" in schema["paths"][path][method]["responses"]


def test_a_rate_limited_write_answers_the_documented_429(project, alice, settings, schema):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    body = {"run_id": "r-1", "started_at": "2026-01-01T00:00:00Z"}
    assert alice.post("/scribe", body).status_code == 200
    response = alice.post("/scribe", body)
    assert response.status_code == 429
    assert response["Retry-After"]
    assert set(response.json()) <= set(schema["components"]["schemas"]["ErrorOut"]["properties"])


def test_reads_are_never_rate_limited_so_do_not_document_429(schema):
    assert "429" not in schema["paths"]["/api/projects/{project}/decisions"]["get"]["responses"]


def test_filters_state_their_values(schema):
    params = {
        p["name"]: p["schema"]
        for p in schema["paths"]["/api/projects/{project}/decisions"]["get"]["parameters"]
    }
    assert params["status"]["enum"] == ["active", "superseded", "archived", "all"]
    assert (params["limit"]["minimum"], params["limit"]["maximum"], params["offset"]["minimum"]) == (
        1,
        1000,
        0,
    )


def test_stating_a_rule_in_the_schema_does_not_enforce_it_twice(project, alice):
    """The limit range is stated in the schema, but refused by `page` with the project's own message."""
    response = alice.get("/decisions", limit=0)
    assert response.status_code == 400
    assert response.json()["details"] == [{"field": "limit", "message": "must be between 1 and 1000"}]
