"""create_project, issue_token and demo (docs/commands.md)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ledger.models import ApiToken, InboxEntry, Membership, Project
from ledger.selectors import token_for_secret


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_project_creates_then_updates(db):
    assert "created project my-app" in run(
        "create_project", "my-app", "--name", "My app", "--coordinator", "Lead"
    )
    assert "updated project my-app" in run("create_project", "my-app", "--workspace", "/srv/my-app")
    project = Project.objects.get(slug="my-app")
    assert (project.name, project.workspace, project.coordinator_agent) == ("My app", "/srv/my-app", "Lead")


def test_create_project_dry_run_writes_nothing(db):
    summary = json.loads(run("create_project", "my-app", "--dry-run", "--json"))
    assert summary == {"slug": "my-app", "created": True, "dry_run": True}
    assert not Project.objects.exists()


def test_create_project_refuses_a_bad_slug_with_exit_code_2(db):
    with pytest.raises(CommandError) as info:
        run("create_project", "Not A Slug")
    assert info.value.returncode == 2
    assert not Project.objects.exists()


def test_issue_token_prints_the_secret_last_and_stores_only_its_hash(project):
    output = run("issue_token", "--project", "alpha", "--agent", "Alice")
    secret = output.strip().splitlines()[-1]
    token = token_for_secret(secret)
    assert token is not None and token.role == "agent" and token.agent.name == "Alice"
    assert not ApiToken.objects.filter(token_hash=secret).exists()
    assert secret not in {t.prefix for t in ApiToken.objects.all()}


def test_issue_coordinator_token(project):
    summary = json.loads(
        run("issue_token", "--project", "alpha", "--agent", "lead", "--role", "coordinator", "--json")
    )
    token = token_for_secret(summary["token"])
    assert token is not None and token.role == "coordinator" and token.agent is None and token.label == "lead"


def test_issue_token_for_an_unknown_project_exits_2(db):
    with pytest.raises(CommandError) as info:
        run("issue_token", "--project", "nope", "--agent", "Alice")
    assert info.value.returncode == 2


@pytest.mark.parametrize("name", ["coordinator", "COORDINATOR", " Coordinator "])
def test_an_agent_token_for_the_coordinator_agents_name_is_refused(project, name):
    with pytest.raises(CommandError) as info:
        run("issue_token", "--project", "alpha", "--agent", name)
    assert info.value.returncode == 2
    assert "coordinator" in str(info.value)
    assert not ApiToken.objects.exists()


def test_issue_token_refuses_an_invalid_agent_name(project):
    with pytest.raises(CommandError) as info:
        run("issue_token", "--project", "alpha", "--agent", "x" * 65)
    assert info.value.returncode == 2
    assert not ApiToken.objects.exists()


def test_demo_seeds_once_and_prints_working_tokens(db, tmp_path):
    first = run("demo", "--workspace", str(tmp_path))
    entries = InboxEntry.objects.count()
    second = run("demo", "--workspace", str(tmp_path))
    assert entries > 0 and InboxEntry.objects.count() == entries
    assert "already seeded" in second
    for output in (first, second):
        secrets = [line.split()[-1] for line in output.splitlines() if "token" in line and "canon_" in line]
        assert len(secrets) == 2
        assert all(token_for_secret(s) is not None for s in secrets)
    assert Membership.objects.filter(user__username="demo", role="coordinator").exists()
    assert Membership.objects.filter(user__username="viewer", role="viewer").exists()


def test_demo_prints_the_address_it_is_served_on(db, tmp_path):
    output = run("demo", "--workspace", str(tmp_path), "--url", "http://127.0.0.1:8011")
    assert "Dashboard: http://127.0.0.1:8011/" in output
    assert "http://127.0.0.1:8011/api/projects/demo/decisions/inbox" in output
    assert ":8000" not in output
