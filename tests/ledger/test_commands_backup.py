"""backup_ledger: an online SQLite backup that restores to the same ledger (docs/commands.md).

The SQLite tests back up the suite's own test database file while another thread writes to it; the
PostgreSQL test runs when the suite runs with DATABASE_URL pointing at PostgreSQL. The tests of the
copy itself use a SQLite file of their own, so they run in both suites.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from ledger import context, services
from ledger.management.commands.backup_ledger import (
    BackupFailed,
    BackupRefused,
    pg_dump_instructions,
    sqlite_backup,
    sqlite_source,
)
from ledger.models import Project

# Each suite runs the half that is about its own engine (CI runs both); see tests/conftest.py.
on_sqlite = pytest.mark.sqlite_only
on_postgresql = pytest.mark.postgresql_only


MANAGE = str(Path(settings.BASE_DIR) / "manage.py")


def run(*args: str) -> str:
    out = StringIO()
    call_command("backup_ledger", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def live_database() -> Path:
    return sqlite_source(connection.settings_dict)


def fingerprint(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def leftovers(directory: Path) -> list[str]:
    """Temporary files a backup left behind in `directory`."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def small_database(path: Path, rows: int = 200) -> Path:
    """A WAL-mode SQLite file with some pages, as Canon's own database is."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    db.executemany("INSERT INTO note (body) VALUES (?)", [("x" * 400,)] * rows)
    db.close()
    return path


def seed_ledger() -> Project:
    """A real ledger: boundaries, memories of two agents, a pending proposal and an open session."""
    project, _ = services.project_create_or_update(slug="backup", name="Backup")
    services.decision_create(
        project=project,
        agent_name="lead",
        type="architectural",
        title="PostgreSQL in production",
        content="Durable state lives in PostgreSQL.\nSQLite is for development.",
        rationale="One engine to operate.",
        by="lead",
    )
    services.decision_create(
        project=project,
        agent_name="lead",
        type="scope",
        title="No billing in v1",
        content="Out of scope.",
        by="lead",
    )
    services.memory_record(
        project=project, agent_name="Alice", type="core_context", content="Alice owns the HTTP client."
    )
    services.memory_record(
        project=project,
        agent_name="Bob",
        type="learning",
        importance="high",
        content="Staging resets nightly at 02:00 UTC.",
        tags=["cross-team"],
    )
    services.entry_submit(
        project=project, agent_name="Alice", slug="cache-tokens", type="technical", content="Cache them."
    )
    services.session_start(
        project=project,
        session_id="sprint-1",
        focus_area="Tokens",
        active_issues=["#41"],
        summary="Reviewing.",
    )
    return project


class Writer(threading.Thread):
    """Writes to the live ledger until stopped: proposals and other agents' memories, none of which is
    in Alice's context. `writes` counts committed writes."""

    def __init__(self, project: Project) -> None:
        super().__init__(daemon=True)
        self.project = project
        self.writes = 0
        self.wrote = threading.Condition()
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                n = self.writes
                services.entry_submit(
                    project=self.project,
                    agent_name="Carol",
                    slug=f"idea-{n}",
                    type="scope",
                    content=f"Idea {n}.",
                )
                services.memory_record(
                    project=self.project, agent_name="Carol", type="update", content=f"Update {n}." * 20
                )
                with self.wrote:
                    self.writes += 1
                    self.wrote.notify_all()
        except BaseException as exc:  # the test asserts there was none
            self.error = exc
        finally:
            connection.close()

    def wait_for(self, writes: int) -> None:
        with self.wrote:
            assert self.wrote.wait_for(lambda: self.writes >= writes or self.error is not None, timeout=60)


def count(path: Path, table: str) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        db.close()


