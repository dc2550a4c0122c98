"""The database itself refuses values outside the sets and broken invariants (docs/ledger.md)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from ledger import services
from ledger.models import (
    Agent,
    AgentMemory,
    ApiToken,
    Decision,
    InboxEntry,
    Membership,
    MirrorRun,
    Session,
)


@pytest.fixture
def agent(project):
    return services.agent_get_or_create(project=project, name="Alice")


def _refused(model, **fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        model.objects.create(**fields)


def _entry_fields(project, agent, **over):
    fields = {"project": project, "agent": agent, "slug": "s", "type": "technical", "content": "c"}
    fields.update(over)
    return fields


@pytest.mark.parametrize(
    "override",
    [{"type": "opinion"}, {"status": "reopened"}, {"importance": "urgent"}, {"source": "web"}, {"slug": ""}],
)
def test_inbox_entry_values_are_checked_by_the_database(project, agent, override):
    _refused(InboxEntry, **_entry_fields(project, agent, **override))


def test_inbox_slug_is_unique_per_project(project, other_project, agent):
    InboxEntry.objects.create(**_entry_fields(project, agent))
    _refused(InboxEntry, **_entry_fields(project, agent))
    other_agent = services.agent_get_or_create(project=other_project, name="Alice")
    InboxEntry.objects.create(**_entry_fields(other_project, other_agent))


def test_merged_entry_must_link_what_it_created(project, agent):
    _refused(InboxEntry, **_entry_fields(project, agent, status="merged", merged_at=timezone.now()))


def test_pending_entry_cannot_link_a_decision(project, agent):
    decision = Decision.objects.create(project=project, agent=agent, type="technical", title="t", content="c")
    _refused(InboxEntry, **_entry_fields(project, agent, decision=decision))


@pytest.mark.parametrize("override", [{"type": "learning"}, {"status": "deleted"}])
def test_decision_values_are_checked_by_the_database(project, agent, override):
    fields = {"project": project, "agent": agent, "type": "technical", "title": "t", "content": "c"}
    fields.update(override)
    _refused(Decision, **fields)


def test_superseded_decision_must_name_its_replacement(project, agent):
    _refused(
        Decision, project=project, agent=agent, type="technical", title="t", content="c", status="superseded"
    )


def test_active_decision_cannot_name_a_replacement(project, agent):
    other = Decision.objects.create(project=project, agent=agent, type="technical", title="b", content="c")
    _refused(
        Decision, project=project, agent=agent, type="technical", title="t", content="c", superseded_by=other
    )


def test_decision_cannot_be_superseded_by_itself(project, agent):
    decision = Decision.objects.create(project=project, agent=agent, type="technical", title="t", content="c")
    with pytest.raises(IntegrityError), transaction.atomic():
        Decision.objects.filter(pk=decision.pk).update(status="superseded", superseded_by=decision)


@pytest.mark.parametrize(
    "override",
    [
        {"type": "opinion"},
        {"importance": "urgent"},
        {"status": "deleted"},
        {"source": "web"},
        {"importance": "high", "importance_rank": 1},
    ],
)
def test_memory_values_are_checked_by_the_database(project, agent, override):
    fields = {"project": project, "agent": agent, "type": "learning", "content": "c", "content_sha256": "x"}
    fields.update(override)
    _refused(AgentMemory, **fields)


def test_session_id_is_unique_per_project(project):
    Session.objects.create(project=project, session_id="s1", ended_at=timezone.now())
    _refused(Session, project=project, session_id="s1", ended_at=timezone.now())


def test_database_allows_one_open_session_per_project(project, other_project):
    Session.objects.create(project=project, session_id="s1")
    _refused(Session, project=project, session_id="s2")
    Session.objects.create(project=other_project, session_id="s2")


def test_agent_key_is_unique_per_project(project, agent):
    _refused(Agent, project=project, key="alice", name="ALICE")


def test_agent_token_needs_an_agent_and_coordinator_token_none(project, agent):
    _refused(ApiToken, project=project, role="agent", token_hash="a" * 64, prefix="p")
    _refused(ApiToken, project=project, role="coordinator", agent=agent, token_hash="b" * 64, prefix="p")
    _refused(ApiToken, project=project, role="root", token_hash="c" * 64, prefix="p")


def test_membership_role_is_checked(project, django_user_model):
    user = django_user_model.objects.create(username="u")
    _refused(Membership, user=user, project=project, role="owner")


def test_mirror_run_kind_is_checked(project):
    _refused(MirrorRun, project=project, kind="sync", trigger="command")
