"""The workspace a project mirrors into, the lease that keeps its imports and exports apart, and the
manifest: what Canon has written or adopted at each path (`MirrorFile`), kept in the database, never in
the workspace where anyone could claim a team file as Canon's."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from operator import attrgetter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import OperationalError, connection, models, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone

from ledger.mirror import chunks, fs
from ledger.mirror.paths import LEGACY_MANIFEST
from ledger.mirror.reports import MirrorError
from ledger.models import MirrorFile, MirrorRequest, MirrorState, Project

logger = logging.getLogger("canon.mirror")

# How often a process waiting for a project's lease asks again.
LEASE_POLL_SECONDS = 0.1


def workspace_root(project: Project) -> Path:
    if not project.workspace:
        raise MirrorError(f"project {project.slug} has no workspace directory")
    root = Path(project.workspace)
    if not root.is_absolute():
        raise MirrorError(f"workspace {project.workspace!r} must be an absolute path")
    if not root.is_dir():
        raise MirrorError(f"workspace {project.workspace} does not exist or is not a directory")
    if not os.access(root, os.W_OK | os.X_OK):
        raise MirrorError(f"workspace {project.workspace} is not writable")
    return root


class MirrorBusy(MirrorError):
    """Another process held the project's lease for longer than the caller would wait."""


def claim_lease(project_id: int, *, holder: str, seconds: float) -> bool:
    """Take (or extend) the project's lease for `holder` unless another holder's has not expired.

    One compare-and-set UPDATE, so two processes on two hosts can never both win, on SQLite and
    PostgreSQL alike. Called outside a transaction, the claim is committed and seen by everyone at once.
    """
    MirrorState.objects.get_or_create(project_id=project_id)
    now = timezone.now()
    free = Q(holder="") | Q(held_until__lt=now) | Q(holder=holder)
    claimed = MirrorState.objects.filter(free, pk=project_id).update(
        holder=holder, held_until=now + timedelta(seconds=seconds)
    )
    return claimed == 1


def release_lease(project_id: int, *, holder: str) -> None:
    """Give the lease back, if `holder` still has it (an expired one may have been taken since)."""
    MirrorState.objects.filter(pk=project_id, holder=holder).update(holder="", held_until=None)


def take_wanted(project_id: int, *, wait: float) -> bool:
    """An export is starting: remove the project's export requests and say whether there were any.

    Every write in flight on the project holds a share lock on its row (`ledger.tasks`); taking the row
    for update, without queueing behind anyone, succeeds only once they have all committed, so the
    export that follows reads them all, and a write after it finds no request and queues another.
    MirrorBusy if writes kept the row for `wait` seconds.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            with transaction.atomic():
                list(Project.objects.select_for_update(nowait=True).filter(pk=project_id).values("pk"))
                removed, _ = MirrorRequest.objects.filter(project_id=project_id).delete()
            return removed > 0
        except OperationalError:
            if time.monotonic() >= deadline:
                raise MirrorBusy(f"project {project_id} is being written to; try again later") from None
            time.sleep(LEASE_POLL_SECONDS)


_held = threading.local()


@contextmanager
def project_lock(project: Project, *, wait: float | None = None) -> Iterator[None]:
    """Hold the project's mirror lease: no other thread, process or host imports or exports it meanwhile.

    Waits up to `wait` seconds (CANON_MIRROR_WAIT_SECONDS by default), then raises MirrorBusy. The lease
    is renewed while it is held and given back at the end; a holder that dies loses it when it expires
    (CANON_MIRROR_LEASE_SECONDS). Holding it again in the same thread (a sync: import, then export)
    just goes on.
    """
    held: set[int] = _held.__dict__.setdefault("projects", set())
    if project.pk in held:
        yield
        return
    seconds = settings.CANON_MIRROR_LEASE_SECONDS
    holder = uuid.uuid4().hex
    deadline = time.monotonic() + (settings.CANON_MIRROR_WAIT_SECONDS if wait is None else wait)
    while not claim_lease(project.pk, holder=holder, seconds=seconds):
        if time.monotonic() >= deadline:
            raise MirrorBusy(
                f"project {project.slug} is being imported or exported by another process; try again later"
            )
        time.sleep(LEASE_POLL_SECONDS)
    held.add(project.pk)
    renewal = _Renewal(project.pk, holder=holder, seconds=seconds)
    renewal.start()
    try:
        yield
    finally:
        renewal.stop()
        held.discard(project.pk)
        release_lease(project.pk, holder=holder)


class _Renewal(threading.Thread):
    """Extends a held lease every third of its length, so a long export keeps it to the end."""

    def __init__(self, project_id: int, *, holder: str, seconds: float) -> None:
        super().__init__(name=f"canon-lease-{project_id}", daemon=True)
        self.project_id, self.holder, self.seconds = project_id, holder, seconds
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.seconds / 3):
            try:
                MirrorState.objects.filter(pk=self.project_id, holder=self.holder).update(
                    held_until=timezone.now() + timedelta(seconds=self.seconds)
                )
            except Exception:  # the next beat tries again; the lease is long enough to miss one
                logger.warning("could not renew the lease of project %s", self.project_id, exc_info=True)
            finally:
                connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def load(project: Project, workspace: fs.Workspace, *, dry_run: bool) -> dict[str, MirrorFile]:
    """The project's manifest by path. The first time, what the first release wrote into the workspace
    (`.squad/.canon-manifest.json`: path → sha256 of the bytes it wrote) is taken over, and that file,
    Canon's own, removed."""
    files = {f.path: f for f in MirrorFile.objects.filter(project=project)}
    if files:
        chunks.expand(files.values())
        return files
    try:
        data = workspace.read(LEGACY_MANIFEST, max_bytes=4 * 1024 * 1024)
        legacy = json.loads(data) if data else {}
    except (fs.UnsafePath, fs.FileTooLarge, ValueError, OSError):
        return files
    if not isinstance(legacy, dict):
        return files
    for path, digest in sorted(legacy.items()):
        if isinstance(path, str) and isinstance(digest, str) and len(digest) == 64 and len(path) <= 1024:
            files[path] = MirrorFile(project=project, path=path, sha256=digest)
    if not dry_run:
        MirrorFile.objects.bulk_create(files.values())
        workspace.remove(LEGACY_MANIFEST)
    return files


