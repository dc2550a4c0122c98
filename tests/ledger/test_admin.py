"""The admin is useful to an operator and cannot delete ledger history."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from ledger import models, services

LEDGER_MODELS = [
    models.Project,
    models.Agent,
    models.InboxEntry,
    models.Decision,
    models.DecisionRevision,
    models.AgentMemory,
    models.Session,
    models.ApiToken,
    models.Compilation,
    models.AuditEvent,
    models.MirrorRun,
]


@pytest.fixture
def staff_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.com", "pw-123456")
    client.force_login(user)
    return client


@pytest.fixture
def ledger(project):
    entry = services.entry_submit(
        project=project, agent_name="Alice", slug="s", type="technical", content="c"
    ).entry
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    services.memory_record(project=project, agent_name="Alice", type="learning", content="m", tags="x")
    services.session_start(project=project, session_id="s1")
    services.token_issue(project=project, role="agent", agent_name="Alice")
    return project


def test_every_model_is_registered():
    registered = set(admin.site._registry)
    missing = [m.__name__ for m in [*LEDGER_MODELS, models.Membership] if m not in registered]
    assert not missing


@pytest.mark.parametrize("model", LEDGER_MODELS, ids=lambda m: m.__name__)
def test_ledger_history_cannot_be_deleted_from_the_admin(rf, model, django_user_model):
    request = rf.get("/")
    request.user = django_user_model(is_superuser=True, is_staff=True)
    assert not admin.site._registry[model].has_delete_permission(request)


@pytest.mark.parametrize("model", LEDGER_MODELS, ids=lambda m: m.__name__)
def test_changelist_with_search_and_filters_loads(staff_client, ledger, model):
    url = reverse(f"admin:ledger_{model._meta.model_name}_changelist")
    response = staff_client.get(url, {"q": "a"})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "model", [models.InboxEntry, models.Decision, models.AgentMemory], ids=lambda m: m.__name__
)
def test_ledger_rows_open_read_only(staff_client, ledger, model):
    obj = model.objects.first()
    url = reverse(f"admin:ledger_{model._meta.model_name}_change", args=[obj.pk])
    response = staff_client.get(url)
    assert response.status_code == 200
    assert b'name="_save"' not in response.content
    before = {f.name: getattr(obj, f.name) for f in model._meta.concrete_fields}
    staff_client.post(url, {"content": "changed from the admin"})
    obj.refresh_from_db()
    assert {f.name: getattr(obj, f.name) for f in model._meta.concrete_fields} == before


def test_token_hash_is_never_editable(staff_client, ledger):
    token = models.ApiToken.objects.get()
    response = staff_client.get(reverse("admin:ledger_apitoken_change", args=[token.pk]))
    assert response.status_code == 200
    assert b'name="token_hash"' not in response.content
