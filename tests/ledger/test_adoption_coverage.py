"""How much of a team's files adoption reads into rows, and that adopting them changes none of their bytes.

`ledger.mirror.squad.coverage` counts the non-blank lines of a file that the parsers read into rows;
every fixture shape of tests/squad_fixtures.py (FIXTURES) is measured with it, and adopted into a
database once to check that a first import and export leave every byte of the folder as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ledger import mirror
from ledger.mirror.squad import Block, Entry, Text, parse_decisions, parse_history
from ledger.mirror.squad.coverage import NOT_READ, LineReport, line_report
from ledger.mirror.squad.lines import HEADING_OF_ROWS
from ledger.models import Project
from tests.squad_fixtures import FIXTURES, SquadTeam, write_fixture

# The share of a log's or a history's lines adoption must read into rows.
TARGET = 0.95


def block(text: str) -> Block:
    """A decision block holding `text` (made by the parser, so it has every field a Block has)."""
    made = parse_decisions("### 2026-03-02: Queue jobs in PostgreSQL\n**By:** Marlow\n")
    assert isinstance(made[0], Block)
    return replace(made[0], text=text)


def entry(text: str) -> Entry:
    """A history entry holding `text` (made by the parser, so it has every field an Entry has)."""
    made = [
        part for part in parse_history("## Learnings\n\n- Retries need jitter.\n") if isinstance(part, Entry)
    ]
    return replace(made[0], text=text)


# --- counting lines ---------------------------------------------------------------------------------


def test_lines_of_blocks_are_rows_and_text_without_a_reason_is_not_read() -> None:
    report = line_report(
        [
            Text("# Squad Decisions\n\n"),
            block(
                "### 2026-03-02: Queue jobs in PostgreSQL\n**By:** Marlow (Backend)\n**Why:** One database.\n"
            ),
            Text("\nA line nobody read.\n"),
        ]
    )
    assert (report.rows, report.kept, report.counted) == (3, {NOT_READ: 2}, 5)
    assert report.share == pytest.approx(3 / 5)
    assert report.describe() == "3 of 5 lines read into rows; kept as text: 2 not read"


def test_entries_of_a_history_are_rows() -> None:
    report = line_report(
        [
            Text("# Project Context\n\n", reason="preamble"),
            entry("- Retries need jitter.\n  Three clients retried on the same second.\n"),
            Text("\n"),
            entry("📌 2026-03-01 — Sync contract frozen at v2.\n"),
        ]
    )
    assert (report.rows, report.kept) == (3, {"preamble": 1})


def test_blank_lines_and_rules_count_neither_way() -> None:
    report = line_report(
        [
            Text("---\n\n***\n \t\n___\n- - -\n   ---   \n"),
            block("### 2026-03-02: Queue jobs\n\n---\n**By:** Marlow\n"),
            Text("\r\n\r\n"),
        ]
    )
    assert (report.rows, report.kept) == (2, {})


def test_lines_that_only_look_like_rules_are_counted() -> None:
    report = line_report([Text("--\n---x\n-*-\n    ---\n")])
    assert report.kept == {NOT_READ: 4}


def test_a_heading_whose_rows_follow_it_counts_as_read() -> None:
    report = line_report(
        [
            Text("## Learnings\n\n", section="Learnings", reason=HEADING_OF_ROWS),
            entry("- Fixtures drift; regenerate them from the schema.\n"),
            Text("\n## Team\n\n- Ilse Varga, product\n", section="Team", reason="untyped section 'Team'"),
        ]
    )
    assert (report.rows, report.kept) == (2, {"untyped section 'Team'": 2})


def test_kept_lines_are_counted_per_reason_most_first() -> None:
    report = line_report(
        [
            Text("# Squad Decisions\n", reason="preamble"),
            block("### 2026-03-02: Queue jobs\n**By:** Marlow\n"),
            Text("## Team\nIlse Varga\nJuno\n", reason="untyped section 'Team'"),
            Text("stray\n"),
            Text("odd one\n", reason="preamble"),
        ]
    )
    assert list(report.kept.items()) == [("untyped section 'Team'", 3), ("preamble", 2), (NOT_READ, 1)]
    assert report.describe() == (
        "2 of 8 lines read into rows; kept as text: 3 untyped section 'Team', 2 preamble, 1 not read"
    )


def test_a_title_and_comments_frame_a_file_and_a_day_heading_is_read() -> None:
    report = line_report(
        [
            Text("# Rai — History\n\n", reason="title"),
            Text("## Learnings\n", reason="heading of the rows below it"),
            Text("<!-- Append learnings below -->\n", reason="comment"),
            Text("## 2026-06-08\n", reason="day heading"),
            block("### Queue jobs\n**By:** Marlow\n"),
            Text("## Team\n", reason="untyped section 'Team'"),
        ]
    )
    assert (report.rows, report.kept, report.frame, report.counted) == (
        4,
        {"untyped section 'Team'": 1},
        2,
        5,
    )
    assert report.describe() == (
        "4 of 5 lines read into rows; kept as text: 1 untyped section 'Team' "
        "(not counted: 2 lines of title or comment)"
    )


def test_a_file_with_nothing_to_count_is_wholly_read() -> None:
    for parts in ([], [Text("\n\n---\n")], [Text("\ufeff")]):
        report = line_report(parts)
        assert (report.rows, report.counted, report.share) == (0, 0, 1.0)
        assert report.describe() == "no lines to read"


def test_one_line_is_said_in_the_singular() -> None:
    assert line_report([block("### 2026-03-02: Queue jobs")]).describe() == "1 of 1 line read into rows"


def test_crlf_and_a_byte_order_mark_are_not_content() -> None:
    report = line_report(
        [Text("\ufeff---\r\n\r\n", reason="preamble"), block("### 2026-03-02: A\r\n**By:** Juno\r\n")]
    )
    assert (report.rows, report.kept) == (2, {})
    report = line_report([Text("\ufeff# Squad Decisions\r\n", reason="preamble")])
    assert report.kept == {"preamble": 1}


def test_only_a_line_feed_ends_a_line() -> None:
    odd = "a\u2028b\x85c\x0cd\x1ce\rf\x0bg\n"
    assert line_report([Text(odd)]).counted == 1
    assert line_report([Text("\u2028\n")]).counted == 0


def test_a_line_split_between_parts_belongs_to_the_part_holding_its_first_character() -> None:
    report = line_report([Text("  kept "), block("read\n**By:** Marlow\n")])
    assert (report.rows, report.kept) == (1, {NOT_READ: 1})
    report = line_report([Text("   "), block("read\n")])
    assert (report.rows, report.kept) == (1, {})


def test_a_report_is_a_plain_value() -> None:
    assert LineReport() == LineReport(rows=0, kept={})
    assert LineReport(rows=3).share == 1.0


# --- the fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], SquadTeam]:
    """Writes each named fixture once for the module, when first asked for."""
    root = tmp_path_factory.mktemp("fixtures")
    teams: dict[str, SquadTeam] = {}

    def get(name: str) -> SquadTeam:
        if name not in teams:
            teams[name] = write_fixture(root / str(len(teams)), name)
        return teams[name]

    return get


def team_files(team: SquadTeam, kind: str) -> list[tuple[str, str]]:
    """(path under the team folder, text) of its logs or its histories."""
    if kind == "log":
        paths = [team.folder / name for name in ("decisions.md", "decisions-archive.md")]
    else:
        paths = sorted(team.folder.glob("agents/*/history.md"))
    return [
        (p.relative_to(team.folder).as_posix(), p.read_bytes().decode("utf-8")) for p in paths if p.is_file()
    ]


def parse(kind: str, text: str) -> list[Text | Block] | list[Text | Entry]:
    return parse_decisions(text) if kind == "log" else parse_history(text)


def below_target(team: SquadTeam, kind: str) -> list[str]:
    """A line for each log or history of `team` whose share of lines read into rows is below TARGET."""
    low = []
    for path, text in team_files(team, kind):
        report = line_report(parse(kind, text))
        if report.share < TARGET:
            low.append(f"{path}: {report.share:.1%}: {report.describe()}")
    return low


_RULE_LINE = re.compile(r" {0,3}(?:-[ \t]*){3,}\Z| {0,3}(?:\*[ \t]*){3,}\Z| {0,3}(?:_[ \t]*){3,}\Z")


def counted_lines(text: str) -> int:
    """The lines a report counts, found without any parser: non-blank, not only a rule."""
    lines = [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]
    return sum(1 for line in lines if line.strip() and not _RULE_LINE.match(line))


@pytest.mark.parametrize("name", FIXTURES)
def test_every_line_of_every_fixture_file_is_counted_once(
    name: str, written: Callable[[str], SquadTeam]
) -> None:
    team = written(name)
    for kind in ("log", "history"):
        for path, text in team_files(team, kind):
            parts = parse(kind, text)
            assert "".join(part.text for part in parts) == text, path
            report = line_report(parts)
            assert report.counted + report.frame == counted_lines(text), path


def test_every_fixture_has_a_log_and_histories(written: Callable[[str], SquadTeam]) -> None:
    for name in FIXTURES:
        team = written(name)
        assert team_files(team, "log") and team_files(team, "history"), name


@pytest.mark.parametrize("name", FIXTURES)
def test_each_log_is_read_into_rows(name: str, written: Callable[[str], SquadTeam]) -> None:
    low = below_target(written(name), "log")
    assert not low, f"under {TARGET:.0%} read into rows:\n" + "\n".join(low)


@pytest.mark.parametrize("name", FIXTURES)
def test_each_history_is_read_into_rows(name: str, written: Callable[[str], SquadTeam]) -> None:
    low = below_target(written(name), "history")
    assert not low, f"under {TARGET:.0%} read into rows:\n" + "\n".join(low)


# --- adopting each fixture -----------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes, except the files Canon keeps for itself (`.agentweaver/`)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".agentweaver" not in p.relative_to(root).parts
    }


@pytest.mark.parametrize("name", FIXTURES)
def test_a_first_import_and_export_change_no_byte_of_the_team_folder(
    name: str, project: Project, tmp_path: Path, settings: Any
) -> None:
    settings.CANON_DATA_DIR = tmp_path / "data"
    root = tmp_path / "repo"
    write_fixture(root, name)
    before = snapshot(root)
    project.workspace = str(root)
    project.save()
    imported = mirror.import_project(project)
    assert any(path.endswith("/decisions.md") and "adopted" in said for path, said in imported.adopted)
    exported = mirror.export_project(project)
    assert exported.ok, exported.errors
    after = snapshot(root)
    changed = sorted(path for path in before.keys() & after.keys() if before[path] != after[path])
    assert (changed, sorted(after.keys() - before.keys()), sorted(before.keys() - after.keys())) == (
        [],
        [],
        [],
    )
