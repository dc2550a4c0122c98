"""Upgrading a ledger that has memories: the lifecycle migration keys them, starts their time-to-live
at the upgrade, and leaves full-text search working (on SQLite the table rebuild drops its triggers)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from ledger.models import AgentMemory
from ledger.search import search
from ledger.values import content_key

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("ledger", "0008_episodes")]
AFTER = [("ledger", "0009_memory_lifecycle")]


def _migrate(targets: list[tuple[str, str]]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _latest() -> list[tuple[str, str]]:
    """Every app at its last migration, as the rest of the suite expects the database."""
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.fixture
def old_ledger():
    apps = _migrate(BEFORE)
    project = apps.get_model("ledger", "Project").objects.create(
        slug="nostromo", name="Nostromo", workspace=""
    )
    agent = apps.get_model("ledger", "Agent").objects.create(project=project, key="ripley", name="Ripley")
    memory = apps.get_model("ledger", "AgentMemory")
    long_ago = timezone.now() - timedelta(days=400)
    rows = [
        ("agent", "Seal the  airlock before   venting.", long_ago),
        ("coordinator", "Mother's orders override crew requests", long_ago),
        ("import", "The cat goes in the carrier.", long_ago),
    ]
    for source, content, created in rows:
        memory.objects.create(
            project=project,
            agent=agent,
            type="learning",
            importance="medium",
            importance_rank=1,
            content=content,
            source=source,
            content_sha256="x" * 64,
            created_at=created,
        )
    yield project.pk
    _migrate(_latest())


def test_upgrade_keys_every_memory_and_starts_time_to_live_at_the_upgrade(old_ledger, settings):
    started = timezone.now()
    _migrate(AFTER)
    memories = {m.source: m for m in AgentMemory.objects.filter(project_id=old_ledger)}

    agent = memories["agent"]
    assert agent.content_key == content_key("seal the airlock before venting")
    days = settings.CANON_MEMORY_TTL_DAYS["agent"]
    # 400 days old under a 180-day time-to-live, yet not expired: its clock starts at the upgrade.
    assert agent.expires_at is not None and agent.expires_at >= started + timedelta(days=days)
    assert not agent.expired
    assert memories["coordinator"].expires_at is None
    assert memories["import"].expires_at is None


def test_search_still_finds_old_and_new_memories_after_the_upgrade(old_ledger):
    _migrate(AFTER)
    rows = AgentMemory.objects.filter(project_id=old_ledger)
    assert [m.content for m in search(rows, "airlock")] == ["Seal the  airlock before   venting."]

    fresh = AgentMemory.objects.get(project_id=old_ledger, source="import")
    fresh.content = "The cat hides in the vents."
    fresh.save()
    assert [m.content for m in search(rows, "hides")] == ["The cat hides in the vents."]
    assert list(search(rows, "carrier")) == []
