"""The export after ledger writes, and the per-project lease (real threads, real processes, real commits).

These tests run tasks with the suite's immediate backend: the export runs in this process once the
write commits. The queue itself (the database backend and `manage.py db_worker`) is in test_tasks.py.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from ledger import mirror, services
from ledger.mirror import export as mirror_export
from ledger.models import MirrorRequest, MirrorRun, MirrorState, Project
from tests import processes
from tests.threads import race

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def live(tmp_path: Path, settings) -> Project:
    settings.CANON_EXPORT_ON_WRITE = True
    project, _ = services.project_create_or_update(slug="live", name="Live", workspace=str(tmp_path))
    return project


def submit(project: Project, slug: str = "idea") -> None:
    services.entry_submit(project=project, agent_name="Alice", slug=slug, type="scope", content="An idea.")


def test_a_write_is_exported_after_it_commits(live, tmp_path):
    submit(live)
    assert (tmp_path / ".squad/decisions/inbox/idea.md").exists()
    live.refresh_from_db()
    assert live.exported_at is not None and live.export_error == ""
    assert not MirrorRequest.objects.exists()
    assert MirrorRun.objects.get(trigger="background").ok


def test_a_failing_export_never_fails_the_write_and_is_remembered(live, tmp_path):
    Project.objects.filter(pk=live.pk).update(workspace=str(tmp_path / "missing"))
    live.refresh_from_db()
    result = services.entry_submit(
        project=live, agent_name="Alice", slug="idea", type="scope", content="An idea."
    )
    assert result.created
    live.refresh_from_db()
    assert "does not exist" in live.export_error
    assert live.export_error_at is not None
    assert MirrorRun.objects.get(trigger="background").ok is False


def test_a_rolled_back_write_exports_nothing(live, tmp_path):
    with pytest.raises(RuntimeError), transaction.atomic():
        submit(live)
        raise RuntimeError("abort")
    assert not (tmp_path / ".squad").exists()
    assert not MirrorRun.objects.exists()
    assert not MirrorRequest.objects.exists()


def test_no_export_when_turned_off_or_without_a_workspace(live, tmp_path, settings):
    settings.CANON_EXPORT_ON_WRITE = False
    submit(live, "off")
    settings.CANON_EXPORT_ON_WRITE = True
    bare, _ = services.project_create_or_update(slug="bare", name="Bare")
    submit(bare, "bare")
    assert not (tmp_path / ".squad").exists()
    assert not MirrorRun.objects.exists()


def test_concurrent_exports_of_one_project_never_interleave(live, tmp_path, monkeypatch):
    services.decision_create(project=live, agent_name="lead", type="scope", title="t", content="c", by="l")
    (tmp_path / ".squad/decisions.md").unlink()  # so each export below writes
    inside = []
    overlaps = []
    real = mirror_export.targets

    def slow_targets(*args):
        inside.append(1)
        if len(inside) > 1:
            overlaps.append(1)
        time.sleep(0.05)
        found = real(*args)
        inside.pop()
        return found

    monkeypatch.setattr(mirror_export, "targets", slow_targets)
    results = race([lambda: mirror.export_project(Project.objects.get(pk=live.pk)) for _ in range(4)])
    assert [type(r).__name__ for r in results] == ["ExportReport"] * 4
    assert overlaps == []
    assert (tmp_path / ".squad/decisions.md").exists()


def test_the_lease_excludes_a_second_claimer_until_it_expires(live):
    assert mirror.claim_lease(live.pk, holder="first", seconds=60)
    assert mirror.claim_lease(live.pk, holder="first", seconds=60)  # its holder may extend it
    assert not mirror.claim_lease(live.pk, holder="second", seconds=60)
    MirrorState.objects.filter(pk=live.pk).update(held_until=timezone.now() - timedelta(seconds=1))
    assert mirror.claim_lease(live.pk, holder="second", seconds=60)
    assert not mirror.claim_lease(live.pk, holder="first", seconds=60)
    mirror.release_lease(live.pk, holder="first")  # too late: no longer its lease
    assert MirrorState.objects.get(pk=live.pk).holder == "second"
    mirror.release_lease(live.pk, holder="second")
    assert mirror.claim_lease(live.pk, holder="third", seconds=60)


def test_only_one_of_many_racing_claimers_wins(live):
    won = race([lambda i=i: mirror.claim_lease(live.pk, holder=f"h{i}", seconds=60) for i in range(6)])
    assert won.count(True) == 1 and won.count(False) == 5


def test_a_busy_project_is_reported_not_waited_for_forever(live, tmp_path, settings):
    settings.CANON_MIRROR_WAIT_SECONDS = 0.3
    assert mirror.claim_lease(live.pk, holder="worker-on-another-host", seconds=60)
    started = time.monotonic()
    with pytest.raises(mirror.MirrorBusy, match="another process"), mirror.project_lock(live):
        pass  # pragma: no cover - never entered
    assert 0.3 <= time.monotonic() - started < 5
    result = mirror.run_and_record(live, "export", trigger="dashboard", actor="lead")
    assert result.busy and result.report is None and "try again later" in result.error
    live.refresh_from_db()
    assert live.export_error == ""  # busy is not failing
    assert not (tmp_path / ".squad").exists()
    imported, exported = mirror.sync_project(live, trigger="command")
    assert imported.busy and exported.busy
    assert MirrorRun.objects.filter(ok=False).count() == 3


def test_the_lease_is_renewed_while_held(live, settings):
    settings.CANON_MIRROR_LEASE_SECONDS = 0.3
    with mirror.project_lock(live):
        time.sleep(1.0)  # three lease lengths
        assert not mirror.claim_lease(live.pk, holder="other", seconds=60)
    assert mirror.claim_lease(live.pk, holder="other", seconds=60)


def test_a_sync_holds_the_lease_across_import_and_export(live, tmp_path, monkeypatch):
    seen = []
    real = mirror_export.targets

    def watching(*args):
        seen.append(mirror.claim_lease(live.pk, holder="intruder", seconds=60))
        return real(*args)

    monkeypatch.setattr(mirror_export, "targets", watching)
    imported, exported = mirror.sync_project(live, trigger="command")
    # The export looks at each kind of file; the lease was held every time.
    assert imported.ok and exported.ok and seen and not any(seen)
    assert MirrorState.objects.get(pk=live.pk).holder == ""


def test_lease_holds_across_processes(live):
    holder = processes.python(
        "import sys, time\n"
        "from ledger import mirror\n"
        "from ledger.models import Project\n"
        "with mirror.project_lock(Project.objects.get(pk=int(sys.argv[1]))):\n"
        "    print('locked', flush=True)\n"
        "    time.sleep(1.0)\n",
        str(live.pk),
    )
    assert holder.stdout.readline().strip() == "locked", holder.stderr.read()
    started = time.monotonic()
    with mirror.project_lock(live):
        waited = time.monotonic() - started
    assert holder.wait(timeout=60) == 0
    assert waited > 0.5
