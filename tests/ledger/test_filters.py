"""One filter vocabulary (ledger/filters.py): the API's lists and the dashboard's read the same rules."""

from __future__ import annotations

import pytest
from django.test import Client

from ledger import services
from ledger.filters import ALL, DecisionFilter, InboxFilter, MemoryFilter, wanted_tags
from ledger.models import AgentMemory, Decision, InboxEntry, Membership
from ledger.values import MAX_TAGS, InvalidValue


@pytest.fixture
def lead(project, django_user_model):
    """A coordinator signed in to the dashboard."""
    user = django_user_model.objects.create_user(username="lead", password="pw-123456")
    Membership.objects.create(user=user, project=project, role="coordinator")
    client = Client()
    client.force_login(user)
    return client


def memory(project, content, **kw):
    kw.setdefault("agent_name", "Alice")
    return services.memory_record(project=project, type="learning", content=content, **kw)


def contents(filterset):
    assert filterset.is_valid(), filterset.errors
    return sorted(row.content for row in filterset.qs)


def test_each_list_has_its_default_status_when_none_or_an_empty_one_is_given(project):
    services.entry_submit(project=project, agent_name="Alice", slug="a", type="scope", content="pending")
    rejected = services.entry_submit(
        project=project, agent_name="Alice", slug="b", type="scope", content="rejected"
    ).entry
    services.entry_reject(project=project, entry_id=rejected.pk, by="lead")
    rows = InboxEntry.objects.all()
    assert contents(InboxFilter({}, queryset=rows)) == ["pending"]
    assert contents(InboxFilter({"status": ""}, queryset=rows)) == ["pending"]
    assert contents(InboxFilter({"status": ALL}, queryset=rows)) == ["pending", "rejected"]
    assert contents(InboxFilter({"status": "rejected"}, queryset=rows)) == ["rejected"]


def test_memory_status_and_its_dashboard_spelling_archived(project):
    memory(project, "kept")
    gone = memory(project, "gone")
    services.memory_edit(project=project, memory_id=gone.pk, by="lead", status="archived")
    rows = AgentMemory.objects.all()
    assert contents(MemoryFilter({}, queryset=rows)) == ["kept"]
    assert contents(MemoryFilter({"status": "archived"}, queryset=rows)) == ["gone"]
    assert contents(MemoryFilter({"status": ALL}, queryset=rows)) == ["gone", "kept"]
    assert contents(MemoryFilter({"archived": "true"}, queryset=rows)) == ["gone"]
    assert contents(MemoryFilter({"archived": "false"}, queryset=rows)) == ["kept"]


def test_a_value_not_allowed_is_an_error_naming_every_allowed_one(project):
    found = DecisionFilter({"status": "bogus", "type": "opinion"}, queryset=Decision.objects.all())
    assert not found.is_valid()
    assert found.errors["status"] == ["'bogus' is not one of: active, superseded, archived, all"]
    assert found.errors["type"] == ["'opinion' is not one of: architectural, scope, process, technical"]


def test_the_api_answers_the_filters_error_with_a_400_for_each_field(project, coordinator):
    response = coordinator.get("/decisions", status="bogus", type="opinion")
    assert response.status_code == 400
    assert response.json()["details"] == [
        {"field": "status", "message": "'bogus' is not one of: active, superseded, archived, all"},
        {"field": "type", "message": "'opinion' is not one of: architectural, scope, process, technical"},
    ]


def test_the_dashboard_shows_the_same_error(lead, project):
    html = lead.get("/p/alpha/decisions/", {"status": "bogus"}).content.decode()
    assert "&#x27;bogus&#x27; is not one of: active, superseded, archived, all" in html


@pytest.mark.parametrize("name", [" ", "x" * 65, "tab\there"])
def test_a_name_no_agent_can_have_matches_nothing_on_both_sides(project, coordinator, lead, name):
    services.decision_create(
        project=project, agent_name="Alice", type="scope", title="t", content="c", by="l"
    )
    assert coordinator.get("/decisions", agent=name).json() == []
    assert list(lead.get("/p/alpha/decisions/", {"agent": name}).context["page"].object_list) == []
    assert len(coordinator.get("/decisions", agent=" ALICE ").json()) == 1
    assert len(lead.get("/p/alpha/decisions/", {"agent": " ALICE "}).context["page"].object_list) == 1


def test_tags_match_whole_tags_on_both_sides(project, coordinator, lead):
    memory(project, "ops", tags="ops")
    memory(project, "devops", tags="devops,db")
    assert [m["content"] for m in coordinator.get("/memory", tags="ops").json()] == ["ops"]
    assert [m.content for m in lead.get("/p/alpha/memory/", {"tag": "ops"}).context["page"].object_list] == [
        "ops"
    ]
    assert contents(MemoryFilter({"tags": "OPS, db"}, queryset=AgentMemory.objects.all())) == [
        "devops",
        "ops",
    ]


def test_too_many_tags_is_a_400_naming_tags(project, coordinator):
    response = coordinator.get("/memory", tags=",".join(f"t{i}" for i in range(MAX_TAGS + 1)))
    assert response.status_code == 400
    assert response.json()["details"] == [{"field": "tags", "message": f"at most {MAX_TAGS} tags, got more"}]


def test_wanted_tags():
    assert wanted_tags(None) is None
    assert wanted_tags(" , ") is None
    assert wanted_tags("Ops, ops ,db") == ["ops", "db"]
    assert wanted_tags("x" * 100) == []  # no row carries it: matches nothing
    with pytest.raises(InvalidValue):
        wanted_tags([f"t{i}" for i in range(MAX_TAGS + 1)])


@pytest.mark.parametrize(
    ("path", "param", "filterset"),
    [
        ("/api/projects/{project}/decisions/inbox", "status", InboxFilter),
        ("/api/projects/{project}/decisions/inbox", "type", InboxFilter),
        ("/api/projects/{project}/decisions", "status", DecisionFilter),
        ("/api/projects/{project}/decisions", "type", DecisionFilter),
        ("/api/projects/{project}/memory", "status", MemoryFilter),
        ("/api/projects/{project}/memory", "importance", MemoryFilter),
        ("/api/projects/{project}/agents/{name}/memory", "type", MemoryFilter),
    ],
)
def test_the_schema_states_the_values_the_filter_takes(db, path, param, filterset):
    operation = Client().get("/api/openapi.json").json()["paths"][path]["get"]
    stated = next(p["schema"]["enum"] for p in operation["parameters"] if p["name"] == param)
    assert stated == [value for value, _ in filterset.base_filters[param].extra["choices"]]
    assert (ALL in stated) == (param == "status")
