from __future__ import annotations

import pytest
from django.test import Client

from ledger import services
from ledger.models import Membership


@pytest.fixture
def member(django_user_model):
    def make(project, role="coordinator", username=None):
        user = django_user_model.objects.create_user(
            username=username or f"{role}-{project.slug}", password="pw-123456"
        )
        Membership.objects.create(user=user, project=project, role=role)
        client = Client()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def lead(project, member):
    return member(project, "coordinator", "lead")


@pytest.fixture
def viewer(project, member):
    return member(project, "viewer", "watcher")


@pytest.fixture
def outsider(other_project, member):
    return member(other_project, "coordinator", "stranger")


@pytest.fixture
def entry(project):
    return services.entry_submit(
        project=project,
        agent_name="Alice",
        slug="use-postgres",
        type="architectural",
        title="Use PostgreSQL",
        content="All state in PostgreSQL.",
        rationale="One engine.",
    ).entry


@pytest.fixture
def decision(project):
    return services.decision_create(
        project=project,
        agent_name="lead",
        type="architectural",
        title="Use PostgreSQL for state",
        content="PG.",
        by="l",
    )