def compile_in_a_process(database: Path, project: str, agent: str) -> bytes:
    """What `manage.py compile_context` prints with DATABASE_URL naming `database`: a restored Canon."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "CANON_EXPORT_ON_WRITE": "false",
    }
    env.pop("DATABASE_TEST_NAME", None)
    done = subprocess.run(
        [sys.executable, MANAGE, "compile_context", "--project", project, "--agent", agent],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


# ---------------------------------------------------------------------------------------------
# The live database, while it is written


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_backup_taken_while_writing_restores_to_the_same_context(tmp_path):
    project = seed_ledger()
    before = context.compile(project, "Alice")
    assert before.text is not None and before.error is None
    assert all(h in before.text for h in ("## Boundaries", "## Memory", "## Current Session"))
    writer = Writer(project)
    writer.start()
    writer.wait_for(3)
    seen: list[int] = []

    def interleave(status: int, remaining: int, total: int) -> None:
        # Between the first steps of the copy, let the writer commit more: the copy must not see them.
        if len(seen) < 3:
            seen.append(writer.writes)
            writer.wait_for(writer.writes + 2)

    try:
        result = sqlite_backup(
            live_database(), tmp_path / "canon.backup", pages_per_step=2, progress=interleave
        )
    finally:
        writer.stop.set()
        writer.join(timeout=60)
    assert writer.error is None
    assert len(seen) == 3 and writer.writes >= seen[0] + 6, "the writer committed during the copy"

    backup = tmp_path / "canon.backup"
    # One snapshot, taken before the first step: none of the writes made during the copy is in it (the
    # seeded entry, the writes counted by then, and at most one whose memory was not yet written).
    assert count(backup, "ledger_inboxentry") <= 2 + seen[0]
    assert count(live_database(), "ledger_inboxentry") >= 1 + seen[0] + 6
    assert count(backup, "ledger_inboxentry") == result.rows["inbox entries"]
    db = sqlite3.connect(backup)
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    db.close()

    restored = tmp_path / "restored" / "canon.sqlite3"
    restored.parent.mkdir()
    restored.write_bytes(backup.read_bytes())
    told = compile_in_a_process(restored, "backup", "Alice")
    assert told == before.text.encode("utf-8")
    assert hashlib.sha256(told).hexdigest() == before.sha256


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_the_command_reports_what_it_wrote(tmp_path):
    seed_ledger()
    target = tmp_path / "nightly.sqlite3"
    output = run(str(target), "--pages-per-step", "4", "--verbosity", "2")
    lines = output.splitlines()
    assert lines[0].startswith("copied 4 of ") and lines[-2].endswith("(100%)")
    assert lines[-1].startswith(f"wrote {target}: ")
    assert "decisions 2, agent memories 2, sessions 1" in lines[-1]
    assert target.stat().st_mode & 0o777 == 0o600
    assert leftovers(tmp_path) == []
    db = sqlite3.connect(target)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert db.execute("SELECT title FROM ledger_decision ORDER BY id").fetchall() == [
        ("PostgreSQL in production",),
        ("No billing in v1",),
    ]
    db.close()


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_json_summary_and_a_quiet_cron_run(tmp_path):
    seed_ledger()
    summary = json.loads(run(str(tmp_path / "a.sqlite3"), "--json"))
    assert summary["path"] == str(tmp_path / "a.sqlite3")
    assert summary["source"] == str(live_database())
    assert summary["rows"]["projects"] == 1 and summary["rows"]["inbox entries"] == 1
    assert summary["bytes"] == (tmp_path / "a.sqlite3").stat().st_size
    assert run(str(tmp_path / "b.sqlite3"), "--verbosity", "0") == ""
    assert (tmp_path / "b.sqlite3").is_file()


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_an_existing_file_is_kept_unless_forced(tmp_path):
    seed_ledger()
    target = tmp_path / "nightly.sqlite3"
    target.write_bytes(b"yesterday")
    with pytest.raises(CommandError) as info:
        run(str(target))
    assert info.value.returncode == 2
    assert str(info.value) == f"{target} already exists; pass --force to replace it"
    assert target.read_bytes() == b"yesterday"
    run(str(target), "--force")
    assert count(target, "ledger_project") == 1
    assert leftovers(tmp_path) == []


@on_sqlite
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing/backup.sqlite3", "does not exist; create it first"),
        ("a-file/backup.sqlite3", "is not a directory"),
        ("a-directory", "is a directory; name the backup file inside it"),
        ("LIVE", "is the live database; name another file"),
        ("LIVE-wal", "is the live database's wal file"),
    ],
)
def test_bad_paths_exit_2_and_write_nothing(tmp_path, where, message):
    seed_ledger()
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-directory").mkdir()
    live = live_database()
    # Compared by stat, never by opening it: closing any descriptor of the live file would drop this
    # process's SQLite locks on it (POSIX locks belong to the process, not to the descriptor).
    before = fingerprint(live)
    target = str(live) + where[4:] if where.startswith("LIVE") else str(tmp_path / where)
    with pytest.raises(CommandError) as info:
        run(target)
    assert info.value.returncode == 2
    assert message in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-directory", "a-file"]
    assert fingerprint(live) == before


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_an_unwritable_directory_exits_2(tmp_path):
    seed_ledger()
    if os.geteuid() == 0:
        directory = Path("/sys")  # refuses new files even to root
    else:
        directory = tmp_path / "read-only"
        directory.mkdir(mode=0o500)
    with pytest.raises(CommandError) as info:
        run(str(directory / "backup.sqlite3"))
    assert info.value.returncode == 2
    assert str(directory) in str(info.value)
    assert not (directory / "backup.sqlite3").exists()


def test_bad_arguments_exit_2(tmp_path):
    for args in (["--pages-per-step", "0"], ["--database", "nope"]):
        with pytest.raises(CommandError) as info:
            run(str(tmp_path / "x.sqlite3"), *args)
        assert info.value.returncode == 2
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# PostgreSQL


@on_postgresql
@pytest.mark.django_db
def test_on_postgresql_it_writes_nothing_and_prints_the_pg_dump_line(tmp_path):
    target = tmp_path / "canon.dump"
    with pytest.raises(CommandError) as info:
        run(str(target))
    db = connection.settings_dict
    message = str(info.value)
    assert info.value.returncode == 2
    assert message.startswith("backup_ledger copies SQLite databases only, and this database is PostgreSQL")
    assert (
        f"    pg_dump --host={db['HOST']} --port={db['PORT']} --username={db['USER']} --dbname={db['NAME']} "
        f"--format=custom --file={target}\n"
    ) in message
    assert "pg_restore --host=" in message
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# The copy and the PostgreSQL answer on their own (both suites)


def test_pg_dump_line_quotes_values_and_never_shows_the_password():
    text = pg_dump_instructions(
        {"HOST": "db.example.com", "PORT": 5433, "USER": "canon", "NAME": "canon prod", "PASSWORD": "s3cret"},
        "/backups/canon's.dump",
    )
    assert "s3cret" not in text
    assert (
        "    pg_dump --host=db.example.com --port=5433 --username=canon --dbname='canon prod' "
        "--format=custom --file='/backups/canon'\"'\"'s.dump'\n"
    ) in text


def test_pg_dump_line_leaves_out_what_the_url_does_not_name():
    text = pg_dump_instructions({"HOST": "", "PORT": "", "USER": "", "NAME": "canon"}, "canon.dump")
    assert "    pg_dump --dbname=canon --format=custom --file=canon.dump\n" in text


def test_an_in_memory_database_is_refused():
    for name in (":memory:", "file:memorydb_default?mode=memory&cache=shared"):
        with pytest.raises(BackupRefused, match="in memory"):
            sqlite_source({"NAME": name})


def test_a_copy_is_the_same_database_in_one_file(tmp_path):
    live = small_database(tmp_path / "live.sqlite3")
    result = sqlite_backup(live, tmp_path / "copy.sqlite3", pages_per_step=5)
    copy = sqlite3.connect(tmp_path / "copy.sqlite3")
    assert copy.execute("SELECT count(*), sum(length(body)) FROM note").fetchone() == (200, 200 * 400)
    assert copy.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    copy.close()
    assert result.rows == {}  # not a Canon database: nothing to count
    assert result.pages > 5
    assert result.summary().endswith("no Canon tables")
    assert leftovers(tmp_path) == []


def test_a_copy_that_fails_midway_leaves_no_file(tmp_path):
    live = small_database(tmp_path / "live.sqlite3")
    steps: list[int] = []

    def crash(status: int, remaining: int, total: int) -> None:
        steps.append(remaining)
        if len(steps) == 2:
            raise OSError(28, "No space left on device")

    with pytest.raises(BackupFailed, match="No space left on device"):
        sqlite_backup(live, tmp_path / "copy.sqlite3", pages_per_step=3, progress=crash)
    assert len(steps) == 2 and steps[-1] > 0
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("live.sqlite3")] == []


def test_a_missing_live_database_fails_with_exit_1_reason(tmp_path):
    with pytest.raises(BackupFailed, match="no database file at"):
        sqlite_backup(tmp_path / "absent.sqlite3", tmp_path / "copy.sqlite3")
    assert list(tmp_path.iterdir()) == []


def test_a_symbolic_link_to_the_live_database_is_refused(tmp_path):
    live = small_database(tmp_path / "live.sqlite3")
    (tmp_path / "link.sqlite3").symlink_to(live)
    with pytest.raises(BackupRefused, match="is the live database"):
        sqlite_backup(live, tmp_path / "link.sqlite3", force=True)
    assert count(live, "note") == 200
