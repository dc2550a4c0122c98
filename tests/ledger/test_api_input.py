"""Bad input gets a 4xx with a message and stores nothing (SPEC §3)."""

from __future__ import annotations

import pytest
from django.test import Client

from ledger.models import InboxEntry

ENTRY = {"slug": "use-postgres", "type": "architectural", "content": "Use PostgreSQL."}


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"type": "opinion"}, "type"),
        ({"content": ""}, "content"),
        ({"slug": "!!!"}, "slug"),
        ({"importance": "urgent"}, "importance"),
        ({"slug": 42}, "slug"),
        ({"content": ["a"]}, "content"),
        ({"tags": {"a": 1}}, "tags"),
        ({"tags": [1, 2]}, "tags"),
        ({"run_id": None}, "run_id"),
    ],
)
def test_invalid_fields_are_400_with_details(project, alice, override, field):
    response = alice.post("/decisions/inbox", {**ENTRY, **override})
    assert response.status_code == 400
    body = response.json()
    assert body["error"]
    assert field in [d["field"].split(".")[0] for d in body["details"]]
    assert not InboxEntry.objects.exists()


@pytest.mark.parametrize("missing", ["slug", "type", "content"])
def test_missing_required_field_is_400(project, alice, missing):
    body = {k: v for k, v in ENTRY.items() if k != missing}
    response = alice.post("/decisions/inbox", body)
    assert response.status_code == 400
    assert missing in response.json()["error"]


def test_agent_name_over_64_characters_is_400(project, coordinator):
    response = coordinator.post("/decisions/inbox", {**ENTRY, "agent_name": "x" * 65})
    assert response.status_code == 400
    assert not InboxEntry.objects.exists()


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"a string"', "\xff\xfe"])
def test_malformed_json_is_400(project, alice, raw):
    response = alice.post("/decisions/inbox", raw=raw)
    assert response.status_code == 400
    assert response.json()["error"]
    assert not InboxEntry.objects.exists()


def test_body_over_one_mebibyte_is_413(project, alice):
    response = alice.post("/decisions/inbox", {**ENTRY, "content": "x" * (1024 * 1024 + 1)})
    assert response.status_code == 413
    assert "1 MiB" in response.json()["error"]
    assert not InboxEntry.objects.exists()


def test_body_over_one_mebibyte_with_a_lying_content_length_is_refused(project, alice):
    body = '{"slug": "s", "type": "scope", "content": "' + "x" * (1024 * 1024 + 10) + '"}'
    response = Client().generic(
        "POST",
        "/api/projects/alpha/decisions/inbox",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {alice.token}",
        CONTENT_LENGTH="20",
    )
    # Django reads only the declared length: the truncated body is not valid JSON.
    assert response.status_code in (400, 413)
    assert not InboxEntry.objects.exists()


def test_content_just_under_the_limit_is_accepted(project, alice):
    response = alice.post("/decisions/inbox", {**ENTRY, "content": "x" * (1024 * 1024 - 200)})
    assert response.status_code == 201


def test_non_integer_id_is_400_not_500(project, coordinator):
    response = coordinator.post("/decisions/inbox/abc/merge")
    assert response.status_code in (400, 404)


def test_openapi_and_docs_are_published(project):
    schema = Client().get("/api/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/projects/{project}/decisions/inbox" in paths
    assert "/api/projects/{project}/sessions/current" in paths
    assert Client().get("/api/docs").status_code == 200
