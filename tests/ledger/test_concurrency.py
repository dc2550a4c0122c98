"""Real concurrency: threads with their own database connections race through the API.

Runs on SQLite (a file database in WAL mode) and on PostgreSQL alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from ledger import services
from ledger.models import AgentMemory, Decision, InboxEntry, Project
from tests.threads import race

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]

WRITERS = 12


@pytest.fixture
def live_project(transactional_db: None) -> Project:
    project, _ = services.project_create_or_update(slug="race", name="Race")
    return project


def _submitter(secret: str, n: int) -> Callable[[], Any]:
    def work() -> Any:
        response = Client().post(
            "/api/projects/race/decisions/inbox",
            {"slug": "same-free-slug", "type": "technical", "content": f"proposal {n}"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {secret}",
        )
        return response.status_code, response.json()

    return work


def test_agents_racing_for_one_free_slug_all_get_stored(live_project):
    secrets = [
        services.token_issue(project=live_project, role="agent", agent_name=f"Agent {n}")[1]
        for n in range(WRITERS)
    ]
    results = race([_submitter(secret, n) for n, secret in enumerate(secrets)])
    statuses = Counter(r[0] if isinstance(r, tuple) else type(r).__name__ for r in results)
    entries = list(InboxEntry.objects.filter(project=live_project))
    errors = sum(v for k, v in statuses.items() if k not in (201, 409))
    print(
        f"\nwriters={WRITERS} entries={len(entries)} statuses={dict(statuses)} "
        f"conflicts={statuses.get(409, 0)} errors={errors}"
    )
    assert statuses == Counter({201: WRITERS})
    assert len({e.slug for e in entries}) == WRITERS
    assert sorted(e.content for e in entries) == sorted(f"proposal {n}" for n in range(WRITERS))
    assert {r[1]["slug"] for r in results} == {e.slug for e in entries}
    assert sum(e.slug == "same-free-slug" for e in entries) == 1


def test_one_agent_retrying_concurrently_keeps_one_entry(live_project):
    secret = services.token_issue(project=live_project, role="agent", agent_name="Alice")[1]
    results = race([_submitter(secret, n) for n in range(8)])
    statuses = Counter(r[0] for r in results)
    assert set(statuses) <= {200, 201}
    assert statuses[201] == 1
    assert InboxEntry.objects.count() == 1


def test_merge_racing_reject_has_exactly_one_winner(live_project):
    secret = services.token_issue(project=live_project, role="coordinator", label="lead")[1]
    outcomes = []
    for round_ in range(5):
        entry = services.entry_submit(
            project=live_project,
            agent_name="Alice",
            slug=f"contested-{round_}",
            type="architectural",
            content="c",
        ).entry

        def act(action: str, entry_id: int = entry.pk) -> int:
            return (
                Client()
                .post(
                    f"/api/projects/race/decisions/inbox/{entry_id}/{action}",
                    "{}",
                    content_type="application/json",
                    HTTP_AUTHORIZATION=f"Bearer {secret}",
                )
                .status_code
            )

        merge_status, reject_status = race([lambda: act("merge"), lambda: act("reject")])
        entry.refresh_from_db()
        outcomes.append((merge_status, reject_status, entry.status))
        assert sorted([merge_status, reject_status]) in ([201, 409], [200, 409])
        if merge_status == 201:
            assert entry.status == "merged" and entry.decision_id is not None
        else:
            assert entry.status == "rejected" and entry.decision_id is None
    assert Decision.objects.count() == sum(1 for o in outcomes if o[2] == "merged")
    assert not AgentMemory.objects.exists()
    print(f"\nmerge-vs-reject rounds: {outcomes}")