def entry(project: Project, files: dict[str, MirrorFile], path: str) -> MirrorFile:
    """The manifest row of `path`, made (unsaved) when Canon has not met the path before."""
    if path not in files:
        files[path] = MirrorFile(project=project, path=path)
    return files[path]


@dataclass(slots=True)
class FileState:
    """What the manifest says of one path, without the parts it knows (`MirrorFile`): what an export
    reads of every path to tell which files to render."""

    path: str
    sha256: str
    pending_sha256: str
    adopted_sha256: str
    adopted: bool
    agent_id: int | None
    inputs: str
    seen: str

    def owns(self, digest: str) -> bool:
        return digest in {self.sha256, self.pending_sha256, self.adopted_sha256} - {""}


_STATE_FIELDS = (
    "path",
    "sha256",
    "pending_sha256",
    "adopted_sha256",
    "is_adopted",
    "agent_id",
    "inputs",
    "seen",
)


def states(
    project: Project,
    workspace: fs.Workspace,
    *,
    dry_run: bool,
    inbox: str | None = None,
    keep: Iterable[str] = (),
) -> dict[str, FileState]:
    """The project's manifest by path, light (`FileState`); the first release's manifest taken over the
    first time, as `load` does. With `inbox` (a folder), its files are left out but those adopted and
    those of `keep`."""
    found = states_where(
        project, None if inbox is None else ~Q(path__startswith=f"{inbox}/") | Q(path__in=sorted(keep))
    )
    if found or inbox is not None:
        return found
    return {
        path: FileState(path, row.sha256, row.pending_sha256, row.adopted_sha256, row.adopted, None, "", "")
        for path, row in load(project, workspace, dry_run=dry_run).items()
    }


def states_where(project: Project, where: Q | None) -> dict[str, FileState]:
    """`FileState` of the manifest's rows `where` says and of every row adopted; of all rows without."""
    adopted = Q(adopted_at__isnull=False)
    rows = (
        MirrorFile.objects.filter(Q() if where is None else where | adopted, project=project)
        .annotate(is_adopted=ExpressionWrapper(adopted, output_field=BooleanField()))
        .values_list(*_STATE_FIELDS)
    )
    # The values as the database gives them (no conversion each: 0 and 1 serve as False and True).
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {values[0]: FileState(*values) for values in cursor.fetchall()}


def count_under(project: Project, folder: str) -> int:
    """How many files in `folder` the manifest knows as Canon's own (not adopted)."""
    own = MirrorFile.objects.filter(project=project, path__startswith=f"{folder}/", adopted_at__isnull=True)
    return own.count()


def rows(project: Project, paths: Iterable[str]) -> dict[str, MirrorFile]:
    """The manifest's whole rows (with the parts they know) of these paths, those it has."""
    wanted = sorted(set(paths))
    found: dict[str, MirrorFile] = {}
    for start in range(0, len(wanted), 500):
        found.update(
            (row.path, row)
            for row in MirrorFile.objects.filter(project=project, path__in=wanted[start : start + 500])
        )
    chunks.expand(found.values())
    return found


