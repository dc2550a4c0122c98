"""Copy the live SQLite database to one file, safely while the server and workers write (docs/commands.md).

Copying `canon.sqlite3` with `cp` while Canon runs can give a torn file, and misses what still sits in
the `-wal` file. This command uses SQLite's online backup API instead, from a read-only connection that
holds one read transaction for the whole copy: in WAL mode that is a consistent snapshot, writers are
not blocked, and the copy never restarts however often they commit (without the held transaction,
SQLite starts a stepped backup over after every write by another connection).

The copy goes to a temporary file beside PATH, is checked (`PRAGMA quick_check`), flushed to disk, and
only then renamed to PATH, so a crash leaves either no PATH or a whole one. The file is a plain
single-file database (rollback journal, not WAL) readable only by its owner: it holds token and
password hashes.

On PostgreSQL the command writes nothing and prints the `pg_dump` line for this connection.

Exit codes: 0 written; 1 the backup failed (nothing is left at PATH); 2 bad arguments, a PATH it will
not write, or a database this command does not copy.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import sqlite3
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections

from ledger.models import (
    Agent,
    AgentMemory,
    ApiToken,
    AuditEvent,
    Compilation,
    Decision,
    InboxEntry,
    Project,
    Session,
)

# Pages copied per backup step: progress is reported after each step (4 MiB at SQLite's default
# 4 KiB page size).
PAGES_PER_STEP = 1024
# How long the read-only connection waits for a lock before giving up, in seconds (the server's own
# connections wait as long, see config/settings.py).
BUSY_TIMEOUT = 20
# The tables whose row counts the summary shows, in this order.
COUNTED = (Project, Agent, InboxEntry, Decision, AgentMemory, Session, Compilation, ApiToken, AuditEvent)
# Files SQLite keeps beside a database: a backup written over one would corrupt the live database.
COMPANION_SUFFIXES = ("", "-wal", "-shm", "-journal")

# (status, remaining pages, total pages), as `sqlite3.Connection.backup` reports them.
Progress = Callable[[int, int, int], None]


class BackupRefused(Exception):
    """The backup was not attempted: PATH or the database is not one this command writes or copies."""


class BackupFailed(Exception):
    """The backup was attempted and did not complete; nothing was left at PATH."""


@dataclass
class BackupResult:
    path: Path
    source: Path
    size: int
    pages: int
    seconds: float
    rows: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "source": str(self.source),
            "bytes": self.size,
            "pages": self.pages,
            "seconds": round(self.seconds, 3),
            "rows": dict(self.rows),
        }

    def summary(self) -> str:
        rows = ", ".join(f"{label} {count}" for label, count in self.rows.items())
        return (
            f"wrote {self.path}: {_human_size(self.size)} ({self.pages} pages) from {self.source} "
            f"in {self.seconds:.1f} s; {rows or 'no Canon tables'}"
        )


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


# ---------------------------------------------------------------------------------------------
# Which database, and where to


def sqlite_source(settings_dict: dict[str, Any]) -> Path:
    """The live database file of a SQLite connection; refused for an in-memory database."""
    name = str(settings_dict["NAME"])
    if name == ":memory:" or "mode=memory" in name:
        raise BackupRefused("the database is in memory; there is no file to back up")
    return Path(name).resolve()


def pg_dump_instructions(settings_dict: dict[str, Any], path: str) -> str:
    """How to back up this PostgreSQL connection: its host, port, user and name, never its password."""
    options = [
        f"--{flag}={shlex.quote(str(settings_dict[key]))}"
        for flag, key in (("host", "HOST"), ("port", "PORT"), ("username", "USER"), ("dbname", "NAME"))
        if settings_dict.get(key)
    ]
    connection = " ".join(options)
    return (
        "backup_ledger copies SQLite databases only, and this database is PostgreSQL: nothing was written.\n"
        "Back it up with pg_dump (the password comes from PGPASSWORD or ~/.pgpass):\n"
        f"    pg_dump {connection} --format=custom --file={shlex.quote(path)}\n"
        "To restore, create an empty database (createdb), name it in --dbname, and load the dump:\n"
        f"    pg_restore {connection} --no-owner {shlex.quote(path)}"
    )


def check_target(target: Path, source: Path, *, force: bool) -> None:
    """Refuse a PATH that cannot or must not be written, before any work is done."""
    parent = target.parent
    if not parent.exists():
        raise BackupRefused(f"directory {parent} does not exist; create it first")
    if not parent.is_dir():
        raise BackupRefused(f"{parent} is not a directory")
    resolved = parent.resolve() / target.name
    for suffix in COMPANION_SUFFIXES:
        live = Path(f"{source}{suffix}")
        if resolved == live or (target.exists() and live.exists() and os.path.samefile(target, live)):
            what = f"the live database's {suffix[1:]} file" if suffix else "the live database"
            raise BackupRefused(f"{target} is {what}; name another file")
    if target.is_dir():
        raise BackupRefused(f"{target} is a directory; name the backup file inside it")
    if os.path.lexists(target) and not force:
        raise BackupRefused(f"{target} already exists; pass --force to replace it")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BackupRefused(f"directory {parent} is not writable")


# ---------------------------------------------------------------------------------------------
# The copy


def sqlite_backup(
    source: Path,
    target: Path,
    *,
    force: bool = False,
    pages_per_step: int = PAGES_PER_STEP,
    progress: Progress | None = None,
) -> BackupResult:
    """Copy the SQLite database at `source` to `target` with the online backup API.

    Raises `BackupRefused` before anything is written, `BackupFailed` when the copy could not be
    finished (then no file is left at `target`, nor the temporary one).
    """
    target = Path(os.path.abspath(target))
    check_target(target, source, force=force)
    if not source.is_file():
        raise BackupFailed(f"no database file at {source}; has `manage.py migrate` run?")
    started = time.monotonic()
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise BackupRefused(f"cannot write in directory {target.parent}: {exc.strerror}") from exc
    os.close(fd)
    temporary = Path(name)
    try:
        pages, rows = _copy(source, temporary, pages_per_step=pages_per_step, progress=progress)
        _fsync(temporary)
        _move_into_place(temporary, target, force=force)
    except sqlite3.Error as exc:
        raise BackupFailed(f"the backup of {source} failed: {exc}") from exc
    except OSError as exc:
        raise BackupFailed(f"could not write {target}: {exc.strerror or exc}") from exc
    finally:
        for suffix in COMPANION_SUFFIXES:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{temporary}{suffix}")
    return BackupResult(
        path=target,
        source=source,
        size=target.stat().st_size,
        pages=pages,
        seconds=time.monotonic() - started,
        rows=rows,
    )


def _copy(
    source: Path, temporary: Path, *, pages_per_step: int, progress: Progress | None
) -> tuple[int, dict[str, int]]:
    """Copy one snapshot of `source` into `temporary`; check it; count its rows. Returns (pages, rows)."""
    reader = sqlite3.connect(
        source.as_uri() + "?mode=ro", uri=True, timeout=BUSY_TIMEOUT, isolation_level=None
    )
    writer = sqlite3.connect(temporary, isolation_level=None)
    try:
        # One read transaction for the whole copy: every step reads the same snapshot.
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()
        # The temporary file needs no journal: on any failure it is thrown away whole.
        writer.execute("PRAGMA journal_mode=OFF")
        reader.backup(writer, pages=pages_per_step, progress=progress)
        # The copied header says WAL; a backup is one self-contained file.
        writer.execute("PRAGMA journal_mode=DELETE")
        check = writer.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(f"the copy failed its integrity check: {check}")
        pages = writer.execute("PRAGMA page_count").fetchone()[0]
        return pages, _row_counts(writer)
    finally:
        writer.close()
        reader.close()


def _row_counts(db: sqlite3.Connection) -> dict[str, int]:
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {
        str(model._meta.verbose_name_plural): db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        for model in COUNTED
        if (table := model._meta.db_table) in tables
    }


def _fsync(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _move_into_place(temporary: Path, target: Path, *, force: bool) -> None:
    """Rename the finished copy to `target`; without `force`, never over a file that appeared meanwhile."""
    if force:
        os.replace(temporary, target)
    else:
        try:
            # A hard link fails when `target` exists, where a rename would silently replace it.
            os.link(temporary, target)
        except FileExistsError as exc:
            raise BackupFailed(f"{target} appeared while the backup ran; nothing was replaced") from exc
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                raise
            # A file system without hard links: the check before the copy has to do.
            if target.exists():
                raise BackupFailed(f"{target} appeared while the backup ran; nothing was replaced") from exc
            os.replace(temporary, target)
        else:
            os.unlink(temporary)
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


# ---------------------------------------------------------------------------------------------
# The command


class Command(BaseCommand):
    help = (
        "Back up the SQLite database to PATH while Canon runs (docs/commands.md). On PostgreSQL it "
        "prints the pg_dump command instead and exits 2."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the backup file to write (its directory must exist)")
        parser.add_argument("--force", action="store_true", help="replace PATH if it exists")
        parser.add_argument(
            "--database", default=DEFAULT_DB_ALIAS, help="the database alias to back up (default: default)"
        )
        parser.add_argument(
            "--pages-per-step",
            type=int,
            default=PAGES_PER_STEP,
            help=f"pages copied between progress reports (default {PAGES_PER_STEP})",
        )
        parser.add_argument("--json", action="store_true", help="print a JSON summary")

    def handle(self, *args: Any, **options: Any) -> None:
        alias = options["database"]
        if alias not in connections:
            raise CommandError(f"--database: no database alias {alias!r}", returncode=2)
        if options["pages_per_step"] < 1:
            raise CommandError("--pages-per-step must be at least 1", returncode=2)
        connection = connections[alias]
        if connection.vendor == "postgresql":
            raise CommandError(pg_dump_instructions(connection.settings_dict, options["path"]), returncode=2)
        if connection.vendor != "sqlite":
            raise CommandError(
                f"backup_ledger copies SQLite databases only; back up this {connection.vendor} database "
                "with its own tools",
                returncode=2,
            )
        try:
            result = sqlite_backup(
                sqlite_source(connection.settings_dict),
                Path(options["path"]),
                force=options["force"],
                pages_per_step=options["pages_per_step"],
                progress=self._progress_reporter(options["verbosity"]),
            )
        except BackupRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        except BackupFailed as exc:
            raise CommandError(str(exc), returncode=1) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), sort_keys=True))
        elif options["verbosity"] >= 1:
            self.stdout.write(result.summary())

    def _progress_reporter(self, verbosity: int) -> Progress | None:
        """On a terminal one line that updates in place; at verbosity 2 or more a line per tenth copied."""
        terminal = self.stdout.isatty()
        if verbosity == 0 or (verbosity == 1 and not terminal):
            return None
        shown = [-1]

        def report(status: int, remaining: int, total: int) -> None:
            done = total - remaining
            percent = 100 * done // total if total else 100
            line = f"copied {done} of {total} pages ({percent}%)"
            if terminal:
                self.stdout.write(f"\r\033[K{line}", ending="" if remaining else "\n")
                self.stdout.flush()
            elif percent // 10 > shown[0]:
                shown[0] = percent // 10
                self.stdout.write(line)

        return report
