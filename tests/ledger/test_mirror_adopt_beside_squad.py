"""Import beside Squad's own program: what its commands leave in `.squad/` is read as they meant it.

- `squad nap` moves old blocks from `decisions.md` into `decisions-archive.md`: their decisions are
  archived, never written back into the log, and blocks Canon never held are kept as archived history;
- `squad scrub-emails` edits lines in place: the edited line supersedes the memory it was;
- `squad memory write --class DECISION` drops a front-matter file into the inbox: it is a proposal;
- a stray control character (a NUL an editor left) is dropped from the row and reported; the file is read.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from ledger import context, mirror, services
from ledger.models import AgentMemory, Decision, DecisionStatus, InboxEntry, MemoryStatus, Project


@pytest.fixture
def workspace(tmp_path: Path, project: Project) -> Path:
    project.workspace = str(tmp_path)
    project.save()
    (tmp_path / ".squad").mkdir()
    return tmp_path


def sync(project: Project) -> tuple[mirror.ImportReport, mirror.ExportReport]:
    return mirror.import_project(project), mirror.export_project(project)


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def nap_archive(log: Path, archive: Path, older_than: datetime) -> int:
    """What `squad nap` does to a log over 20 KB: every `###` entry whose first date is older than
    `older_than` is appended to the archive (entries joined by a newline) and the log keeps the rest, its
    header first. Not aware of fenced code, like nap itself. Returns how many entries moved."""
    lines = log.read_text(encoding="utf-8").split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r"^###\s", line)]
    entries = [(s, e) for s, e in zip(starts, [*starts[1:], len(lines)], strict=True)]
    old, recent = [], []
    for start, end in entries:
        found = re.search(r"(\d{4}-\d{2}-\d{2})", lines[start])
        when = datetime.fromisoformat(found.group(1)).replace(tzinfo=UTC) if found else None
        (old if when is not None and when < older_than else recent).append((start, end))
    header = "\n".join(lines[: starts[0]])
    log.write_text(
        header + "\n" + "\n".join("\n".join(lines[s:e]) for s, e in recent) + "\n", encoding="utf-8"
    )
    with archive.open("a", encoding="utf-8") as out:
        out.write("\n".join("\n".join(lines[s:e]) for s, e in old) + "\n")
    return len(old)


def test_blocks_nap_moved_to_the_archive_archive_their_decisions(project, workspace):
    long_ago = timezone.now() - timedelta(days=90)
    old = [
        services.decision_create(
            project=project,
            agent_name="Marlow",
            type="technical",
            title=f"Retry uploads {n} times",
            content=f"Uploads retry {n} times with jitter.\n\n## Details\n\nSee the runbook.",
            by="Marlow",
        )
        for n in (2, 3)
    ]
    Decision.objects.filter(pk__in=[d.pk for d in old]).update(created_at=long_ago)
    recent = services.decision_create(
        project=project,
        agent_name="Juno",
        type="architectural",
        title="Queue jobs in PostgreSQL",
        content="Jobs are rows claimed with SKIP LOCKED.",
        by="Juno",
    )
    sync(project)
    log = workspace / ".squad/decisions.md"
    archive = workspace / ".squad/decisions-archive.md"
    archive.write_text(
        "# Decisions archive\n\n### 2025-01-04: Ship on Tuesdays\n**By:** Rai\n\nReleases go out on Tuesdays.\n",
        encoding="utf-8",
    )
    assert nap_archive(log, archive, timezone.now() - timedelta(days=30)) == 2
    before = snapshot(workspace)

    report, export = sync(project)

    assert {d.pk: d.status for d in Decision.objects.filter(pk__in=[d.pk for d in old])} == {
        d.pk: DecisionStatus.ARCHIVED for d in old
    }
    Decision.objects.get(pk=recent.pk, status=DecisionStatus.ACTIVE)
    kept = Decision.objects.get(title="Ship on Tuesdays")
    assert (kept.status, kept.origin, kept.agent.name) == (
        DecisionStatus.ARCHIVED,
        ".squad/decisions-archive.md",
        "Rai",
    )
    assert [path for path, _ in report.archived] == [".squad/decisions-archive.md"]
    # Nothing moves back into the log, and the archive is the team's: Canon never writes it.
    assert snapshot(workspace) == before, export.written
    assert "Retry uploads" not in log.read_text(encoding="utf-8")
    assert sync(project)[1].written == []
    assert snapshot(workspace) == before
    # The archived decisions are history, not context.
    block = context.compile(project, "Juno").text or ""
    assert "Retry uploads" not in block and "Ship on Tuesdays" not in block


def test_a_line_edited_in_place_supersedes_its_memory(project, workspace):
    memory = services.memory_record(
        project=project,
        agent_name="Marlow",
        type="learning",
        importance="high",
        tags=["sync"],
        content="Ask marlow.ops@tidepool.dev before touching the sync schema.",
    )
    other = services.memory_record(
        project=project, agent_name="Marlow", type="learning", content="Regenerate fixtures from the schema."
    )
    sync(project)
    history = next((workspace / ".squad/agents").glob("*/history.md"))
    text = history.read_text(encoding="utf-8")
    assert "marlow.ops@tidepool.dev" in text
    # What `squad scrub-emails` does to a line holding an address.
    history.write_text(text.replace("marlow.ops@tidepool.dev", "[email scrubbed]"), encoding="utf-8")

    report, _ = sync(project)

    memory.refresh_from_db()
    replacement = AgentMemory.objects.get(status=MemoryStatus.ACTIVE, content__contains="[email scrubbed]")
    assert (memory.status, memory.superseded_by_id) == (MemoryStatus.SUPERSEDED, replacement.pk)
    assert AgentMemory.objects.get(pk=other.pk).status == MemoryStatus.ACTIVE
    assert len(report.edited) == 1
    assert (replacement.importance, replacement.tags) == ("high", ["sync"])
    block = context.compile(project, "Marlow").text or ""
    assert "tidepool.dev" not in block and "[email scrubbed]" in block
    # The file is as the scrub left it, and stays so.
    assert "tidepool.dev" not in history.read_text(encoding="utf-8")
    assert sync(project)[1].written == []


def test_a_line_replaced_by_different_text_is_not_an_edit(project, workspace):
    memory = services.memory_record(
        project=project, agent_name="Marlow", type="learning", content="Retries need 0-500 ms of jitter."
    )
    sync(project)
    history = next((workspace / ".squad/agents").glob("*/history.md"))
    history.write_text(
        history.read_text(encoding="utf-8").replace(
            "Retries need 0-500 ms of jitter.", "The gateway caches tokens for an hour."
        ),
        encoding="utf-8",
    )
    report, _ = sync(project)
    assert report.edited == []
    assert AgentMemory.objects.get(pk=memory.pk).status == MemoryStatus.ACTIVE


def test_a_squad_memory_write_inbox_file_is_a_proposal(project, workspace):
    inbox = workspace / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    (inbox / "marlow-queue-jobs-in-postgres-3f9c2a1b.md").write_text(
        "---\n"
        "id: 3f9c2a1b-7d44-4e0a-9a51-0c2f3c1d8e77\n"
        "class: DECISION\n"
        "loadGuidance:\n  - ALWAYS\n"
        "title: Queue jobs in PostgreSQL\n"
        "author: Marlow\n"
        "createdAt: '2026-11-26T11:04:35.120Z'\n"
        "metadata: {}\n"
        "---\n\n"
        "Jobs are rows claimed with SELECT … FOR UPDATE SKIP LOCKED; one database to back up.\n",
        encoding="utf-8",
    )
    report = mirror.import_project(project)
    entry = InboxEntry.objects.get()
    assert report.created == [entry.slug]
    assert (entry.agent.name, entry.title, entry.status) == ("Marlow", "Queue jobs in PostgreSQL", "pending")
    assert "SKIP LOCKED" in entry.content
    assert entry.created_at == datetime(2026, 11, 26, 11, 4, 35, 120000, tzinfo=UTC)


def test_a_stray_control_character_is_dropped_and_reported_not_a_refusal(project, workspace):
    folder = workspace / ".squad/agents/rai"
    folder.mkdir(parents=True)
    history = folder / "history.md"
    data = (
        "# Rai — History\n\n## Learnings\n\n"
        "- The upload worker retries three times\x00 before it gives up.\n"
        "- Colour codes like \x1b[31m leak into logs; strip them.\n"
    ).encode()
    history.write_bytes(data)

    report, _ = sync(project)

    assert [path for path, _ in report.cleaned] == [".squad/agents/rai/history.md"]
    assert "U+0000 on line 5" in report.cleaned[0][1] and "U+001B on line 6" in report.cleaned[0][1]
    contents = sorted(AgentMemory.objects.values_list("content", flat=True))
    assert contents == [
        "Colour codes like [31m leak into logs; strip them.",
        "The upload worker retries three times before it gives up.",
    ]
    # The file is the team's: not one byte changes, now or at the next sync.
    assert history.read_bytes() == data
    assert sync(project)[1].written == []
    assert history.read_bytes() == data


def test_a_new_file_under_a_decided_files_name_is_a_new_proposal(project, workspace):
    inbox = workspace / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    name = "marlow-user-directive.md"
    # `squad_decide` names its files `{author}-{summary}.md`: the same summary twice, the same name.
    first = "### 2026-11-20T09-12-40: User directive\n**By:** Marlow\n**What:** User directive\n\n**Why:** No Friday deploys."
    (inbox / name).write_text(first, encoding="utf-8")
    mirror.import_project(project)
    entry = InboxEntry.objects.get()
    services.entry_reject(project=project, entry_id=entry.pk, by="kestrel", reason="Too broad.")
    mirror.export_project(project)
    assert not (inbox / name).exists()

    second = "### 2026-11-26T15-02-11: User directive\n**By:** Marlow\n**What:** User directive\n\n**Why:** Tag every release."
    (inbox / name).write_text(second, encoding="utf-8")
    report, _ = sync(project)

    assert report.conflicts == []
    new = InboxEntry.objects.exclude(pk=entry.pk).get()
    assert (new.status, new.file, new.rationale) == ("pending", name, "Tag every release.")
    assert new.slug == "marlow-user-directive--marlow"
    entry.refresh_from_db()
    assert (entry.status, entry.file, entry.rationale) == ("rejected", "", "No Friday deploys.")
    assert (inbox / name).read_text(encoding="utf-8") == second
    assert sync(project)[0].created == []


def test_a_pending_entrys_file_edited_stays_a_conflict(project, workspace):
    inbox = workspace / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    path = inbox / "juno-colour-tokens.md"
    path.write_text("# Juno — colour tokens\n**Author:** Juno\n\nFive tokens.\n", encoding="utf-8")
    mirror.import_project(project)
    path.write_text("# Juno — colour tokens\n**Author:** Juno\n\nSix tokens.\n", encoding="utf-8")
    report = mirror.import_project(project)
    assert [p for p, _ in report.conflicts] == [".squad/decisions/inbox/juno-colour-tokens.md"]
    assert InboxEntry.objects.count() == 1


@pytest.mark.parametrize("decision", ["merge", "reject"])
def test_a_decided_file_squad_merged_before_canons_export_is_not_a_second_decision(
    project, workspace, decision
):
    inbox = workspace / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    log = workspace / ".squad/decisions.md"
    log.write_text("# Squad Decisions\n\n## Active Decisions\n", encoding="utf-8")
    text = (
        "### 2026-11-26T09-30-00: Store positions as PostGIS points\n**By:** Marlow\n"
        "**What:** Store positions as PostGIS points\n\n**Why:** The map queries by bounding box around Bodø."
    )
    (inbox / "marlow-store-positions-as-postgis-points.md").write_text(text, encoding="utf-8")
    sync(project)
    entry = InboxEntry.objects.get()
    if decision == "merge":
        services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")
    else:
        services.entry_reject(project=project, entry_id=entry.pk, by="kestrel", reason="Not yet.")
    # `squad nap` runs before Canon's export does: the file goes into the log, as it is, and leaves the inbox.
    with log.open("a", encoding="utf-8") as out:
        out.write("\n" + text.rstrip() + "\n")
    (inbox / "marlow-store-positions-as-postgis-points.md").unlink()

    report, _ = sync(project)

    assert log.read_text(encoding="utf-8").count("Store positions as PostGIS points\n**By:**") == 1
    entry.refresh_from_db()
    if decision == "merge":
        assert Decision.objects.count() == 1
        assert entry.decision is not None and entry.decision.markdown == text + "\n"
        assert entry.decision.status == DecisionStatus.ACTIVE
        assert [p for p, _ in report.merged] == [
            ".squad/decisions/inbox/marlow-store-positions-as-postgis-points.md"
        ]
    else:
        (kept,) = Decision.objects.all()
        assert kept.status == DecisionStatus.ARCHIVED and kept.markdown == text + "\n"
    before = snapshot(workspace)
    assert sync(project)[1].written == []
    assert snapshot(workspace) == before


def nap_compress(history: Path, keep: int = 5) -> None:
    """What `squad nap` does to a history over 15 KB: Core Context and the last `keep` other `##`
    sections stay; the others are appended to `history-archive.md` beside it."""
    lines = history.read_text(encoding="utf-8").split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r"^##\s", line)]
    sections = list(zip(starts, [*starts[1:], len(lines)], strict=True))
    core = [s for s in sections if re.match(r"^##\s+Core\s+Context", lines[s[0]], re.IGNORECASE)]
    others = [s for s in sections if s not in core]
    moved, kept = others[:-keep], others[-keep:]
    archive = history.with_name("history-archive.md")
    with archive.open("a", encoding="utf-8") as out:
        out.write("\n".join(line for s, e in moved for line in [*lines[s:e], ""]) + "\n")
    head = lines[: starts[0]]
    history.write_text(
        "\n".join([*head, *(line for s, e in [*core, *kept] for line in lines[s:e])]), encoding="utf-8"
    )


def test_memories_nap_moved_to_a_history_archive_are_archived(project, workspace):
    folder = workspace / ".squad/agents/marlow"
    folder.mkdir(parents=True)
    history = folder / "history.md"
    sprints = "".join(
        f"## Sprint {n}\n\n- Sprint {n} shipped the {word} screen; see the review notes.\n\n"
        for n, word in enumerate(["tide", "berth", "crew", "fuel", "catch"], start=1)
    )
    history.write_text(
        "# Marlow — History\n\n## Core Context\n\n- Owns the sync service.\n\n"
        "## Learnings\n\n- Retries need 0-500 ms of jitter.\n\n" + sprints,
        encoding="utf-8",
    )
    sync(project)
    old = services.memory_record(
        project=project, agent_name="marlow", type="learning", content="Regenerate fixtures from the schema."
    )
    sync(project)
    assert "Regenerate fixtures" in history.read_text(encoding="utf-8")
    adopted = AgentMemory.objects.get(content="Retries need 0-500 ms of jitter.")

    nap_compress(history)
    assert "Regenerate fixtures" in (folder / "history-archive.md").read_text(encoding="utf-8")
    before = snapshot(workspace)
    report, _ = sync(project)

    assert {m.pk: m.status for m in AgentMemory.objects.filter(pk__in=[old.pk, adopted.pk])} == {
        old.pk: MemoryStatus.ARCHIVED,
        adopted.pk: MemoryStatus.ARCHIVED,
    }
    assert AgentMemory.objects.get(content="Owns the sync service.").status == MemoryStatus.ACTIVE
    assert [path for path, _ in report.archived] == [".squad/agents/marlow/history-archive.md"]
    assert snapshot(workspace) == before
    assert sync(project)[1].written == []
