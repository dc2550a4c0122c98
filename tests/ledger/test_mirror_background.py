"""The best-effort export after ledger writes, and the per-project lock (real threads, real commits)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ledger import mirror, services
from ledger.mirror import export as mirror_export
from ledger.models import MirrorRun, Project

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def live(tmp_path: Path, settings) -> Project:
    settings.CANON_EXPORT_ON_WRITE = True
    project, _ = services.project_create_or_update(slug="live", name="Live", workspace=str(tmp_path))
    return project


def test_a_write_is_exported_after_it_commits(live, tmp_path):
    services.entry_submit(project=live, agent_name="Alice", slug="idea", type="scope", content="An idea.")
    mirror.wait_for_background_exports()
    assert (tmp_path / ".squad/decisions/inbox/idea.md").exists()
    live.refresh_from_db()
    assert live.exported_at is not None and live.export_error == ""


def test_a_failing_export_never_fails_the_write_and_is_remembered(live, tmp_path):
    Project.objects.filter(pk=live.pk).update(workspace=str(tmp_path / "missing"))
    live.refresh_from_db()
    result = services.entry_submit(
        project=live, agent_name="Alice", slug="idea", type="scope", content="An idea."
    )
    assert result.created
    mirror.wait_for_background_exports()
    live.refresh_from_db()
    assert "does not exist" in live.export_error
    assert live.export_error_at is not None
    assert MirrorRun.objects.get(trigger="background").ok is False


def test_a_rolled_back_write_exports_nothing(live, tmp_path):
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        services.entry_submit(project=live, agent_name="Alice", slug="idea", type="scope", content="An idea.")
        raise RuntimeError("abort")
    mirror.wait_for_background_exports()
    assert not (tmp_path / ".squad").exists()


def test_concurrent_exports_of_one_project_never_interleave(live, tmp_path, monkeypatch):
    services.decision_create(project=live, agent_name="lead", type="scope", title="t", content="c", by="l")
    mirror.wait_for_background_exports()
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
    errors = []

    def export():
        from django.db import connection

        try:
            mirror.export_project(Project.objects.get(pk=live.pk))
        except Exception as exc:  # pragma: no cover - reported through the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=export) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and overlaps == []
    assert (tmp_path / ".squad/decisions.md").exists()


def test_lock_holds_across_processes(live, tmp_path):
    import subprocess
    import sys

    script = (
        "import fcntl, sys, time; f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX); "
        "print('locked', flush=True); time.sleep(1.0)"
    )
    from django.conf import settings

    lock_file = Path(settings.CANON_LOCK_DIR) / f"mirror-{live.pk}.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    other = subprocess.Popen(
        [sys.executable, "-c", script, str(lock_file)], stdout=subprocess.PIPE, text=True
    )
    assert other.stdout.readline().strip() == "locked"
    started = time.monotonic()
    with mirror.project_lock(live):
        waited = time.monotonic() - started
    other.wait()
    assert waited > 0.5
