"""The export renders what changed, and gives the same bytes as rendering everything (docs/mirror.md
"What an export does").

Random sequences of writes go through the services (submit, merge, reject, edit, undo, decide,
supersede, archive, retype, record, edit and archive memories, sessions); after each batch the routine
export runs, and every file it leaves is compared, byte for byte, with a full export of the same ledger:
into a fresh workspace for a project whose files are Canon's alone, into a copy of the workspace for one
beside a Squad team's own files.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction

from ledger import mirror, services
from ledger.mirror import changes, decided, fs, manifest, partial, pieces, render, splice
from ledger.mirror import export as mirror_export
from ledger.mirror.paths import PATTERNS
from ledger.models import (
    AgentMemory,
    Decision,
    DecisionStatus,
    EntryStatus,
    InboxEntry,
    MemoryStatus,
    MirrorChange,
    MirrorFile,
    Project,
)
from tests.squad_fixtures import write_squad_team

AGENTS = ["Alice", "Bob", "Rai", "Agent Beta", "coordinator"]
WORDS = [
    "cache",
    "retry",
    "index",
    "token",
    "budget",
    "schema",
    "lock",
    "queue",
    "deploy",
    "review",
    "merge",
    "##",
    "---",
    "`x`",
    "**Why:**",
    "é",
]


class _Rollback(Exception):
    pass


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def full_export(project: Project, into: Path) -> dict[str, bytes]:
    """Every file a full export of the ledger as it stands writes into `into`; the database is left as it
    was."""
    try:
        with transaction.atomic():
            project.workspace = str(into)
            Project.objects.filter(pk=project.pk).update(workspace=str(into))
            report = mirror.export_project(project, full=True)
            assert report.ok, report.as_dict()
            raise _Rollback
    except _Rollback:
        pass
    project.refresh_from_db()
    return files_of(into)


class Writer:
    """Random writes through the services, each refused one (a conflict, an invalid value) skipped."""

    def __init__(self, project: Project, seed: int) -> None:
        self.project, self.rng, self.n = project, random.Random(seed), 0

    def text(self, words: int = 6) -> str:
        lines = [" ".join(self.rng.choices(WORDS, k=words)) for _ in range(self.rng.randint(1, 3))]
        return "\n".join(lines)

    def pick(self, rows: Any) -> Any:
        found = list(rows.order_by("pk").values_list("pk", flat=True))
        return self.rng.choice(found) if found else None

    def one(self) -> None:
        p, rng = self.project, self.rng
        self.n += 1
        pending = InboxEntry.objects.filter(project=p, status=EntryStatus.PENDING)
        active = Decision.objects.filter(project=p, status=DecisionStatus.ACTIVE)
        memories = AgentMemory.objects.filter(project=p, status=MemoryStatus.ACTIVE)
        action = rng.choice(
            ["submit"] * 4
            + ["merge"] * 3
            + ["reject", "edit_entry", "undo", "decide", "decide", "edit_decision", "supersede", "archive"]
            + ["retype", "remember", "remember", "remember", "edit_memory", "archive_memory", "pin"]
            + ["session", "session"]
        )
        try:
            if action == "submit":
                services.entry_submit(
                    project=p,
                    agent_name=rng.choice(AGENTS),
                    slug=f"entry-{self.n}",
                    type=rng.choice(["architectural", "scope", "technical", "learning", "pattern", "update"]),
                    title=self.text(3),
                    content=self.text(),
                    rationale=rng.choice(["", self.text(4)]),
                    tags=rng.choice(["", "cache", "cache,queue"]),
                )
            elif action == "merge" and (pk := self.pick(pending)):
                services.entry_merge(project=p, entry_id=pk, by="lead", keep_both=True, confirm_flagged=True)
            elif action == "reject" and (pk := self.pick(pending)):
                services.entry_reject(project=p, entry_id=pk, by="lead", reason=self.text(2))
            elif action == "edit_entry" and (pk := self.pick(pending)):
                services.entry_edit(project=p, entry_id=pk, by="lead", content=self.text())
            elif action == "undo" and (
                pk := self.pick(InboxEntry.objects.filter(project=p).exclude(status="pending"))
            ):
                services.entry_undo(project=p, entry_id=pk, by="lead")
            elif action == "decide":
                old = self.pick(active) if rng.random() < 0.3 else None
                services.decision_create(
                    project=p,
                    agent_name=rng.choice(AGENTS),
                    type=rng.choice(["architectural", "scope", "process", "technical"]),
                    title=self.text(3),
                    content=self.text(),
                    rationale=self.text(3),
                    supersedes=[old] if old else [],
                    by="lead",
                )
            elif action == "edit_decision" and (pk := self.pick(Decision.objects.filter(project=p))):
                services.decision_edit(project=p, decision_id=pk, by="lead", title=self.text(3))
            elif action == "supersede" and (old := self.pick(active)) and (new := self.pick(active)):
                services.decision_supersede(project=p, decision_id=old, superseded_by_id=new, by="lead")
            elif action == "archive" and (pk := self.pick(active)):
                services.decision_archive(project=p, decision_id=pk, by="lead")
            elif action == "retype" and (pk := self.pick(Decision.objects.filter(project=p))):
                services.decisions_retype(
                    project=p, decision_ids=[pk], type=rng.choice(["scope", "process"]), by="l"
                )
            elif action == "remember":
                services.memory_record(
                    project=p,
                    agent_name=rng.choice(AGENTS),
                    type=rng.choice(["learning", "pattern", "core_context", "update"]),
                    content=self.text(),
                )
            elif action == "edit_memory" and (pk := self.pick(memories)):
                services.memory_edit(project=p, memory_id=pk, by="lead", content=self.text())
            elif action == "archive_memory" and (pk := self.pick(memories)):
                services.memory_archive(project=p, memory_id=pk, by="lead")
            elif action == "pin" and (pk := self.pick(memories)):
                services.memory_edit(project=p, memory_id=pk, by="lead", pinned=rng.random() < 0.5)
            elif action == "session":
                if rng.random() < 0.3:
                    services.session_start(project=p, session_id=f"s{self.n}", focus_area=self.text(2))
                else:
                    services.session_update_current(
                        project=p,
                        focus_area=self.text(2),
                        active_issues=[f"#{rng.randint(1, 9)}"],
                        end=rng.random() < 0.2,
                    )
        except services.LedgerError:
            pass


def run_batches(project: Project, workspace: Path, tmp_path: Path, seed: int, *, copy: bool) -> None:
    writer = Writer(project, seed)
    for batch in range(8):
        for _ in range(writer.rng.randint(1, 6)):
            writer.one()
        into = tmp_path / f"full-{batch}"
        if copy:
            shutil.copytree(workspace, into)
        else:
            into.mkdir()
        expected = full_export(project, into)
        # The export after a write (folders unchanged since are not listed), and one of a sync.
        report = mirror.export_project(project, every=batch % 2 == 1)
        assert report.ok, report.as_dict()
        assert files_of(workspace) == expected, f"seed {seed}, batch {batch}"
        assert not MirrorChange.objects.filter(project=project).exists()
        # The rows a splice remembered for the next export are those its lines say.
        remembered = list(pieces._written.items())
        pieces._written.clear()
        for lines, entries in remembered:
            assert pieces.Entries.read(lines) == entries, f"seed {seed}, batch {batch}"


@pytest.fixture
def workspace(project: Project, tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    project.workspace = str(root)
    project.save()
    return root


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_writes_export_as_a_full_export_does(project, workspace, tmp_path, seed):
    mirror.export_project(project)
    run_batches(project, workspace, tmp_path, seed, copy=False)


@pytest.mark.parametrize("seed", [4, 5])
def test_random_writes_beside_a_squad_team_export_as_a_full_export_does(
    project, workspace, tmp_path, settings, seed
):
    settings.CANON_DATA_DIR = tmp_path / "data"
    write_squad_team(workspace, log_lines=120, agents=3, seed=seed)
    mirror.sync_project(project, trigger="command")
    assert MirrorFile.objects.filter(project=project, adopted_at__isnull=False).exists()
    run_batches(project, workspace, tmp_path, seed, copy=True)


# ---------------------------------------------------------------------------------------------
# What the routine export looks at


def test_a_write_has_the_export_look_at_its_kind_of_file_alone(project, workspace, monkeypatch):
    services.decision_create(project=project, agent_name="lead", type="scope", title="T", content="C", by="l")
    services.memory_record(project=project, agent_name="Alice", type="learning", content="Old.")
    mirror.export_project(project)
    looked: list[str] = []
    real = mirror_export.targets

    def watching(kind: str, *args: Any, **kwargs: Any) -> Any:
        looked.append(kind)
        return real(kind, *args, **kwargs)

    monkeypatch.setattr(mirror_export, "targets", watching)
    assert mirror.export_project(project).written == []
    assert looked == []
    services.memory_record(project=project, agent_name="Alice", type="learning", content="New.")
    report = mirror.export_project(project)
    # The memory's own history, found from the memory alone: no kind of file looked at whole.
    assert looked == [] and report.written == [".squad/agents/alice/history.md"]
    services.memory_record(project=project, agent_name="Bob", type="learning", content="First.")
    report = mirror.export_project(project)
    # A new home among the agents' histories: every history is looked at.
    assert looked == [changes.MEMORY] and report.written == [".squad/agents/bob/history.md"]
    services.entry_submit(project=project, agent_name="Bob", slug="one", type="scope", content="X.")
    report = mirror.export_project(project)
    # The entry alone, not every pending entry.
    assert looked == [changes.MEMORY, changes.ENTRY] and report.written == [".squad/decisions/inbox/one.md"]


def test_the_rows_that_did_not_change_keep_the_text_the_file_holds(project, workspace, tmp_path, monkeypatch):
    for n in range(5):
        services.decision_create(
            project=project, agent_name="lead", type="scope", title=f"T{n}", content="C", by="l"
        )
    mirror.export_project(project)
    drawn: list[int] = []
    real = render.decision_text

    def drawing(decision: Any, by_id: Any) -> str:
        drawn.append(decision.pk)
        return real(decision, by_id)

    monkeypatch.setattr(render, "decision_text", drawing)
    spliced: list[bool] = []
    real_splice = splice.resplice

    def splicing(*args: Any, **kwargs: Any) -> Any:
        found = real_splice(*args, **kwargs)
        spliced.append(found is not None)
        return found

    monkeypatch.setattr(splice, "resplice", splicing)
    last = Decision.objects.filter(project=project).order_by("pk").last()
    assert last is not None
    services.decision_edit(project=project, decision_id=last.pk, by="lead", content="Changed.")
    assert mirror.export_project(project).written == [
        ".agentweaver/context/boundaries.md",
        ".squad/decisions.md",
    ]
    # Both files were the ones Canon wrote with the one decision taken out and put back.
    assert drawn == [last.pk] and spliced == [True, True]
    assert "Changed." in (workspace / ".squad/decisions.md").read_text()
    full = tmp_path / "full"
    full.mkdir()
    assert full_export(project, full) == files_of(workspace)


def test_a_row_that_grew_changes_its_own_line_of_the_pieces_alone(project, workspace):
    """Each line says where its row's text stands from the end of the row before: the rows after one
    that changed length keep their lines, so what is stored of them does not change."""
    for n in range(6):
        services.decision_create(
            project=project, agent_name="lead", type="scope", title=f"T{n}", content="C", by="l"
        )
    mirror.export_project(project)

    def lines() -> dict[str, str]:
        row = MirrorFile.objects.get(project=project, path=".squad/decisions.md")
        return {line.split("\t")[0]: line for line in row.pieces["rows"].splitlines()}

    before = lines()
    first = Decision.objects.filter(project=project).order_by("pk").first()
    assert first is not None
    services.decision_edit(project=project, decision_id=first.pk, by="lead", content="Much longer now. " * 9)
    assert ".squad/decisions.md" in mirror.export_project(project).written
    after = lines()
    key = f"decision:{first.pk}"
    assert after.keys() == before.keys() and after[key] != before[key]
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
    text = (workspace / ".squad/decisions.md").read_text(encoding="utf-8")
    assert text.count("Much longer now.") == 9


def test_a_file_changed_in_the_workspace_is_looked_at_again(project, workspace):
    services.entry_submit(project=project, agent_name="Bob", slug="one", type="scope", content="X.")
    mirror.export_project(project)
    inbox = workspace / ".squad/decisions/inbox/one.md"
    inbox.unlink()
    report = mirror.export_project(project)
    assert report.written == [".squad/decisions/inbox/one.md"] and inbox.exists()
    inbox.write_text(inbox.read_text() + "A person's line.\n")
    report = mirror.export_project(project)
    assert [p for p, _ in report.kept] == [".squad/decisions/inbox/one.md"]
    # Kept at every export, as long as it stays so.
    assert [p for p, _ in mirror.export_project(project).kept] == [".squad/decisions/inbox/one.md"]


def test_the_export_after_a_write_lists_only_the_folders_that_changed(project, workspace, monkeypatch):
    services.entry_submit(project=project, agent_name="Bob", slug="one", type="scope", content="X.")
    decision = services.decision_create(
        project=project, agent_name="lead", type="scope", title="T", content="C", by="l"
    )
    mirror.export_project(project)
    listed: list[str] = []
    real = fs.Workspace.survey

    def survey(self: fs.Workspace, folder: str, **kwargs: Any) -> dict[str, str]:
        listed.append(folder)
        return real(self, folder, **kwargs)

    monkeypatch.setattr(fs.Workspace, "survey", survey)
    inbox = workspace / ".squad/decisions/inbox"
    services.decision_edit(project=project, decision_id=decision.pk, by="lead", content="Edited.")
    report = mirror.export_project(project, every=False)
    assert ".squad/decisions.md" in report.written and listed == []

    # A file removed, and a temporary file a crash left: the inbox folder changed, so it is listed.
    (inbox / "one.md").unlink()
    (inbox / ".canon.two.md.abcdefgh.tmp").write_text("half")
    report = mirror.export_project(project, every=False)
    assert listed == [".squad/decisions/inbox"] and report.written == [".squad/decisions/inbox/one.md"]
    assert sorted(p.name for p in inbox.iterdir()) == ["one.md"]

    # The log, which people and Squad edit in place, is looked at alone in a folder that did not change.
    log = workspace / ".squad/decisions.md"
    with log.open("a", encoding="utf-8") as appended:
        appended.write("\n### 2026-11-27: Appended by the Scribe\n\n**By:** Juno\n\nA team's block.\n")
    services.entry_submit(project=project, agent_name="Bob", slug="two", type="scope", content="Y.")
    listed.clear()
    report = mirror.export_project(project, every=False)
    assert [p for p, _ in report.kept] == [".squad/decisions.md"] and ".squad" not in listed

    # An inbox file edited in place leaves its folder as it was: the export of a sync, which lists every
    # folder, finds it (and its import adopts it).
    one = inbox / "one.md"
    one.write_text(one.read_text() + "A person's line.\n")
    services.entry_edit(project=project, entry_id=_entry(project, "one").pk, by="lead", content="Edited.")
    report = mirror.export_project(project, every=False)
    assert ".squad/decisions/inbox/one.md" in [p for p, _ in report.kept]  # read before it is replaced
    listed.clear()
    report = mirror.export_project(project)
    assert ".squad/decisions/inbox" in listed and ".squad" in listed


def test_the_export_after_a_write_reads_the_manifest_of_the_entries_it_touches(
    project, workspace, monkeypatch
):
    for n in range(4):
        services.entry_submit(project=project, agent_name="Bob", slug=f"e{n}", type="scope", content=f"{n}.")
    mirror.export_project(project)
    read: list[list[str]] = []
    real_states = manifest.states_where

    def states_where(project: Project, where: Any) -> dict[str, Any]:
        found = real_states(project, where)
        read.append(sorted(path for path in found if "/inbox/" in path))
        return found

    monkeypatch.setattr(manifest, "states_where", states_where)
    inbox = ".squad/decisions/inbox"
    services.entry_edit(project=project, entry_id=_entry(project, "e1").pk, by="lead", content="Edited.")
    report = mirror.export_project(project, every=False)
    assert report.written == [f"{inbox}/e1.md"] and read == [[f"{inbox}/e1.md"]]
    # The files it did not read count as unchanged, as an export reading them would find them.
    others = MirrorFile.objects.filter(project=project).count() - 1
    assert report.as_dict()["unchanged"] == others and f"1 written, {others} unchanged" in report.summary()

    # An entry decided: its file leaves the inbox.
    services.entry_reject(project=project, entry_id=_entry(project, "e2").pk, by="lead")
    read.clear()
    report = mirror.export_project(project, every=False)
    assert report.removed == [f"{inbox}/e2.md"] and read == [[f"{inbox}/e2.md"]]

    # An entry edited while the export runs (after it read the inbox's manifest): its file is read too.
    real_keep = decided.keep_team_text

    def meanwhile(project: Project, found: Any) -> None:
        services.entry_edit(project=project, entry_id=_entry(project, "e3").pk, by="lead", content="Now.")
        real_keep(project, found)

    monkeypatch.setattr(decided, "keep_team_text", meanwhile)
    services.entry_edit(project=project, entry_id=_entry(project, "e0").pk, by="lead", content="Zero.")
    read.clear()
    report = mirror.export_project(project, every=False)
    assert report.written == [f"{inbox}/e0.md", f"{inbox}/e3.md"] and not report.kept
    assert read == [[f"{inbox}/e0.md"], [f"{inbox}/e3.md"]]
    monkeypatch.undo()
    full = workspace.parent / "full"
    full.mkdir()
    assert full_export(project, full) == files_of(workspace)


def _entry(project: Project, slug: str) -> InboxEntry:
    return InboxEntry.objects.get(project=project, slug=slug)


def test_without_its_triggers_the_export_looks_at_every_file(project, workspace, caplog):
    services.decision_create(project=project, agent_name="lead", type="scope", title="T", content="C", by="l")
    mirror.export_project(project)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("DROP TRIGGER ledger_mirror_decision_update")
        else:
            cursor.execute("DROP TRIGGER ledger_mirror_decision ON ledger_decision")
    decision = Decision.objects.get(project=project)
    services.decision_edit(project=project, decision_id=decision.pk, by="lead", content="Unrecorded.")
    assert not MirrorChange.objects.filter(project=project, kind=changes.DECISION).exists()
    report = mirror.export_project(project)
    assert ".squad/decisions.md" in report.written
    assert "triggers are missing" in caplog.text


@pytest.mark.django_db
def test_every_trigger_of_the_migration_is_there():
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'ledger_mirror_%'"
            )
        else:
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgname LIKE 'ledger_mirror_%' AND NOT tgisinternal"
            )
        names = sorted(row[0] for row in cursor.fetchall())
    assert len(names) == changes.TRIGGERS[connection.vendor], names


def test_a_write_to_a_project_without_a_workspace_records_no_change(project):
    services.decision_create(project=project, agent_name="lead", type="scope", title="T", content="C", by="l")
    assert not MirrorChange.objects.exists()


def test_a_full_export_repairs_what_a_write_outside_the_services_left_behind(project, workspace):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="Before.")
    mirror.export_project(project)
    history = workspace / ".squad/agents/alice/history.md"
    # Written as no service writes: its modification time left as it was, so its text looks the same.
    AgentMemory.objects.filter(pk=memory.pk).update(content="After.")
    assert mirror.export_project(project).written == []
    assert "Before." in history.read_text()
    assert mirror.export_project(project, full=True).written == [".squad/agents/alice/history.md"]
    assert "After." in history.read_text()


def test_whether_patterns_md_holds_a_memory_is_asked_of_its_pieces(project, workspace):
    patterns = [
        services.memory_record(project=project, agent_name="Rai", type="pattern", content=f"Pattern {n}.")
        for n in range(12)
    ]
    services.memory_record(project=project, agent_name="Rai", type="learning", content="Not a pattern.")
    mirror.export_project(project)
    first, twelfth = patterns[0].pk, patterns[11].pk
    assert partial._listed_in(project, PATTERNS, {f"agentmemory:{first}"})
    assert partial._listed_in(project, PATTERNS, {"agentmemory:0", f"agentmemory:{twelfth}"})
    # A key another key starts with is not taken for it.
    missing = max(m.pk for m in AgentMemory.objects.all()) + 1
    assert not partial._listed_in(project, PATTERNS, {f"agentmemory:{missing}", "agentmemory:"})
    assert not partial._listed_in(project, ".squad/decisions.md", {f"agentmemory:{first}"})
