"""The manifest's rows are stored in a few statements of many rows, on both engines: a new row as it is,
a stored one by the columns asked for alone, JSON full of quotes and odd text intact."""

from __future__ import annotations

import pytest
from django.db import connection

from ledger.mirror import chunks, manifest
from ledger.models import MirrorFile, Project

# Quotes, backslashes, braces, tabs and text from outside the Basic Multilingual Plane: what an array's
# quoting and JSON's escaping both have to get right.
ODD = 'a "quoted" \\ back{slash} \t tab, «Ünïcode» 🦀'


def _row(project: Project, n: int, **values: object) -> MirrorFile:
    return MirrorFile(project=project, path=f".squad/decisions/inbox/entry-{n}.md", **values)


def test_new_rows_are_stored_as_they_are(project: Project) -> None:
    rows = [_row(project, n, pending_sha256=f"{n:064x}") for n in range(450)]
    rows.append(
        _row(
            project,
            999,
            sha256="b" * 64,
            parts={"c" * 64: ODD},
            placed=["decision:1", ODD],
            pieces={"rows": f"decision:1\t{ODD}\t0\t3\t\t\n", "sha256": "d" * 64},
        )
    )
    manifest.store(rows, manifest.RECORDED)

    stored = {row.path: row for row in MirrorFile.objects.filter(project=project)}
    assert len(stored) == 451
    assert stored[".squad/decisions/inbox/entry-7.md"].pending_sha256 == f"{7:064x}"
    odd = stored[".squad/decisions/inbox/entry-999.md"]
    assert (odd.sha256, odd.parts, odd.placed) == ("b" * 64, {"c" * 64: ODD}, ["decision:1", ODD])
    assert odd.pieces["rows"] == f"decision:1\t{ODD}\t0\t3\t\t\n"


def test_a_stored_row_changes_by_the_columns_asked_for_alone(project: Project) -> None:
    manifest.store(
        [_row(project, 1, sha256="a" * 64, parts={"e" * 64: "decision:4"}, placed=["decision:4"])],
        manifest.RECORDED,
    )
    row = MirrorFile.objects.get(project=project)
    row.pending_sha256, row.backup = "f" * 64, "/backups/entry-1.md"
    row.sha256, row.parts, row.placed = "not stored", {}, []  # not among the pending columns
    other = _row(project, 2, pending_sha256="9" * 64)

    manifest.store([row, other], manifest.PENDING)

    row.refresh_from_db()
    assert (row.pending_sha256, row.backup) == ("f" * 64, "/backups/entry-1.md")
    assert (row.sha256, row.parts, row.placed) == ("a" * 64, {"e" * 64: "decision:4"}, ["decision:4"])
    assert MirrorFile.objects.get(path=other.path).pending_sha256 == "9" * 64


def test_storing_no_row_sends_nothing(project: Project, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    with django_assert_num_queries(0):
        manifest.store([], manifest.RECORDED)


@pytest.mark.postgresql_only
@pytest.mark.django_db
def test_what_canon_knows_of_a_files_rows_is_stored_uncompressed_on_postgresql() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'ledger_mirrorfile'::regclass"
            " AND attname IN ('parts', 'placed', 'pieces') ORDER BY attname"
        )
        assert cursor.fetchall() == [("parts", "e"), ("pieces", "e"), ("placed", "e")]


@pytest.mark.parametrize("placed", [1, chunks.BIG + 1], ids=["small", "big"])
def test_a_row_the_upsert_stored_is_saved_again_as_the_same_row(project: Project, placed: int) -> None:
    row = _row(project, 1, pending_sha256="9" * 64)
    manifest.store([row], manifest.PENDING)
    assert row.pk is None  # the upsert gives no id

    row.sha256, row.pending_sha256 = "9" * 64, ""
    row.placed = [f"entry:{n}" for n in range(placed)]
    chunks.save(row)

    stored = MirrorFile.objects.get(project=project)
    assert (stored.pk, stored.sha256, stored.pending_sha256) == (row.pk, "9" * 64, "")
    chunks.expand([stored])
    assert stored.placed == row.placed
