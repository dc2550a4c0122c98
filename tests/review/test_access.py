"""Every page and action checks who is asking (docs/dashboard.md)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from ledger import services

PAGES = [
    ("project", {}),
    ("inbox", {}),
    ("entry", {"entry_id": "entry"}),
    ("decisions", {}),
    ("decision", {"decision_id": "decision"}),
    ("memory", {}),
    ("sessions", {}),
    ("compilations", {}),
    ("mirror", {}),
]
ACTIONS = [
    ("entry_merge", {"entry_id": "entry"}),
    ("entry_reject", {"entry_id": "entry"}),
    ("inbox_bulk", {}),
    ("decision_new", {}),
    ("decision_edit", {"decision_id": "decision"}),
    ("decision_supersede", {"decision_id": "decision"}),
    ("decision_archive", {"decision_id": "decision"}),
    ("memory_edit", {"memory_id": "memory"}),
    ("memory_archive", {"memory_id": "memory"}),
    ("mirror_import", {}),
    ("mirror_export", {}),
]


@pytest.fixture
def objects(project, entry, decision):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="m")
    return {"entry": entry.pk, "decision": decision.pk, "memory": memory.pk}


def url(name, kwargs, objects, project="alpha"):
    return reverse(
        f"review:{name}", kwargs={"project": project, **{k: objects[v] for k, v in kwargs.items()}}
    )


@pytest.mark.parametrize(("name", "kwargs"), PAGES)
def test_member_sees_every_page(lead, viewer, objects, name, kwargs):
    assert lead.get(url(name, kwargs, objects)).status_code == 200
    assert viewer.get(url(name, kwargs, objects)).status_code == 200


@pytest.mark.parametrize(("name", "kwargs"), PAGES + ACTIONS)
def test_non_member_gets_404_for_everything(outsider, objects, name, kwargs):
    response = (
        outsider.post(url(name, kwargs, objects))
        if (name, kwargs) in ACTIONS
        else outsider.get(url(name, kwargs, objects))
    )
    assert response.status_code == 404


@pytest.mark.parametrize(("name", "kwargs"), PAGES)
def test_anonymous_is_sent_to_login(objects, name, kwargs):
    response = Client().get(url(name, kwargs, objects))
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize(("name", "kwargs"), ACTIONS)
def test_viewer_acting_gets_403_and_nothing_changes(viewer, objects, project, name, kwargs):
    response = viewer.post(
        url(name, kwargs, objects), {"action": "merge", "ids": [objects["entry"]], "title": "x"}
    )
    assert response.status_code == 403
    assert project.entries.get(pk=objects["entry"]).status == "pending"
    assert project.decisions.get(pk=objects["decision"]).status == "active"


@pytest.mark.parametrize(("name", "kwargs"), ACTIONS)
def test_actions_refuse_get_with_405(lead, objects, name, kwargs):
    assert lead.get(url(name, kwargs, objects)).status_code == 405


@pytest.mark.parametrize(("name", "kwargs"), PAGES)
def test_pages_refuse_post_with_405(lead, objects, name, kwargs):
    assert lead.post(url(name, kwargs, objects)).status_code == 405


def test_object_of_another_project_is_404_even_for_a_member(lead, other_project):
    theirs = services.entry_submit(
        project=other_project, agent_name="x", slug="s", type="scope", content="c"
    ).entry
    assert lead.get(reverse("review:entry", args=["alpha", theirs.pk])).status_code == 404
    assert lead.post(reverse("review:entry_merge", args=["alpha", theirs.pk])).status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == "pending"


def test_home_lists_only_my_projects_with_pending_counts(lead, entry, other_project):
    response = lead.get("/")
    assert b"Alpha" in response.content and b"Beta" not in response.content
    assert b"1 pending" in response.content


def test_superuser_sees_every_project(client, django_user_model, project, other_project):
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.com", "pw-123456"))
    response = client.get("/")
    assert b"Alpha" in response.content and b"Beta" in response.content
    assert client.get(reverse("review:inbox", args=["beta"])).status_code == 200


def test_csrf_is_enforced(project, entry, django_user_model):
    from ledger.models import Membership

    user = django_user_model.objects.create_user("csrf", password="pw-123456")
    Membership.objects.create(user=user, project=project, role="coordinator")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(reverse("review:entry_merge", args=["alpha", entry.pk])).status_code == 403
    entry.refresh_from_db()
    assert entry.status == "pending"


def test_content_security_policy_allows_no_inline_script(lead):
    policy = lead.get("/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def test_anonymous_htmx_action_is_sent_to_login_as_a_whole_page(objects, project):
    """htmx would follow a plain redirect itself and swap the login page into the row."""
    response = Client().post(
        url("entry_merge", {"entry_id": "entry"}, objects),
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://testserver/p/alpha/inbox/?type=scope",
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/login/?next=/p/alpha/inbox/%3Ftype%3Dscope"
    assert project.entries.get(pk=objects["entry"]).status == "pending"
