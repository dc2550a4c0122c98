"""PostgreSQL connections as the settings make them: the context compiler's statements prepared, and
a server's connections kept in a pool from one request to the next (DATABASE_POOL, on in the server)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import httpx2
import pytest
from django.db import connection

from ledger import context, services
from ledger.models import Project
from tests import servers
from tests.processes import database_url

pytestmark = pytest.mark.postgresql_only


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db(transaction=True)
def test_the_compilers_statements_are_prepared_and_no_others(project):
    services.memory_record(
        project=project, agent_name="Alice", type="learning", content="Retry the deploy queue with backoff"
    )
    # A new connection: nothing prepared on it by an earlier test (the pool would hand the same one back).
    connection.close()
    if connection.pool:
        connection.close_pool()
    connection.ensure_connection()
    assert not any("ts_rank_cd" in statement for statement in prepared_statements())

    result = context.compile(project, "Alice", task="deploy queue retries")
    for _ in range(6):  # psycopg's own threshold would prepare a statement run five times
        assert list(Project.objects.filter(slug="alpha").values_list("name", flat=True)) == ["Alpha"]

    assert result.error is None and result.text and "Retry the deploy queue" in result.text
    statements = prepared_statements()
    assert any("ts_rank_cd" in statement for statement in statements), statements  # the relevant layer
    assert any("ledger_decision" in statement for statement in statements), statements  # the boundaries
    assert not any("ledger_project" in statement for statement in statements), statements
    assert connection.connection.prepare_threshold is None  # as Django left it, outside the compiler


def server_connections(name: str) -> set[int]:
    """The process ids of the sessions the server opened: those named `name` (libpq's PGAPPNAME)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [name])
        return {row[0] for row in cursor.fetchall()}


def settled_connections(name: str, seconds: float = 3) -> set[int]:
    """The server's sessions once those of the last request have had `seconds` to close: a request's
    answer can reach the client a moment before its connection is closed."""
    deadline = time.monotonic() + seconds
    while (found := server_connections(name)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def compile_through(url: str, project: Project, secret: str, times: int) -> None:
    with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}) as client:
        for _ in range(times):
            response = client.get(
                f"/api/projects/{project.slug}/context", params={"agent": "Alice", "task": "deploy queue"}
            )
            assert response.status_code == 200, response.text
            assert response.json()["text"] is not None, response.json()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("pooled", [True, False], ids=["pool", "no-pool"])
def test_with_a_pool_the_server_keeps_its_connections_between_requests(project, pooled):
    secret = services.token_issue(project=project, role="agent", agent_name="Alice")[1]
    services.memory_record(
        project=project, agent_name="Alice", type="learning", content="Retry the deploy queue with backoff"
    )

    name = f"canon-test-{uuid.uuid4().hex[:12]}"
    # The server pools by default; DATABASE_POOL=false turns it off.
    pool = {} if pooled else {"DATABASE_POOL": "false"}
    with servers.production_server(workers=1, PGAPPNAME=name, **pool) as server:
        compile_through(server.url, project, secret, 10)
        first = settled_connections(name)
        compile_through(server.url, project, secret, 10)
        second = settled_connections(name)

    if pooled:
        assert first and first == second  # the same sessions served both batches
    else:
        assert not first and not second  # each request closed its own


@pytest.mark.django_db(transaction=True)
def test_a_pooled_server_answers_after_its_connections_were_cut(project):
    """A database restart, or a network cut, ends the pool's sessions while they sit idle: the pool
    checks each connection as it is taken and opens a new one, so no request fails."""
    secret = services.token_issue(project=project, role="agent", agent_name="Alice")[1]
    services.memory_record(
        project=project, agent_name="Alice", type="learning", content="Retry the deploy queue with backoff"
    )
    name = f"canon-test-{uuid.uuid4().hex[:12]}"

    with servers.production_server(workers=1, PGAPPNAME=name) as server:
        compile_through(server.url, project, secret, 3)
        cut = settled_connections(name)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", [name]
            )
        compile_through(server.url, project, secret, 3)
        after = settled_connections(name)

    assert cut and after and not cut & after


@pytest.mark.django_db
def test_a_command_that_cannot_connect_says_why_at_once():
    """Commands take no pool: a pool would retry for 30 s before giving up with no reason."""
    missing = database_url().rsplit("/", 1)[0] + f"/canon_missing_{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
        env=servers.environment(DATABASE_URL=missing),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "does not exist" in result.stderr
    assert time.monotonic() - started < 15
