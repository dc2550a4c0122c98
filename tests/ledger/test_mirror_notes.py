"""Notes files (docs/mirror.md "Notes files"): an agent's private notes become its memories, the team's
notes go through review, and Canon never writes a byte of either."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from ledger import mirror, services
from ledger.context import compile
from ledger.mirror.adopt.foreign import MAX_IMPORT_BYTES
from ledger.models import (
    AgentMemory,
    AuditEvent,
    EntryStatus,
    InboxEntry,
    MemoryStatus,
    Project,
    Source,
)
from tests.conftest import ApiClient
from tests.squad_fixtures import assert_lines_kept, write_squad_team

RETRIES = """---
type: learning
importance: high
tags: [gateway, retries]
---
# Retries need jitter

Three clients retrying on the same second overloaded the gateway at 09:00 UTC.
Add 0\u2013500 ms of jitter to every retry, and cap the back-off at 30 s.
"""

FIXTURES = """## Fixtures drift

Regenerate the fixtures from the schema (`make fixtures`); never edit them by hand.
"""

CHECKLIST = """---
author: Dallas
importance: high
tags: release
---
# Release checklist

1. Tag from `main` only, after the nightly build is green.
2. Announce the freeze in #releases an hour before.
"""


@pytest.fixture
def root(tmp_path: Path, project: Project, settings) -> Path:
    project.workspace = str(tmp_path)
    project.save()
    settings.CANON_DATA_DIR = tmp_path.parent / f"{tmp_path.name}-data"
    return tmp_path


def private(root: Path, agent: str, name: str, data: str | bytes) -> Path:
    path = root / ".squad/agents" / agent / "memory" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def team(root: Path, name: str, data: str | bytes) -> Path:
    path = root / ".squad/memory" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def index(project: Project) -> mirror.ImportReport:
    return mirror.import_project(project)


def notes_of(path: str) -> list[AgentMemory]:
    return list(AgentMemory.objects.filter(origin=path).order_by("created_at", "id"))


def in_context(project: Project, agent: str) -> list[int]:
    result = compile(project, agent)
    assert result.error is None
    return result.memory.ids


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def paths(pairs: list[tuple[str, str]]) -> list[str]:
    return [path for path, _ in pairs]


def reasons(report: mirror.ImportReport) -> dict[str, str]:
    return {Path(path).name: reason for path, reason in report.skipped}


# ---------------------------------------------------------------------------------------------
# Private notes


def test_a_private_note_becomes_one_memory_of_its_agent(project, root):
    private(root, "Ripley", "retries.md", RETRIES)
    report = index(project)
    path = ".squad/agents/Ripley/memory/retries.md"
    assert paths(report.indexed) == [path]
    memory = AgentMemory.objects.get()
    assert (memory.agent.name, memory.source, memory.type, memory.importance, memory.tags) == (
        "Ripley",
        Source.NOTES,
        "learning",
        "high",
        ["gateway", "retries"],
    )
    assert memory.origin == path
    assert memory.content_sha256 == sha(RETRIES)
    assert memory.content == RETRIES.split("---\n", 2)[2].strip()
    assert memory.markdown == RETRIES
    assert not memory.cross_team
    assert memory.tag_index == ",gateway,retries,"
    assert memory.tokens > 0 and memory.content_key
    assert AuditEvent.objects.filter(action="index", object_id=memory.pk, detail__file=path).exists()


def test_a_note_without_front_matter_is_a_medium_learning(project, root):
    private(root, "Dallas", "fixtures.md", FIXTURES)
    index(project)
    memory = AgentMemory.objects.get()
    assert (memory.type, memory.importance, memory.tags, memory.content) == (
        "learning",
        "medium",
        [],
        FIXTURES.strip(),
    )


def test_front_matter_type_pattern_is_honoured(project, root):
    private(
        root, "Ash", "naming.md", "---\ntype: pattern\nimportance: low\n---\nName queues `{team}.{verb}`.\n"
    )
    index(project)
    assert AgentMemory.objects.values_list("type", "importance").get() == ("pattern", "low")


def test_a_private_note_never_becomes_cross_team(project, root):
    private(
        root, "Ripley", "shared.md", "---\ntags: [cross-team, deploys]\n---\nDeploys freeze on Fridays.\n"
    )
    report = index(project)
    memory = AgentMemory.objects.get()
    assert memory.tags == ["deploys"] and not memory.cross_team
    assert "cross-team tag is ignored" in report.indexed[0][1]


def test_an_unchanged_note_does_nothing_on_the_next_sync(project, root):
    private(root, "Ripley", "retries.md", RETRIES)
    index(project)
    events = AuditEvent.objects.count()
    report = index(project)
    assert report.indexed == [] and report.changed == []
    assert ".squad/agents/Ripley/memory/retries.md" in report.unchanged
    assert AgentMemory.objects.count() == 1
    assert AuditEvent.objects.count() == events
    assert report.notes_summary() == ""


def test_a_changed_note_supersedes_the_one_before(project, root):
    note = private(root, "Ripley", "retries.md", RETRIES)
    index(project)
    note.write_text(RETRIES.replace("0\u2013500 ms", "0\u2013800 ms"), encoding="utf-8")
    report = index(project)
    note.write_text(RETRIES.replace("0\u2013500 ms", "0\u20131000 ms"), encoding="utf-8")
    index(project)
    first, second, third = notes_of(".squad/agents/Ripley/memory/retries.md")
    assert len(report.changed) == 1 and f"superseding memory {first.pk}" in report.changed[0][1]
    assert (first.status, first.superseded_by_id) == (MemoryStatus.SUPERSEDED, second.pk)
    assert (second.status, second.superseded_by_id) == (MemoryStatus.SUPERSEDED, third.pk)
    assert (third.status, third.superseded_by_id) == (MemoryStatus.ACTIVE, None)
    assert "0\u20131000 ms" in third.content
    assert in_context(project, "Ripley") == [third.pk]


def test_a_removed_note_retires_its_memory_and_leaves_the_context(project, root):
    note = private(root, "Ripley", "retries.md", RETRIES)
    private(root, "Ripley", "fixtures.md", FIXTURES)
    index(project)
    retries = AgentMemory.objects.get(origin__endswith="retries.md")
    assert retries.pk in in_context(project, "Ripley")
    note.unlink()
    report = index(project)
    retries.refresh_from_db()
    assert retries.status == MemoryStatus.ARCHIVED
    assert paths(report.retired) == [".squad/agents/Ripley/memory/retries.md"]
    event = AuditEvent.objects.get(action="retire", object_id=retries.pk)
    assert event.detail == {"file": ".squad/agents/Ripley/memory/retries.md"}
    assert (event.from_state, event.to_state, event.via) == ("active", "archived", "import")
    assert retries.pk not in in_context(project, "Ripley")
    assert AgentMemory.objects.count() == 2  # nothing deleted


def test_a_removed_agent_folder_retires_every_note_in_it(project, root):
    private(root, "Ash", "a.md", "Science officer notes.\n")
    private(root, "Ash", "b.md", "Mother answers only to priority one.\n")
    index(project)
    for note in (root / ".squad/agents/Ash/memory").iterdir():
        note.unlink()
    (root / ".squad/agents/Ash/memory").rmdir()
    report = index(project)
    assert len(report.retired) == 2
    assert set(AgentMemory.objects.values_list("status", flat=True)) == {MemoryStatus.ARCHIVED}


def test_a_note_that_comes_back_is_indexed_again(project, root):
    note = private(root, "Ripley", "retries.md", RETRIES)
    index(project)
    note.unlink()
    index(project)
    private(root, "Ripley", "retries.md", RETRIES)
    report = index(project)
    old, new = notes_of(".squad/agents/Ripley/memory/retries.md")
    assert "came back" in report.indexed[0][1]
    assert (old.status, new.status) == (MemoryStatus.ARCHIVED, MemoryStatus.ACTIVE)
    assert in_context(project, "Ripley") == [new.pk]


def test_a_note_a_person_archived_stays_archived(project, root):
    private(root, "Ripley", "retries.md", RETRIES)
    index(project)
    memory = AgentMemory.objects.get()
    services.memory_archive(project=project, memory_id=memory.pk, by="lead")
    report = index(project)
    assert report.indexed == [] and AgentMemory.objects.count() == 1
    memory.refresh_from_db()
    assert memory.status == MemoryStatus.ARCHIVED


def test_a_private_note_is_not_visible_to_another_agent(project, root, make_api: Callable[..., ApiClient]):
    private(root, "Ripley", "retries.md", RETRIES)
    index(project)
    ripley, dallas = make_api("agent", "Ripley"), make_api("agent", "Dallas")
    mine = ripley.get("/memory").json()
    assert [m["content_sha256"] for m in mine] == [sha(RETRIES)]
    assert mine[0]["source"] == "notes"
    assert dallas.get("/memory").json() == []
    assert dallas.get("/memory", q="jitter").json() == []
    assert in_context(project, "Dallas") == []


def test_odd_folder_and_file_names_crlf_and_a_byte_order_mark(project, root):
    crlf_bom = "\ufeff---\r\ntype: update\r\n---\r\n# Hypersleep\r\n\r\nPods 2 and 4 run warm.\r\n"
    private(root, "Lambert (old)", "Navigation — Zeta² Reticuli.md", crlf_bom)
    private(root, "Ash", "日本語のメモ 📌.md", "「ノストロモ号」の航路は変更しない。\n")
    report = index(project)
    assert len(report.indexed) == 2, report.skipped
    lambert = AgentMemory.objects.get(agent__name="Lambert (old)")
    assert lambert.type == "update"
    assert lambert.content == "# Hypersleep\n\nPods 2 and 4 run warm."
    assert lambert.content_sha256 == sha(crlf_bom)
    assert lambert.origin == ".squad/agents/Lambert (old)/memory/Navigation — Zeta² Reticuli.md"
    assert AgentMemory.objects.get(agent__name="Ash").content == "「ノストロモ号」の航路は変更しない。"


def test_a_long_note_is_one_memory(project, root):
    body = "\n\n".join(
        f"## Finding {n}\n\nThe {n}th relay drops packets above 40 °C." for n in range(1, 3500)
    )
    assert MAX_IMPORT_BYTES / 2 < len(body.encode()) < MAX_IMPORT_BYTES
    private(root, "Ripley", "relays.md", body)
    index(project)
    assert AgentMemory.objects.get().content == body


def test_the_agent_of_an_adopted_history_keeps_its_notes(project, root):
    history = root / ".squad/agents/ripley/history.md"
    history.parent.mkdir(parents=True)
    history.write_text("# Ripley\n\n## Learnings\n\n- Trust the motion tracker.\n", encoding="utf-8")
    private(root, "ripley", "retries.md", RETRIES)
    index(project)
    assert {m.agent.name for m in AgentMemory.objects.select_related("agent")} == {"ripley"}
    assert AgentMemory.objects.filter(source=Source.NOTES).count() == 1


def test_a_folder_named_like_another_agent_is_skipped_and_the_rest_goes_on(project, root):
    services.agent_get_or_create(project=project, name="Ash")
    private(root, "\u0410sh", "a.md", "Cyrillic A in the folder name.\n")  # a Cyrillic capital A
    private(root, "Dallas", "b.md", FIXTURES)
    report = index(project)
    assert paths(report.indexed) == [".squad/agents/Dallas/memory/b.md"]
    assert "looks like the existing agent 'Ash'" in reasons(report)["a.md"]
    assert AgentMemory.objects.count() == 1


# ---------------------------------------------------------------------------------------------
# Malformed notes


MALFORMED: dict[str, tuple[bytes, str]] = {
    "bad-yaml.md": (b"---\ntags: [unclosed\n---\nText.\n", "front matter is not valid YAML"),
    "aliases.md": (b"---\na: &x 1\nb: *x\n---\nText.\n", "YAML aliases are not accepted"),
    "latin1.md": ("Café notes.\n".encode("latin-1"), "not UTF-8"),
    "nul.md": (b"Before\x00after.\n", "NUL"),
    "empty-body.md": (b"---\ntype: learning\n---\n\n  \n", "no text after the front matter"),
    "empty.md": (b"", "empty file"),
    "bad-type.md": (b"---\ntype: decision\n---\nText.\n", "front matter type: 'decision' is not one of"),
    "bad-importance.md": (b"---\nimportance: urgent\n---\nText.\n", "front matter importance"),
    "bad-tags.md": (b"---\ntags: {a: 1}\n---\nText.\n", "front matter tags"),
    "list.md": (b"---\n- a\n- b\n---\nText.\n", "must be a mapping"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_private_note_is_skipped_with_its_reason(project, root, name):
    data, reason = MALFORMED[name]
    private(root, "Ripley", name, data)
    private(root, "Ripley", "good.md", FIXTURES)
    report = index(project)
    assert reason in reasons(report)[name]
    assert paths(report.indexed) == [".squad/agents/Ripley/memory/good.md"]
    assert AgentMemory.objects.count() == 1
    assert report.notes_skipped == 1


def test_a_note_over_the_size_limit_is_skipped(project, root):
    private(root, "Ripley", "huge.md", b"x" * (MAX_IMPORT_BYTES + 1))
    report = index(project)
    assert reasons(report)["huge.md"] == f"too large (over {MAX_IMPORT_BYTES} bytes)"
    assert not AgentMemory.objects.exists()


def test_a_link_to_a_file_outside_the_workspace_is_not_followed(project, root, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "secrets.md"
    outside.write_text("The launch codes.\n", encoding="utf-8")
    folder = root / ".squad/agents/Ripley/memory"
    folder.mkdir(parents=True)
    os.symlink(outside, folder / "secrets.md")
    report = index(project)
    assert "symbolic link" in reasons(report)["secrets.md"]
    assert not AgentMemory.objects.exists()
    assert outside.read_text(encoding="utf-8") == "The launch codes.\n"


def test_a_folder_named_like_a_note_is_skipped(project, root):
    (root / ".squad/agents/Ripley/memory/drafts.md").mkdir(parents=True)
    report = index(project)
    assert reasons(report)["drafts.md"] == "a folder, not a file"


def test_a_memory_folder_that_is_a_link_is_not_read_and_its_notes_stay(project, root, tmp_path_factory):
    private(root, "Ripley", "retries.md", RETRIES)
    index(project)
    folder = root / ".squad/agents/Ripley/memory"
    moved = tmp_path_factory.mktemp("moved")
    folder.rename(moved / "memory")
    os.symlink(moved / "memory", folder)
    report = index(project)
    assert "symbolic link" in reasons(report)["memory"]
    assert report.retired == []
    assert AgentMemory.objects.get().status == MemoryStatus.ACTIVE


def test_a_malformed_version_keeps_the_memory_of_the_last_good_one(project, root):
    note = private(root, "Ripley", "retries.md", RETRIES)
    index(project)
    note.write_bytes(b"---\ntype: [\n---\nHalf an edit.\n")
    report = index(project)
    assert "front matter" in reasons(report)["retries.md"]
    assert report.retired == [] and report.changed == []
    assert AgentMemory.objects.get().status == MemoryStatus.ACTIVE


# ---------------------------------------------------------------------------------------------
# Team notes


def test_a_team_note_is_only_a_proposal_until_a_coordinator_merges_it(
    project, root, make_api: Callable[..., ApiClient]
):
    team(root, "release-checklist.md", CHECKLIST)
    report = index(project)
    assert paths(report.proposed) == [".squad/memory/release-checklist.md"]
    entry = InboxEntry.objects.get()
    assert (entry.status, entry.source, entry.type, entry.agent.name) == (
        EntryStatus.PENDING,
        Source.NOTES,
        "learning",
        "Dallas",
    )
    assert entry.tags == ["release", "cross-team"]
    assert entry.file == f".squad/memory/release-checklist.md@{sha(CHECKLIST)}"
    assert entry.title == "Release checklist"
    assert not AgentMemory.objects.exists()
    ripley = make_api("agent", "Ripley")
    assert ripley.get("/memory").json() == []
    assert in_context(project, "Ripley") == []

    merged = services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    memory = merged.memory
    assert memory is not None and memory.cross_team
    assert [m["id"] for m in ripley.get("/memory").json()] == [memory.pk]
    assert in_context(project, "Ripley") == [memory.pk]


def test_a_team_note_without_an_author_is_the_coordinators(project, root):
    team(root, "on-call.md", "Page the on-call engineer before any schema change.\n")
    index(project)
    assert InboxEntry.objects.get().agent.name == project.coordinator_agent


def test_the_same_version_is_never_proposed_twice_even_after_rejection(project, root):
    team(root, "release-checklist.md", CHECKLIST)
    index(project)
    entry = InboxEntry.objects.get()
    services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="Kept in the wiki")
    report = index(project)
    assert report.proposed == []
    assert InboxEntry.objects.count() == 1
    with pytest.raises(services.Conflict):
        services.note_propose(
            project=project,
            agent_name="Dallas",
            slug="notes-release-checklist-again",
            note=services.NoteVersion(
                path=".squad/memory/release-checklist.md",
                sha256=sha(CHECKLIST),
                text=CHECKLIST,
                content="Anything.",
                type="learning",
                importance="medium",
            ),
        )


def test_a_changed_team_note_proposes_again_and_withdraws_the_pending_one(project, root):
    note = team(root, "release-checklist.md", CHECKLIST)
    index(project)
    note.write_text(CHECKLIST + "3. Write the release notes.\n", encoding="utf-8")
    report = index(project)
    old, new = InboxEntry.objects.order_by("created_at", "id")
    assert (old.status, old.reason, old.reviewed_by) == (EntryStatus.REJECTED, "file changed", "canon")
    assert new.status == EntryStatus.PENDING and "release notes" in new.content
    assert len(report.proposed) == 1 and len(report.withdrawn) == 1


def test_a_removed_team_note_withdraws_its_proposal(project, root):
    note = team(root, "release-checklist.md", CHECKLIST)
    index(project)
    note.unlink()
    report = index(project)
    entry = InboxEntry.objects.get()
    assert (entry.status, entry.reason) == (EntryStatus.REJECTED, "file removed")
    assert paths(report.withdrawn) == [".squad/memory/release-checklist.md"]


def test_a_removed_team_note_retires_the_memory_it_was_merged_into(project, root):
    note = team(root, "release-checklist.md", CHECKLIST)
    index(project)
    entry = services.entry_merge(project=project, entry_id=InboxEntry.objects.get().pk, by="lead")
    note.unlink()
    report = index(project)
    memory = AgentMemory.objects.get(pk=entry.memory_id)
    assert memory.status == MemoryStatus.ARCHIVED
    assert paths(report.retired) == [".squad/memory/release-checklist.md"]
    assert AuditEvent.objects.filter(action="retire", object_id=memory.pk).exists()
    assert in_context(project, "Ripley") == []


def test_a_merged_new_version_supersedes_the_merged_old_one(project, root):
    note = team(root, "release-checklist.md", CHECKLIST)
    index(project)
    first = services.entry_merge(project=project, entry_id=InboxEntry.objects.get().pk, by="lead")
    note.write_text(CHECKLIST + "3. Write the release notes.\n", encoding="utf-8")
    index(project)
    pending = InboxEntry.objects.get(status=EntryStatus.PENDING)
    second = services.entry_merge(project=project, entry_id=pending.pk, by="lead")
    report = index(project)
    old = AgentMemory.objects.get(pk=first.memory_id)
    assert (old.status, old.superseded_by_id) == (MemoryStatus.SUPERSEDED, second.memory_id)
    assert len(report.changed) == 1
    assert in_context(project, "Ripley") == [second.memory_id]


def test_a_team_note_may_not_propose_a_decision(project, root):
    team(root, "boundary.md", "---\ntype: architectural\n---\nEverything goes through the gateway.\n")
    report = index(project)
    assert "front matter type" in reasons(report)["boundary.md"]
    assert not InboxEntry.objects.exists()


# ---------------------------------------------------------------------------------------------
# The files are only read


def test_a_sync_never_writes_moves_or_removes_a_notes_file(project, root):
    written = write_squad_team(root, log_lines=120, agents=3, seed=7)
    agent = written.agents[0]
    notes = {
        private(root, agent, "retries.md", RETRIES): RETRIES.encode(),
        private(root, agent, "crlf.md", FIXTURES.replace("\n", "\r\n")): FIXTURES.replace(
            "\n", "\r\n"
        ).encode(),
        private(
            root, "Lambert (old)", "nav.md", "\ufeffCourse laid in.\n"
        ): "\ufeffCourse laid in.\n".encode(),
        team(root, "release-checklist.md", CHECKLIST): CHECKLIST.encode(),
    }
    folders = {p.parent: sorted(os.listdir(p.parent)) for p in notes}
    history = written.history_path(agent).read_bytes()
    for _ in range(2):
        results = mirror.sync_project(project, trigger="command")
        assert all(r.ok for r in results), [r.as_dict() for r in results]
    entry = InboxEntry.objects.get(source=Source.NOTES)
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    assert mirror.export_project(project).ok
    for path, data in notes.items():
        assert path.read_bytes() == data, path
    assert {p: sorted(os.listdir(p)) for p in folders} == folders
    after = written.history_path(agent).read_bytes()
    assert_lines_kept(history, after)
    assert b"jitter" not in after  # a private note lives in its file, not in the history


def test_an_agent_with_notes_only_gets_no_history_file(project, root):
    private(root, "Ripley", "retries.md", RETRIES)
    mirror.sync_project(project, trigger="command")
    assert sorted(p.relative_to(root).as_posix() for p in (root / ".squad/agents").rglob("*")) == [
        ".squad/agents/Ripley",
        ".squad/agents/Ripley/memory",
        ".squad/agents/Ripley/memory/retries.md",
    ]


def test_a_dry_run_writes_nothing(project, root):
    private(root, "Ripley", "retries.md", RETRIES)
    team(root, "release-checklist.md", CHECKLIST)
    report = mirror.import_project(project, dry_run=True)
    assert len(report.indexed) == 1 and len(report.proposed) == 1
    assert "would be" in report.notes_summary()
    assert not AgentMemory.objects.exists() and not InboxEntry.objects.exists()


def test_sync_ledger_says_what_it_did_with_notes(project, root):
    private(root, "Ripley", "retries.md", RETRIES)
    private(root, "Dallas", "fixtures.md", FIXTURES)
    private(root, "Dallas", "broken.md", b"\xff\xfe not text")
    team(root, "release-checklist.md", CHECKLIST)
    out = StringIO()
    call_command("sync_ledger", "--project", project.slug, stdout=out, stderr=StringIO())
    output = out.getvalue()
    assert "notes: 2 indexed, 0 changed, 0 retired, 1 proposed, 0 withdrawn, 1 skipped" in output
    assert "  indexed: .squad/agents/Ripley/memory/retries.md: memory " in output
    assert "  proposed: .squad/memory/release-checklist.md: " in output
    assert "  warning: .squad/agents/Dallas/memory/broken.md: not UTF-8" in output


def test_a_team_note_whose_author_is_not_a_name_is_skipped(project, root):
    team(root, "odd.md", "---\nauthor: [Dallas, Ripley]\n---\nTwo authors in a list.\n")
    team(root, "on-call.md", "Page the on-call engineer before any schema change.\n")
    report = index(project)
    assert "front matter author" in reasons(report)["odd.md"]
    assert paths(report.proposed) == [".squad/memory/on-call.md"]


def test_notes_in_the_older_ai_team_layout_are_read_too(project, root):
    folder = root / ".ai-team/agents/Parker/memory"
    folder.mkdir(parents=True)
    (folder / "engines.md").write_text("Engine room readings drift after six hours.\n", encoding="utf-8")
    index(project)
    assert AgentMemory.objects.get().origin == ".ai-team/agents/Parker/memory/engines.md"
