"""What the manifest knows of a big file is stored in chunks (docs/mirror.md "What an export does"): a
write stores the chunks that changed, and every row reads back whole, however it was stored.

Chunks are made small here (`small_chunks`) so that files of a few rows are cut into many.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import mirror, services
from ledger.mirror import chunks, manifest, partial, pieces
from ledger.mirror.paths import PATTERNS
from ledger.models import Decision, MirrorChunk, MirrorFile, Project
from tests.ledger.test_mirror_incremental import files_of, full_export, run_batches
from tests.ledger.test_mirror_incremental import workspace as workspace
from tests.squad_fixtures import write_squad_team

LOG = ".squad/decisions.md"


@pytest.fixture(autouse=True)
def fresh_process() -> None:
    """Each test starts as a process that has read no chunk yet."""
    chunks._recent.clear()
    chunks._unnamed.clear()


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "BIG", 3)
    monkeypatch.setattr(chunks, "ENDING", "1")
    monkeypatch.setattr(chunks, "LONGEST", 6)
    # Files written whole are remembered too (`pieces.record`), checked by `run_batches`.
    monkeypatch.setattr(pieces, "REMEMBERED", 3)


def decisions(project: Project, n: int) -> list[Decision]:
    return [
        services.decision_create(
            project=project,
            agent_name="Marlow",
            type="scope",
            title=f"Rule {k}",
            content=f"Text {k}.",
            by="l",
        )
        for k in range(n)
    ]


def stored_columns(path: str = LOG) -> dict[str, object]:
    return MirrorFile.objects.filter(path=path).values("parts", "placed", "pieces").get()


@pytest.mark.parametrize("seed", [6, 7, 11])
def test_random_writes_with_small_chunks_export_as_a_full_export_does(
    project, workspace, tmp_path, small_chunks, seed
):
    decisions(project, 8)
    for n in range(8):
        services.memory_record(project=project, agent_name="Rai", type="pattern", content=f"Pattern {n}.")
    mirror.export_project(project)
    run_batches(project, workspace, tmp_path, seed, copy=False)
    assert MirrorChunk.objects.filter(file__project=project).exists()


def test_random_writes_beside_a_squad_team_with_small_chunks(
    project, workspace, tmp_path, settings, small_chunks
):
    settings.CANON_DATA_DIR = tmp_path / "data"
    write_squad_team(workspace, log_lines=120, agents=3, seed=8)
    mirror.sync_project(project, trigger="command")
    run_batches(project, workspace, tmp_path, 8, copy=True)
    # The log adopted from the team, stored in chunks, reads back whole: a sync finds nothing new.
    assert MirrorChunk.objects.filter(file__project=project, file__path=LOG).exists()
    imported = mirror.import_project(project)
    assert not (imported.created or imported.adopted or imported.merged or imported.edited), imported
    assert mirror.export_project(project).written == []


def test_a_write_stores_the_chunks_that_changed(project, workspace, small_chunks):
    rows = decisions(project, 40)
    mirror.export_project(project)
    columns = stored_columns()
    assert set(columns["parts"]) == {"chunks"} and set(columns["placed"]) == {"chunks"}
    assert set(columns["pieces"]["rows"]) == {"chunks"}
    total = MirrorChunk.objects.filter(file__path=LOG).count()
    last = max(MirrorChunk.objects.values_list("pk", flat=True))

    services.decision_edit(project=project, decision_id=rows[20].pk, by="lead", content="An edit.")
    assert LOG in mirror.export_project(project).written
    added = MirrorChunk.objects.filter(file__path=LOG, pk__gt=last).count()
    # The row's part and its line of the pieces: a chunk or two each, of about thirty.
    assert 1 <= added <= 6 and total > 20
    assert MirrorChunk.objects.filter(file__path=LOG).count() <= total + 1
    full = Path(workspace).parent / "full"
    full.mkdir()
    assert full_export(project, full) == files_of(workspace)


def test_a_row_stored_whole_before_chunks_is_read_then_cut_at_its_next_write(
    project, workspace, tmp_path, small_chunks
):
    rows = decisions(project, 20)
    mirror.export_project(project)
    whole = manifest.rows(project, [LOG])[LOG]
    values = (whole.parts, whole.placed, whole.pieces)
    # As a release before chunks stored it: every value in its column.
    MirrorFile.objects.filter(pk=whole.pk).update(parts=values[0], placed=values[1], pieces=values[2])
    MirrorChunk.objects.all().delete()
    again = manifest.rows(project, [LOG])[LOG]
    assert (again.parts, again.placed, again.pieces) == values
    services.decision_edit(project=project, decision_id=rows[3].pk, by="lead", content="Edit.")
    assert LOG in mirror.export_project(project).written
    assert set(stored_columns()["placed"]) == {"chunks"}
    full = tmp_path / "full"
    full.mkdir()
    assert full_export(project, full) == files_of(workspace)


def test_the_export_after_the_next_write_starts_from_the_values_it_stored(project, workspace, small_chunks):
    rows = decisions(project, 20)
    mirror.export_project(project)
    services.decision_edit(project=project, decision_id=rows[1].pk, by="lead", content="Edit.")
    with CaptureQueriesContext(connection) as read:
        assert LOG in mirror.export_project(project).written
    assert not [q for q in read.captured_queries if '"ledger_mirrorchunk"."text"' in q["sql"]]
    # Another process reads them.
    chunks._recent.clear()
    services.decision_edit(project=project, decision_id=rows[2].pk, by="lead", content="Edit again.")
    with CaptureQueriesContext(connection) as read:
        assert LOG in mirror.export_project(project).written
    assert [q for q in read.captured_queries if '"ledger_mirrorchunk"."text"' in q["sql"]]


def test_the_chunks_no_column_names_are_removed(project, workspace, small_chunks):
    rows = decisions(project, 20)
    mirror.export_project(project)
    for k in range(3):
        services.decision_edit(project=project, decision_id=rows[k].pk, by="lead", content=f"Edit {k}.")
        mirror.export_project(project)
    row = manifest.rows(project, [LOG])[LOG]
    named = {d for name in chunks.COLUMNS for d in chunks._known(row).get(name, [])}
    assert set(MirrorChunk.objects.filter(file=row).values_list("digest", flat=True)) == named


def test_chunks_stored_by_a_write_that_stopped_before_naming_them_change_nothing(
    project, workspace, small_chunks
):
    rows = decisions(project, 20)
    mirror.export_project(project)
    services.decision_edit(project=project, decision_id=rows[1].pk, by="lead", content="Edit.")
    mirror.export_project(project)
    before = manifest.rows(project, [LOG])[LOG]
    values = (before.parts, before.placed, before.pieces)
    # A write that stored its chunks and stopped before the row named them.
    before.parts = {**before.parts, "f" * 64: "decision:999999"}
    chunks.stored(before, ["parts"])
    chunks._recent.clear()  # the process stopped
    again = manifest.rows(project, [LOG])[LOG]
    assert (again.parts, again.placed, again.pieces) == values
    # The next write of the file removes them.
    services.decision_edit(project=project, decision_id=rows[2].pk, by="lead", content="Edit again.")
    mirror.export_project(project)
    test_row = manifest.rows(project, [LOG])[LOG]
    named = {d for name in chunks.COLUMNS for d in chunks._known(test_row).get(name, [])}
    assert set(MirrorChunk.objects.filter(file=test_row).values_list("digest", flat=True)) == named


def test_a_missing_chunk_has_the_file_rendered_whole(project, workspace, tmp_path, small_chunks, caplog):
    rows = decisions(project, 20)
    mirror.export_project(project)
    services.decision_edit(project=project, decision_id=rows[1].pk, by="lead", content="Edit.")
    mirror.export_project(project)
    MirrorChunk.objects.filter(pk=MirrorChunk.objects.filter(file__path=LOG).first().pk).delete()
    chunks._recent.clear()  # read by another process
    services.decision_edit(project=project, decision_id=rows[5].pk, by="lead", content="Edit again.")
    with caplog.at_level(logging.WARNING, logger="canon.mirror"):
        report = mirror.export_project(project)
    assert report.ok and LOG in report.written
    assert "chunk that is missing" in caplog.text
    full = tmp_path / "full"
    full.mkdir()
    assert full_export(project, full) == files_of(workspace)


def test_whether_patterns_md_holds_a_memory_is_asked_of_its_chunks(project, workspace, small_chunks):
    patterns = [
        services.memory_record(project=project, agent_name="Rai", type="pattern", content=f"Pattern {n}.")
        for n in range(12)
    ]
    mirror.export_project(project)
    services.memory_edit(project=project, memory_id=patterns[0].pk, by="lead", content="Pattern zero.")
    mirror.export_project(project)
    assert set(stored_columns(PATTERNS)["pieces"]["rows"]) == {"chunks"}
    assert partial._listed_in(project, PATTERNS, {f"agentmemory:{patterns[11].pk}"})
    assert not partial._listed_in(project, PATTERNS, {f"agentmemory:{patterns[11].pk + 100}"})


_key = st.from_regex(r"(decision|agentmemory):[1-9][0-9]{0,5}", fullmatch=True)
# Any text a database can hold (PostgreSQL holds no NUL).
_odd = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.dictionaries(
        st.text("0123456789abcdef", min_size=64, max_size=64), st.one_of(_key, _odd), max_size=40
    ),
    placed=st.lists(st.one_of(_key, _odd, st.integers(-5, 5)), max_size=40),
    lines=st.lists(
        st.tuples(_key, _odd.filter(lambda s: "\t" not in s and "\n" not in s and "\r" not in s)), max_size=40
    ),
)
def test_every_value_reads_back_as_it_was_saved(project, small_chunks, parts, placed, lines):
    rows = "".join(f"{key}\t{stamp}\t1\t2\t\t\n" for key, stamp in lines)
    row = MirrorFile.objects.filter(project=project, path=LOG).first() or MirrorFile(
        project=project, path=LOG
    )
    row.parts, row.placed = parts, placed
    row.pieces = {"rendering": "r", "sha256": "s" * 64, "rows": rows} if rows else {}
    chunks.save(row)
    again = manifest.rows(project, [LOG])[LOG]
    assert (again.parts, again.placed, again.pieces) == (parts, placed, row.pieces)
