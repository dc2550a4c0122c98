"""Import of hand-written inbox files (docs/mirror.md), with the files people and agents really produce."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ledger import mirror, services
from ledger.models import InboxEntry, Project

GOOD = "---\nagent: Dave\nslug: use-queues\ntype: architectural\ntitle: Use queues\n---\nUse a queue.\n\n**Rationale:** Decoupling.\n"


@pytest.fixture
def inbox(tmp_path: Path, project: Project) -> Path:
    project.workspace = str(tmp_path)
    project.save()
    folder = tmp_path / ".squad/decisions/inbox"
    folder.mkdir(parents=True)
    return folder


def write(inbox: Path, name: str, data: str | bytes) -> None:
    path = inbox / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


def reasons(report) -> dict[str, str]:
    return {Path(p).name: r for p, r in report.skipped}


def test_import_creates_a_pending_entry_with_source_import(project, inbox):
    write(inbox, "use-queues.md", GOOD)
    report = mirror.import_project(project)
    assert report.created == ["use-queues"]
    entry = InboxEntry.objects.get()
    assert (
        entry.agent.name,
        entry.type,
        entry.title,
        entry.content,
        entry.rationale,
        entry.source,
        entry.status,
    ) == ("Dave", "architectural", "Use queues", "Use a queue.", "Decoupling.", "import", "pending")


def test_import_twice_creates_once(project, inbox):
    write(inbox, "use-queues.md", GOOD)
    mirror.import_project(project)
    report = mirror.import_project(project)
    assert report.created == [] and len(report.unchanged) == 1
    assert InboxEntry.objects.count() == 1


@pytest.mark.parametrize(
    "data",
    [
        "\ufeff" + GOOD,
        GOOD.replace("\n", "\r\n"),
        "\n\n\n" + GOOD,
        GOOD.replace("title: Use queues\n", "title: Use queues\nowner: ops\npriority: 3\n"),
        GOOD.replace("agent: Dave", 'agent: "Dave"').replace("title: Use queues", "title: 'Use queues'"),
    ],
    ids=["bom", "crlf", "leading-blank-lines", "extra-keys", "quoted-values"],
)
def test_real_world_variants_import(project, inbox, data):
    write(inbox, "use-queues.md", data)
    report = mirror.import_project(project)
    assert report.created == ["use-queues"], report.skipped
    entry = InboxEntry.objects.get()
    assert (entry.content, entry.rationale) == ("Use a queue.", "Decoupling.")


def test_title_with_a_colon(project, inbox):
    write(inbox, "a.md", '---\nagent: Dave\nslug: a\ntype: scope\ntitle: "Scope: v1 only"\n---\nBody.\n')
    mirror.import_project(project)
    assert InboxEntry.objects.get().title == "Scope: v1 only"


def test_each_bad_file_is_skipped_with_its_reason(project, inbox, tmp_path):
    write(
        inbox,
        "python.md",
        "---\nagent: !!python/object/apply:os.system ['echo pwned']\nslug: p\ntype: scope\ntitle: t\n---\nx\n",
    )
    write(inbox, "latin1.md", GOOD.replace("Use a queue.", "Caf\xe9").encode("latin-1"))
    write(inbox, "huge.md", GOOD + "x" * (10 * 1024 * 1024))
    write(inbox, "empty.md", "")
    write(inbox, "no-body.md", "---\nagent: Dave\nslug: nb\ntype: scope\ntitle: t\n---\n")
    write(inbox, "missing-key.md", "---\nagent: Dave\nslug: mk\ntitle: t\n---\nx\n")
    write(inbox, "bad-type.md", "---\nagent: Dave\nslug: bt\ntype: opinion\ntitle: t\n---\nx\n")
    write(inbox, "bad-slug.md", "---\nagent: Dave\nslug: '!!!'\ntype: scope\ntitle: t\n---\nx\n")
    (inbox / "x.md").mkdir()
    os.symlink("/etc/passwd", inbox / "passwd.md")
    report = mirror.import_project(project)
    got = reasons(report)
    assert "YAML" in got["python.md"]
    assert got["latin1.md"] == "not UTF-8"
    assert got["huge.md"] == "too large (over 262144 bytes)"
    assert got["empty.md"] == "empty file"
    assert got["no-body.md"] == "no content after the front matter"
    assert got["missing-key.md"] == "missing key: type"
    assert got["bad-type.md"].startswith("bad type")
    assert got["bad-slug.md"].startswith("bad slug")
    assert got["x.md"] == "not a regular file"
    assert got["passwd.md"] == "a symbolic link"
    assert report.created == []
    assert not InboxEntry.objects.exists()


def test_existing_row_is_never_changed_and_a_different_text_is_a_conflict(project, inbox):
    services.entry_submit(
        project=project, agent_name="Alice", slug="use-queues", type="scope", content="Original."
    )
    write(inbox, "use-queues.md", GOOD)
    report = mirror.import_project(project)
    assert [Path(p).name for p, _ in report.conflicts] == ["use-queues.md"]
    entry = InboxEntry.objects.get()
    assert (entry.content, entry.agent.name, entry.source) == ("Original.", "Alice", "agent")


def test_two_files_claiming_one_slug(project, inbox):
    write(inbox, "a.md", GOOD)
    write(inbox, "b.md", GOOD.replace("Use a queue.", "Another text."))
    report = mirror.import_project(project)
    assert report.created == ["use-queues"]
    assert [Path(p).name for p, _ in report.conflicts] == ["b.md"]
    assert InboxEntry.objects.get().content == "Use a queue."


def test_decided_entry_with_the_same_slug_is_never_reopened(project, inbox):
    entry = services.entry_submit(
        project=project,
        agent_name="Dave",
        slug="use-queues",
        type="architectural",
        title="Use queues",
        content="Use a queue.",
        rationale="Decoupling.",
    ).entry
    services.entry_reject(project=project, entry_id=entry.pk, by="lead")
    write(inbox, "use-queues.md", GOOD)
    mirror.import_project(project)
    assert InboxEntry.objects.get().status == "rejected"


def test_dry_run_creates_nothing(project, inbox):
    write(inbox, "use-queues.md", GOOD)
    assert mirror.import_project(project, dry_run=True).created == ["use-queues"]
    assert not InboxEntry.objects.exists()


def test_symlinked_inbox_folder_is_refused(project, tmp_path, tmp_path_factory):
    project.workspace = str(tmp_path)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "x.md").write_text(GOOD)
    (tmp_path / ".squad/decisions").mkdir(parents=True)
    os.symlink(elsewhere, tmp_path / ".squad/decisions/inbox")
    report = mirror.import_project(project)
    assert report.skipped and "symbolic link" in report.skipped[0][1]
    assert not InboxEntry.objects.exists()


def test_sync_imports_then_exports_without_losing_the_hand_written_file(project, inbox):
    write(inbox, "use-queues.md", GOOD)
    imported, exported = mirror.sync_project(project, trigger="command")
    assert imported.report.created == ["use-queues"]
    assert exported.ok
    text = (inbox / "use-queues.md").read_text()
    assert "Use a queue." in text and "agent: Dave" in text
    assert mirror.import_project(project).unchanged


def _import_queries(project: Project, folder: Path, files: int) -> list[str]:
    """The statements an import of `files` new files by two agents sends."""
    project.workspace = str(folder)
    project.save()
    inbox = folder / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    for i in range(files):
        agent = "Dave" if i % 2 else "Ana Lucía"
        write(inbox, f"q-{i}.md", GOOD.replace("Dave", agent).replace("use-queues", f"use-queues-{i}"))
    with CaptureQueriesContext(connection) as queries:
        report = mirror.import_project(project)
    assert len(report.created) == files
    return [q["sql"] for q in queries.captured_queries]


def test_new_files_by_the_same_agents_ask_for_them_once_and_are_recorded_in_one_insert_each(
    project, tmp_path
):
    few = _import_queries(project, tmp_path / "few", 2)
    other, _ = services.project_create_or_update(slug="other", name="Other")
    many = _import_queries(other, tmp_path / "many", 8)

    def agents(sql: list[str]) -> int:
        return sum('"ledger_agent"' in s for s in sql)

    def manifest_reads(sql: list[str]) -> int:
        return sum(s.startswith("SELECT") and 'FROM "ledger_mirrorfile"' in s for s in sql)

    assert agents(many) == agents(few)
    assert manifest_reads(many) == manifest_reads(few)
    assert sum(s.startswith('UPDATE "ledger_mirrorfile"') for s in many) == 0
    assert sum(s.startswith('INSERT INTO "ledger_mirrorfile"') for s in many) == 8
