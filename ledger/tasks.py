"""Background work: the export of a project's workspace after the ledger writes that change it.

Each write that changes what the files show sends `ledger_changed` inside its transaction. The first one
after an export records that an export is wanted (`MirrorRequest`) and queues `export_workspace` in that
same transaction: with the database backend the task row commits or rolls back with the write, so a
process killed right after the commit still leaves the export queued for `manage.py db_worker`. Later
writes find the request and queue nothing more. The task takes the project's lease (the one
`sync_ledger`, the API and the dashboard take too), so one process on any host exports a project at a
time; a task that finds the lease taken runs again a little later (docs/mirror.md "When exports run").
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django_tasks import task
from django_tasks_db import DatabaseBackend

from ledger import mirror
from ledger.models import MirrorKind, MirrorRequest, Project

logger = logging.getLogger("canon.mirror")

# A task that found the project's lease taken runs again this much later.
RETRY_AFTER = timedelta(seconds=5)
# A request older than this whose export never started is taken as lost (its task row removed, a queue
# no worker runs): the next write queues another. An extra export changes nothing.
WANTED_FOR_AT_MOST = timedelta(minutes=15)


def request_export(sender: Any, *, project: Project, **kwargs: Any) -> None:
    """`ledger_changed` receiver: queue one export of `project`, in the write's own transaction."""
    if not settings.CANON_EXPORT_ON_WRITE or not project.workspace:
        return
    if _hold_and_find_request(project):
        return  # an export is queued and has not started: it will read this write too
    MirrorRequest.objects.create(project=project)
    _enqueue(project.pk)


def _hold_and_find_request(project: Project) -> bool:
    """Keep an export of `project` from starting until this write commits (`mirror.take_wanted`), and
    say whether one is already wanted (a request younger than WANTED_FOR_AT_MOST): one statement.

    On PostgreSQL it takes a share lock on the project's row (the one every insert that refers to the
    project takes too): writes never wait for each other on it. SQLite runs one write transaction at a
    time. Served by the index on the requests' (project, created_at).
    """
    since = connection.ops.adapt_datetimefield_value(timezone.now() - WANTED_FOR_AT_MOST)
    lock = " FOR KEY SHARE" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {MirrorRequest._meta.db_table} WHERE project_id = %s"
            f" AND created_at > %s) FROM {Project._meta.db_table} WHERE id = %s{lock}",
            [project.pk, since, project.pk],
        )
        row = cursor.fetchone()
    return row is not None and bool(row[0])


def _enqueue(project_id: int) -> None:
    if isinstance(export_workspace.get_backend(), DatabaseBackend):
        # The task row is written in the current transaction: durable exactly when the write is.
        export_workspace.enqueue(project_id)
    else:
        # A backend outside the database (the immediate one of the tests) runs nothing that may roll back.
        transaction.on_commit(partial(export_workspace.enqueue, project_id), robust=True)


@task()
def export_workspace(project_id: int) -> None:
    """Export the project unless an export since the request already did. Never raises."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return
    deferrable = export_workspace.get_backend().supports_defer
    try:
        # With a queue to come back to, do not hold a worker waiting: try once, and again later.
        wait = 0 if deferrable else settings.CANON_MIRROR_WAIT_SECONDS
        with mirror.project_lock(project, wait=wait):
            _export(project, wait=max(wait, 1))
    except mirror.MirrorBusy:
        if deferrable:
            export_workspace.using(run_after=timezone.now() + RETRY_AFTER).enqueue(project_id)
        else:
            # Nothing to come back later: let the next write ask again.
            MirrorRequest.objects.filter(project_id=project_id).delete()
            logger.warning("background export of %s skipped: the project stayed busy", project.slug)
    except Exception:
        logger.exception("background export of project %s failed", project_id)


def _export(project: Project, *, wait: float) -> None:
    if not mirror.take_wanted(project.pk, wait=wait):
        return  # a sync or a manual export ran since the request, reading every write it was for
    project.refresh_from_db()
    if not settings.CANON_EXPORT_ON_WRITE or not project.workspace:
        return
    result = mirror.run_and_record(project, MirrorKind.EXPORT, trigger=mirror.BACKGROUND)
    if not result.ok:
        logger.warning("background export of %s failed: %s", project.slug, result.error or result.summary())
