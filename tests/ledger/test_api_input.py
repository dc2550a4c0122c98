"""Bad input gets a 4xx with a message and stores nothing (docs/api.md)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.test import Client

from ledger import services
from ledger.models import AgentMemory, Decision, InboxEntry, Session
from ledger.services.fields import CONTENT_MAX_LENGTH

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


def test_content_at_its_maximum_is_accepted(project, alice):
    response = alice.post("/decisions/inbox", {**ENTRY, "content": "x" * CONTENT_MAX_LENGTH})
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


# Bodies that are valid JSON but not a JSON object: refused even where every field is optional.
NON_OBJECT_BODIES = ["[]", "[null, null]", "42", '"text"', "true", "null"]


@pytest.mark.parametrize("raw", NON_OBJECT_BODIES)
@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "/sessions"), ("patch", "/sessions/current"), ("post", "/decisions/inbox")],
)
def test_a_body_that_is_not_a_json_object_is_400(project, alice, raw, method, path):
    alice.post("/sessions", {"session_id": "open"})
    response = alice.send(method, path, raw=raw)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] and body["details"]
    assert Session.objects.count() == 1
    assert Session.objects.get().ended_at is None
    assert not InboxEntry.objects.exists()


@pytest.mark.parametrize("raw", [r for r in NON_OBJECT_BODIES if r != "null"])
def test_patching_a_decision_or_memory_with_a_non_object_body_is_400(project, coordinator, raw):
    decision = coordinator.post(
        "/decisions", {"agent_name": "Alice", "type": "scope", "title": "t", "content": "c"}
    ).json()
    memory = coordinator.post("/agents/Alice/memory", {"type": "learning", "content": "m"}).json()
    assert coordinator.patch(f"/decisions/{decision['id']}", raw=raw).status_code == 400
    assert coordinator.patch(f"/agents/Alice/memory/{memory['id']}", raw=raw).status_code == 400


UNSTORABLE = [
    pytest.param("a\x00b", id="nul"),
    pytest.param("\ud800", id="lone-high-surrogate"),
    pytest.param("x\udfffy", id="lone-low-surrogate"),
]


@pytest.mark.parametrize("text", UNSTORABLE)
@pytest.mark.parametrize("field", ["title", "content", "rationale", "run_id", "tags"])
def test_text_that_cannot_be_stored_is_400_not_500(project, alice, text, field):
    value: object = [text] if field == "tags" else text
    response = alice.post("/decisions/inbox", {**ENTRY, field: value})
    assert response.status_code == 400
    body = response.json()
    assert field in [d["field"] for d in body["details"]]
    assert not InboxEntry.objects.exists()


@pytest.mark.parametrize("text", UNSTORABLE)
def test_unstorable_text_is_400_on_every_write(project, coordinator, text):
    decision = {"agent_name": "Alice", "type": "scope", "title": "t", "content": "c"}
    created = coordinator.post("/decisions", decision).json()
    memory = coordinator.post("/agents/Alice/memory", {"type": "learning", "content": "m"}).json()
    coordinator.post("/sessions", {"session_id": "s1"})
    writes = [
        ("post", "/decisions", {**decision, "content": text}),
        ("patch", f"/decisions/{created['id']}", {"rationale": text}),
        ("post", "/agents/Alice/memory", {"type": "learning", "content": text}),
        ("post", "/agents/Alice/memory", {"type": "learning", "content": "m", "session_id": text}),
        ("patch", f"/agents/Alice/memory/{memory['id']}", {"tags": [text]}),
        ("post", "/sessions", {"focus_area": text}),
        ("post", "/sessions", {"session_id": text}),
        ("post", "/sessions", {"active_issues": [text]}),
        ("patch", "/sessions/current", {"summary_append": text}),
        ("post", "/scribe", {"agent_name": "Alice", "run_id": text, "started_at": "2026-01-01T00:00:00Z"}),
    ]
    for method, path, body in writes:
        response = coordinator.send(method, path, body)
        assert response.status_code == 400, (path, body)
        assert response.json()["details"], (path, body)
    assert Decision.objects.count() == 1
    assert AgentMemory.objects.count() == 1
    assert list(Session.objects.values_list("session_id", "summary")) == [("s1", "")]


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param('{"serialized_state": {"a": "\\u0000"}}', id="nul-string"),
        pytest.param('{"serialized_state": {"\\u0000": 1}}', id="nul-key"),
        pytest.param('{"serialized_state": ["\\ud800"]}', id="lone-surrogate"),
        pytest.param('{"serialized_state": 1e400}', id="infinity"),
        pytest.param('{"serialized_state": [NaN]}', id="nan"),
    ],
)
def test_serialized_state_that_cannot_be_stored_is_400(project, alice, raw):
    assert alice.post("/sessions", raw=raw).status_code == 400
    alice.post("/sessions", {"session_id": "s1", "serialized_state": {"step": 1}})
    response = alice.patch("/sessions/current", raw=raw)
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "serialized_state"
    assert Session.objects.get().serialized_state == {"step": 1}


def test_deeply_nested_serialized_state(project, alice):
    nested = "[" * 400 + "]" * 400
    response = alice.post("/sessions", raw=f'{{"serialized_state": {nested}}}')
    assert response.status_code == 201
    too_deep = "[" * 100_000 + "]" * 100_000
    response = alice.patch("/sessions/current", raw=f'{{"serialized_state": {too_deep}}}')
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["error"]


@pytest.mark.parametrize(
    "path", ["/decisions/inbox", "/decisions", "/memory", "/agents/Alice/memory", "/sessions"]
)
@pytest.mark.parametrize("offset", [10**20, 2**63 - 1, 2**63])
def test_an_offset_past_the_end_is_an_empty_page_however_large(project, alice, path, offset):
    response = alice.get(path, offset=offset)
    assert response.status_code == 200
    assert response.json() == []
    assert response["X-Total-Count"] == "0"


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/decisions/inbox", {"run_id": "a\x00b"}),
        ("/decisions/inbox", {"agent": "\x00"}),
        ("/decisions", {"agent": "a\x00"}),
        ("/memory", {"q": "\x00"}),
        ("/memory", {"tags": "a\x00"}),
        ("/context", {"agent": "Alice", "run_id": "\x00"}),
    ],
)
def test_a_nul_character_in_the_query_string_is_400(project, coordinator, path, params):
    response = coordinator.get(path, **params)
    assert response.status_code == 400
    body = response.json()
    assert "NUL" in body["error"] and body["details"]


@pytest.mark.parametrize("path", ["/sessions/%00", "/sessions/a%00b", "/agents/%00/memory"])
def test_a_nul_character_in_the_path_is_400(project, coordinator, path):
    response = coordinator.client.get(
        f"/api/projects/alpha{path}", HTTP_AUTHORIZATION=f"Bearer {coordinator.token}"
    )
    assert response.status_code == 400
    assert "NUL" in response.json()["error"]


@pytest.mark.parametrize("name", [" ", "x" * 65, "bad\tname"])
def test_filtering_by_an_impossible_agent_name_matches_nothing(project, coordinator, name):
    services.entry_submit(project=project, agent_name="Alice", slug="s", type="scope", content="c")
    coordinator.post("/agents/Alice/memory", {"type": "learning", "content": "m"})
    coordinator.post("/decisions", {"agent_name": "Alice", "type": "scope", "title": "t", "content": "c"})
    for path in ["/decisions/inbox", "/decisions", "/memory"]:
        response = coordinator.get(path, agent=name)
        assert response.status_code == 200, path
        assert response.json() == [], path
    response = coordinator.client.get(
        f"/api/projects/alpha/agents/{quote(name)}/memory", HTTP_AUTHORIZATION=f"Bearer {coordinator.token}"
    )
    assert response.status_code == 200
    assert response.json() == []


def test_a_tag_filter_no_memory_could_carry_matches_nothing(project, coordinator):
    coordinator.post("/agents/Alice/memory", {"type": "learning", "content": "m", "tags": ["ops"]})
    response = coordinator.get("/memory", tags="x" * 100)
    assert response.status_code == 200
    assert response.json() == []
    response = coordinator.get("/memory", tags="x" * 100 + ",ops")
    assert [m["tags"] for m in response.json()] == [["ops"]]
    assert len(coordinator.get("/memory", tags=" , ").json()) == 1


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/decisions/inbox", {"limit": 0}, "limit"),
        ("/decisions", {"offset": -1}, "offset"),
        ("/decisions", {"status": "everything"}, "status"),
        ("/memory", {"importance": "urgent"}, "importance"),
        ("/context", {"agent": "Alice", "max_items": -1}, "max_items"),
        ("/decisions/inbox", {"limit": "ten"}, "limit"),
    ],
)
def test_query_parameter_errors_carry_details(project, alice, path, params, field):
    response = alice.get(path, **params)
    assert response.status_code == 400
    body = response.json()
    assert body["error"]
    assert [d["field"] for d in body["details"]] == [field]


def test_every_400_carries_details(project, alice):
    response = alice.post("/decisions/inbox", raw="{not json")
    assert response.status_code == 400
    assert response.json()["details"]


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/nothing-here"), ("post", "/decisions/inbox/1/explode"), ("get", "/decisions/")],
)
def test_an_unknown_api_route_is_a_json_404(project, alice, method, path):
    response = getattr(alice.client, method)(
        f"/api/projects/alpha{path}", HTTP_AUTHORIZATION=f"Bearer {alice.token}"
    )
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert "no such API route" in response.json()["error"]


def test_a_session_id_with_a_slash_can_be_read_back(project, alice):
    assert alice.post("/sessions", {"session_id": "team/sprint 12"}).status_code == 201
    response = alice.get("/sessions/team%2Fsprint%2012")
    assert response.status_code == 200
    assert response.json()["session_id"] == "team/sprint 12"
    assert alice.get("/sessions/current").json()["session_id"] == "team/sprint 12"


def test_a_method_the_route_does_not_take_is_a_json_405(alice):
    response = alice.send("delete", "/decisions")
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/json")
    assert "GET" in response["Allow"] and "POST" in response["Allow"]
    assert "DELETE is not allowed here" in response.json()["error"]