# The columns an export writes, by name in `MirrorFile`.
PENDING = ["pending_sha256", "backup", "agent", "updated_at"]
RECORDED = [
    "sha256",
    "pending_sha256",
    "backup",
    "parts",
    "placed",
    "agent",
    "inputs",
    "seen",
    "pieces",
    "updated_at",
]


# Every column an export stores, in the order of the statement `store` sends.
_COLUMNS = (
    "project",
    "path",
    "sha256",
    "pending_sha256",
    "adopted_sha256",
    "backup",
    "parts",
    "placed",
    "agent",
    "updated_at",
    "inputs",
    "seen",
    "pieces",
)
# Rows sent in one statement.
_ROWS_PER_STATEMENT = 200


def _field(name: str) -> models.Field[Any, Any]:
    field = MirrorFile._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field


def _adapters(fields: list[str], *, document: bool = False) -> Callable[[MirrorFile], list[Any]]:
    """How `store` reads a row's values, in the order of `_COLUMNS`: the project, the path and the
    columns it sets (`fields`) as the row has them; the other columns of a stored row as their defaults
    (not stored). As parameters, JSON goes as its text: one parameter, never an array of them. In a JSON
    `document`, JSON goes as itself and a time as its text. Most values need no adapting: they are read
    by one C-level getter for all, and only the others by a function each."""
    names: list[str] = []
    adapted: list[tuple[int, Callable[[Any], Any]]] = []
    empty: dict[int, Any] = {}  # a stored row's columns not sent: their defaults, adapted
    for index, name in enumerate(_COLUMNS):
        field = _field(name)
        adapt: Callable[[Any], Any] | None = None
        if isinstance(field, models.JSONField) and not document:
            adapt = json.dumps
        elif isinstance(field, models.DateTimeField):
            adapt = _isoformat if document else connection.ops.adapt_datetimefield_value
        names.append(field.attname)
        if adapt is not None:
            adapted.append((index, adapt))
        if name not in ("project", "path", *fields):
            default = field.get_default()
            empty[index] = adapt(default) if adapt is not None else default
    getter = attrgetter(*names)
    sent = [(index, adapt) for index, adapt in adapted if index not in empty]

    def values(row: MirrorFile) -> list[Any]:
        found = list(getter(row))
        if row.pk is None:
            for index, adapt in adapted:
                found[index] = adapt(found[index])
            return found
        for index, adapt in sent:
            found[index] = adapt(found[index])
        for index, value in empty.items():
            found[index] = value
        return found

    return values


def _isoformat(value: Any) -> Any:
    return value.isoformat() if value is not None else None


def store(rows: list[MirrorFile], fields: list[str]) -> None:
    """Store manifest rows, new or not, by an upsert on the project and path that sets these `fields` of a
    row that exists, in a few statements of many rows each. A stored row's other columns are not sent:
    the parts it knows stay as they are."""
    now = timezone.now()
    for row in rows:
        row.updated_at = now
        row._state.adding = False  # stored, its id perhaps unknown (`chunks.save_many` looks it up)
    if not rows:
        return
    adapters = _adapters(fields)
    model = [_field(name) for name in _COLUMNS]
    columns = ", ".join(field.column for field in model)
    updated = ", ".join(f"{c} = excluded.{c}" for c in (_field(n).column for n in fields))
    upsert = f" ON CONFLICT (project_id, path) DO UPDATE SET {updated}"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Most rows (an inbox file's) know no parts: all of them as one JSON document, which is
            # quick to make and to read (arrays of text are quoted item by item). A row that knows parts
            # goes as values of its own: quoting JSON inside JSON costs as much as its quotes.
            plain = [row for row in rows if not (row.parts or row.placed or row.pieces)]
            rows = [row for row in rows if row.parts or row.placed or row.pieces]
            if plain:
                record = ", ".join(f"{field.column} {field.db_type(connection)}" for field in model)
                names = [field.column for field in model]
                values = _adapters(fields, document=True)
                document = json.dumps(
                    [dict(zip(names, values(row), strict=True)) for row in plain],
                    ensure_ascii=False,
                )
                cursor.execute(
                    f"INSERT INTO {MirrorFile._meta.db_table} ({columns}) SELECT {columns}"
                    f" FROM json_to_recordset(%s::json) AS r({record})" + upsert,
                    [document],
                )
        one = "(" + ", ".join(["%s"] * len(model)) + ")"
        for start in range(0, len(rows), _ROWS_PER_STATEMENT):
            batch = rows[start : start + _ROWS_PER_STATEMENT]
            cursor.execute(
                f"INSERT INTO {MirrorFile._meta.db_table} ({columns}) VALUES {', '.join([one] * len(batch))}"
                + upsert,
                [value for row in batch for value in adapters(row)],
            )
