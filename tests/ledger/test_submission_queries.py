"""What one inbox submission costs the database, statement by statement, on SQLite and PostgreSQL alike.

The tests run outside a transaction of their own, as a request does, so Django records the submission's
transaction the way it happens in production: BEGIN and COMMIT are recorded on both engines (SQLite
runs `BEGIN IMMEDIATE`; on PostgreSQL Django records BEGIN when it turns autocommit off and psycopg
sends it with the first statement). They bound the transaction and are listed here, but are not counted
as queries: the common case, a new entry from an agent token used within the minute, is four queries.
No savepoint is taken on any path below.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ledger import services
from ledger.models import ApiToken, InboxEntry, MirrorRequest, Project
from ledger.tasks import WANTED_FOR_AT_MOST

pytestmark = pytest.mark.django_db(transaction=True)

INBOX = "/decisions/inbox"
DATABASE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# The proposing agent: an agent token's own agent comes with the token (the route passes it to the
# service); a coordinator token names the agent, which is looked up by name.
AGENT_TOKEN_LOOKUP: list[str] = []
COORDINATOR_LOOKUP = ["SELECT"]


def new_entry(lookup: list[str]) -> list[str]:
    return [
        "SELECT",  # the token, with its project and agent joined
        "BEGIN",  # the submission's transaction
        *lookup,
        "INSERT",  # the entry under the slug asked for (ON CONFLICT DO NOTHING: it is free)
        "SELECT",  # is an export wanted already? On PostgreSQL also the share lock on the project row
        "COMMIT",
    ]


NEW_ENTRY = new_entry(AGENT_TOKEN_LOOKUP)
TAKEN_SLUG = [
    "SELECT",  # the token, with its project and agent joined
    "BEGIN",  # the submission's transaction
    *AGENT_TOKEN_LOOKUP,
    "INSERT",  # the entry under the slug asked for: taken, nothing inserted
    "SELECT",  # the slug and this agent's de-collided forms of it, in one read
]
EXPORT_WANTED = [
    "SELECT",  # is an export wanted already? On PostgreSQL also the share lock on the project row
    "COMMIT",
]


def statements(captured: CaptureQueriesContext) -> list[str]:
    """The first word of every statement Django recorded: what kind of statement each one was."""
    return [query["sql"].split(None, 1)[0].upper() for query in captured.captured_queries]


def submit(client: Any, body: dict[str, Any]) -> tuple[Any, list[str], list[str]]:
    """Post a proposal: the response, the kinds of statement recorded, and their SQL."""
    with CaptureQueriesContext(connection) as captured:
        response = client.post(INBOX, body)
    return response, statements(captured), [query["sql"] for query in captured.captured_queries]


@pytest.fixture
def live(project: Project, tmp_path: Path, settings: Any) -> Project:
    """The project mirrored to a workspace, exports queued in the database as in production."""
    settings.CANON_EXPORT_ON_WRITE = True
    settings.TASKS = DATABASE_QUEUE
    live, _ = services.project_create_or_update(slug=project.slug, workspace=str(tmp_path))
    return live


@pytest.fixture
def warm(live: Project, alice: Any, bob: Any, coordinator: Any) -> None:
    """Every token used within the minute and an export already wanted: the steady state."""
    for n, client in enumerate((alice, bob, coordinator)):
        body = {"slug": f"warm-{n}", "type": "scope", "content": "Warm."}
        if client is coordinator:
            body["agent_name"] = "Bob"
        assert client.post(INBOX, body).status_code == 201
    assert MirrorRequest.objects.filter(project=live).count() == 1


def test_a_new_entry_from_an_agent_token_is_at_most_four_queries(warm, alice):
    response, kinds, _ = submit(alice, {"slug": "idea", "type": "scope", "content": "An idea."})
    assert response.status_code == 201
    assert response.json()["slug"] == "idea" and response.json()["agent_name"] == "Alice"
    assert kinds == NEW_ENTRY
    assert len([kind for kind in kinds if kind not in ("BEGIN", "COMMIT")]) <= 4


def test_a_new_entry_from_a_coordinator_token_is_four_queries(warm, coordinator):
    body = {"slug": "idea", "type": "scope", "content": "An idea.", "agent_name": "Alice"}
    response, kinds, _ = submit(coordinator, body)
    assert response.status_code == 201 and response.json()["source"] == "coordinator"
    assert kinds == new_entry(COORDINATOR_LOOKUP)


def test_a_retry_updates_the_entry_in_place(warm, alice):
    alice.post(INBOX, {"slug": "idea", "type": "scope", "content": "First."})
    response, kinds, _ = submit(alice, {"slug": "idea", "type": "process", "content": "Second."})
    assert response.status_code == 200
    assert response.json()["content"] == "Second." and response.json()["agent_name"] == "Alice"
    assert kinds == [
        *TAKEN_SLUG,
        "UPDATE",  # the agent's own pending entry, compare-and-set on its status
        *EXPORT_WANTED,
    ]
    entry = InboxEntry.objects.get(slug="idea")
    assert (entry.type, entry.content) == ("process", "Second.")


def test_a_retry_of_a_decided_entry_is_refused_without_writing(warm, live, alice):
    created = alice.post(INBOX, {"slug": "idea", "type": "scope", "content": "First."}).json()
    services.entry_reject(project=live, entry_id=created["id"], by="lead")
    response, kinds, _ = submit(alice, {"slug": "idea", "type": "scope", "content": "Again."})
    assert response.status_code == 409
    assert kinds == [*TAKEN_SLUG, "ROLLBACK"]


def test_a_decollided_slug_reads_once_and_inserts_once(warm, alice, bob):
    alice.post(INBOX, {"slug": "idea", "type": "scope", "content": "Alice's."})
    response, kinds, _ = submit(bob, {"slug": "idea", "type": "scope", "content": "Bob's."})
    assert response.status_code == 201 and response.json()["slug"] == "idea--bob"
    assert kinds == [
        *TAKEN_SLUG,
        "INSERT",  # the entry under the first free de-collided slug
        *EXPORT_WANTED,
    ]


def test_the_first_write_after_an_export_queues_it_in_its_own_transaction(warm, live, alice):
    MirrorRequest.objects.all().delete()  # what an export does when it starts
    DBTaskResult.objects.all().delete()
    response, kinds, _ = submit(alice, {"slug": "idea", "type": "scope", "content": "An idea."})
    assert response.status_code == 201
    assert kinds == [
        *NEW_ENTRY[:-1],
        "INSERT",  # the export request
        "INSERT",  # the export task, committed with the entry
        "COMMIT",
    ]
    assert DBTaskResult.objects.count() == 1
    _, kinds, _ = submit(alice, {"slug": "another", "type": "scope", "content": "Another."})
    assert kinds == NEW_ENTRY  # one export is wanted: nothing more is queued or touched
    assert DBTaskResult.objects.count() == 1 and MirrorRequest.objects.count() == 1


def test_a_lost_request_is_replaced_once(warm, live, alice):
    MirrorRequest.objects.update(created_at=timezone.now() - WANTED_FOR_AT_MOST * 2)
    tasks = DBTaskResult.objects.count()
    _, kinds, _ = submit(alice, {"slug": "idea", "type": "scope", "content": "An idea."})
    assert kinds == [*NEW_ENTRY[:-1], "INSERT", "INSERT", "COMMIT"]
    _, kinds, _ = submit(alice, {"slug": "another", "type": "scope", "content": "Another."})
    assert kinds == NEW_ENTRY
    assert DBTaskResult.objects.count() == tasks + 1


def test_a_project_without_exports_asks_for_none(project, alice):
    alice.post(INBOX, {"slug": "warm", "type": "scope", "content": "Warm."})
    response, kinds, _ = submit(alice, {"slug": "idea", "type": "scope", "content": "An idea."})
    assert response.status_code == 201
    assert kinds == [
        "SELECT",  # the token, with its project and agent joined
        "BEGIN",
        *AGENT_TOKEN_LOOKUP,
        "INSERT",  # the entry
        "COMMIT",
    ]


def test_a_token_unused_for_a_minute_records_its_use_once(warm, alice):
    ApiToken.objects.update(last_used_at=timezone.now() - timedelta(seconds=61))
    _, kinds, _ = submit(alice, {"slug": "idea", "type": "scope", "content": "An idea."})
    assert kinds == [NEW_ENTRY[0], "UPDATE", *NEW_ENTRY[1:]]  # UPDATE: the token's coarse last use
    _, kinds, _ = submit(alice, {"slug": "another", "type": "scope", "content": "Another."})
    assert kinds == NEW_ENTRY


def test_given_the_proposing_agent_the_service_does_not_look_it_up(warm, live):
    agent = services.agent_get_or_create(project=live, name="Alice")
    with CaptureQueriesContext(connection) as captured:
        result = services.entry_submit(
            project=live, agent_name="alice", agent=agent, slug="idea", type="scope", content="An idea."
        )
    assert result.created and result.entry.agent == agent
    assert statements(captured) == [
        "BEGIN",
        "INSERT",  # the entry
        "SELECT",  # is an export wanted already? On PostgreSQL also the share lock on the project row
        "COMMIT",
    ]


def test_an_agent_given_under_another_name_or_project_is_looked_up(warm, live, other_project):
    alice = services.agent_get_or_create(project=live, name="Alice")
    stranger = services.agent_get_or_create(project=other_project, name="Bob")
    for given in (alice, stranger):
        result = services.entry_submit(
            project=live, agent_name="Bob", agent=given, slug=f"from-{given.pk}", type="scope", content="Hi."
        )
        assert result.entry.agent.name == "Bob" and result.entry.agent.project_id == live.pk


@pytest.mark.postgresql_only
def test_on_postgresql_a_write_holds_the_project_row_until_it_commits(warm, alice, live):
    _, kinds, sql = submit(alice, {"slug": "idea", "type": "scope", "content": "An idea."})
    assert kinds == NEW_ENTRY
    assert sql[-2].endswith("FOR KEY SHARE") and "ledger_mirrorrequest" in sql[-2]
    assert "ON CONFLICT" in sql[-3]


@pytest.mark.sqlite_only
def test_on_sqlite_a_write_takes_the_database_lock_when_it_begins(warm, alice):
    _, kinds, sql = submit(alice, {"slug": "idea", "type": "scope", "content": "An idea."})
    assert kinds == NEW_ENTRY
    assert sql[1] == "BEGIN IMMEDIATE" and "FOR KEY SHARE" not in sql[-2]
