"""The export task on the database queue: queued with the write, once per waiting export, run by a worker.

In-process tests switch the suite's immediate backend for the database one; the acceptance tests run the
web process, the worker and cron as separate processes on the test database.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ledger import mirror, services
from ledger.models import MirrorRequest, MirrorRun, Project
from ledger.scribe import scribe_run
from ledger.tasks import WANTED_FOR_AT_MOST, export_workspace
from tests import processes
from tests.threads import race

DATABASE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
INBOX = ".squad/decisions/inbox"


@pytest.fixture
def queue(settings) -> None:
    settings.TASKS = DATABASE_QUEUE


@pytest.fixture
def live(db: None, tmp_path: Path, settings) -> Project:
    settings.CANON_EXPORT_ON_WRITE = True
    project, _ = services.project_create_or_update(slug="live", name="Live", workspace=str(tmp_path))
    return project


def submit(project: Project, slug: str) -> None:
    services.entry_submit(project=project, agent_name="Alice", slug=slug, type="scope", content="An idea.")


def queued() -> list[DBTaskResult]:
    return list(DBTaskResult.objects.filter(status="READY").order_by("enqueued_at"))


def test_many_writes_queue_one_export(queue, live, tmp_path):
    for i in range(5):
        submit(live, f"idea-{i}")
    [task] = queued()
    assert task.task_path == "ledger.tasks.export_workspace" and task.args_kwargs["args"] == [live.pk]
    assert not (tmp_path / INBOX).exists()  # nothing runs in the writing process

    export_workspace.call(live.pk)  # what the worker does with the row
    assert sorted(p.name for p in (tmp_path / INBOX).iterdir()) == [f"idea-{i}.md" for i in range(5)]
    assert MirrorRun.objects.get(trigger="background").ok

    submit(live, "after")  # the export has started: a new write needs a new one
    assert len(queued()) == 2


def test_a_rolled_back_write_queues_nothing(queue, live):
    with pytest.raises(RuntimeError), transaction.atomic():
        submit(live, "idea")
        raise RuntimeError("abort")
    assert queued() == []
    assert not MirrorRequest.objects.exists()
    submit(live, "kept")
    assert len(queued()) == 1


def test_nothing_is_queued_when_turned_off_or_without_a_workspace(queue, live, settings):
    bare, _ = services.project_create_or_update(slug="bare", name="Bare")
    submit(bare, "bare")
    settings.CANON_EXPORT_ON_WRITE = False
    submit(live, "off")
    assert queued() == []


def test_a_request_that_waited_too_long_is_taken_as_lost(queue, live):
    submit(live, "first")
    MirrorRequest.objects.update(created_at=timezone.now() - WANTED_FOR_AT_MOST * 2)
    submit(live, "second")
    assert len(queued()) == 2


def test_a_task_that_finds_the_project_busy_runs_again_later(queue, live, tmp_path):
    submit(live, "idea")
    assert mirror.claim_lease(live.pk, holder="a-sync", seconds=60)
    export_workspace.call(live.pk)
    [_first, retry] = queued()
    assert retry.run_after > timezone.now() + timedelta(seconds=2)
    assert MirrorRequest.objects.count() == 1  # still wanted: no new task per write
    assert not (tmp_path / INBOX).exists()
    mirror.release_lease(live.pk, holder="a-sync")
    export_workspace.call(live.pk)
    assert (tmp_path / INBOX / "idea.md").exists()


def test_without_a_queue_a_busy_project_waits_then_leaves_it_to_the_next_write(live, settings, caplog):
    settings.CANON_MIRROR_WAIT_SECONDS = 0.2
    assert mirror.claim_lease(live.pk, holder="a-sync", seconds=60)
    MirrorRequest.objects.create(project=live)
    with caplog.at_level(logging.WARNING, logger="canon.mirror"):
        export_workspace.call(live.pk)
    assert "stayed busy" in caplog.text
    assert not MirrorRequest.objects.exists()


def test_a_sync_since_the_write_makes_the_queued_export_stand_down(queue, live, tmp_path):
    submit(live, "idea")
    _imported, exported = mirror.sync_project(live, trigger="command")
    assert exported.ok and (tmp_path / INBOX / "idea.md").exists()
    export_workspace.call(live.pk)
    assert not MirrorRun.objects.filter(trigger="background").exists()


@pytest.mark.django_db(transaction=True)
def test_an_export_starting_waits_for_a_write_in_flight(tmp_path, settings):
    """The race: a write still in its transaction when the export starts is read by that export."""
    settings.CANON_EXPORT_ON_WRITE = True
    settings.TASKS = DATABASE_QUEUE
    live, _ = services.project_create_or_update(slug="live", name="Live", workspace=str(tmp_path))
    submit(live, "first")
    asked, release = threading.Event(), threading.Event()

    def slow_write() -> None:
        try:
            with transaction.atomic():
                submit(live, "in-flight")
                asked.set()
                release.wait(10)
        finally:
            connection.close()

    writer = threading.Thread(target=slow_write)
    writer.start()
    assert asked.wait(10)
    threading.Timer(0.5, release.set).start()
    started = time.monotonic()
    export_workspace.call(live.pk)
    writer.join()
    assert time.monotonic() - started >= 0.4  # the export waited for the write to commit
    assert (tmp_path / INBOX / "in-flight.md").exists()
    assert len(queued()) == 1  # the write joined the export already wanted


@pytest.mark.django_db(transaction=True)
def test_a_killed_web_process_still_leaves_its_write_exported_by_a_worker(tmp_path):
    """The acceptance test: a write commits, its process dies before any export, a worker exports it."""
    services.project_create_or_update(slug="live", name="Live", workspace=str(tmp_path))
    web = processes.python(
        "import signal\n"
        "from ledger import services\n"
        "from ledger.models import Project\n"
        "services.entry_submit(project=Project.objects.get(slug='live'), agent_name='Alice',\n"
        "                      slug='survivor', type='scope', content='Written, then the process died.')\n"
        "print('written', flush=True)\n"
        "signal.pause()\n"
    )
    assert web.stdout.readline().strip() == "written", web.stderr.read()
    web.send_signal(signal.SIGKILL)
    assert web.wait(timeout=60) == -signal.SIGKILL
    assert not (tmp_path / INBOX).exists()
    assert len(queued()) == 1

    worker = processes.manage("db_worker", "--batch", "--no-reload", "--no-startup-delay")
    assert worker.returncode == 0, worker.stderr
    assert "Written, then the process died." in (tmp_path / INBOX / "survivor.md").read_text()
    assert MirrorRun.objects.get(trigger="background").ok
    assert [t.status for t in DBTaskResult.objects.all()] == ["SUCCESSFUL"]


@pytest.mark.django_db(transaction=True)
def test_cron_exports_without_a_worker_and_never_beside_one(tmp_path):
    services.project_create_or_update(slug="live", name="Live", workspace=str(tmp_path))
    live = Project.objects.get(slug="live")
    services.decision_create(project=live, agent_name="lead", type="scope", title="t", content="c", by="l")

    assert mirror.claim_lease(live.pk, holder="a-worker-exporting", seconds=60)
    busy = processes.manage("sync_ledger", "--project", "live", CANON_MIRROR_WAIT_SECONDS="1")
    assert busy.returncode == 1 and "try again later" in busy.stdout
    assert not (tmp_path / ".squad/decisions.md").exists()

    mirror.release_lease(live.pk, holder="a-worker-exporting")
    synced = processes.manage("sync_ledger", "--project", "live")
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert (tmp_path / ".squad/decisions.md").exists()


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True)
def test_writes_racing_on_one_project_never_wait_for_each_other_over_the_export(tmp_path, settings):
    """Scribe runs (several writes in one transaction) against session updates: asking for the export
    takes no lock that one write could hold while it waits for another's."""
    settings.CANON_EXPORT_ON_WRITE = True
    settings.TASKS = DATABASE_QUEUE
    live, _ = services.project_create_or_update(slug="race", name="Race", workspace=str(tmp_path))
    services.session_start(project=live, session_id="s1")
    started = datetime(2020, 1, 1, tzinfo=UTC)

    def scribe(n: int) -> Callable[[], object]:
        def work() -> object:
            for i in range(3):
                services.entry_submit(
                    project=live,
                    agent_name="Alice",
                    slug=f"l{n}-{i}",
                    type="learning",
                    content="x",
                    run_id=f"r{n}",
                )
            return scribe_run(
                project=live, agent_name="Alice", run_id=f"r{n}", started_at=started, by="t", via="api"
            )

        return work

    def session(n: int) -> Callable[[], object]:
        def work() -> object:
            for i in range(5):
                services.session_update_current(project=live, summary_append=f"line {n} {i}")
            return "ok"

        return work

    results = race([scribe(n) for n in range(4)] + [session(n) for n in range(4)])
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len(queued()) >= 1
