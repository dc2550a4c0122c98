"""Export beside Squad's own program, which writes the same `.squad/` folder (docs/mirror.md).

- Canon's own inbox files are in the shape Squad's `squad_decide` writes, so `squad nap`, which appends
  inbox files to the log as they are, appends a clean block;
- a team's inbox file a coordinator merged or rejected in Canon leaves the inbox (a copy kept), as Squad's
  Scribe removes the files it merges; a merged one still saying what the file says goes into the log as
  the file's own text, and the next import knows that block;
- an agent with two folders that differ in case (`Rai/`, `rai/`) has one home for Canon's memories, and a
  row adopted from one file is never copied into another;
- every block Canon writes has a heading of its own (Squad's Scribe keeps only the first of blocks that
  share a heading).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ledger import mirror, services
from ledger.mirror import squad
from ledger.models import AgentMemory, Decision, EntryStatus, InboxEntry, MirrorFile, Project

LOG = """# Squad Decisions

## Active Decisions

### 2026-02-20: User directive
**By:** user (via Copilot)
**What:** Never force-push to main.
**Why:** Lost work twice.

### 2026-03-02T14:05:11Z: Queue jobs in PostgreSQL, not Redis
**By:** Marlow (Backend)
**Status:** Active
**What:** Background jobs are rows claimed with SELECT … FOR UPDATE SKIP LOCKED.
**Why:** One database to back up; the load is a few jobs a minute.
"""

NEWEST_FIRST = """# Squad Decisions

### 2026-03-02T14:05:11Z: Queue jobs in PostgreSQL, not Redis
**By:** Marlow (Backend)
**What:** Background jobs are rows claimed with SELECT … FOR UPDATE SKIP LOCKED.

### 2026-02-20: User directive
**By:** user (via Copilot)
**What:** Never force-push to main.
"""

# What Squad's `squad_decide` writes: a dated `###` heading with ':' in the time written as '-', bold
# fields, blank lines dropped, no final newline.
PALETTE = (
    "### 2026-03-05T11-04-35: Use five palette tokens for every panel\n"
    "**By:** Juno\n"
    "**What:** Panels take `bg`, `fg`, `muted`, `accent` and `warn`, nothing else; Zoë's contrast table "
    "is the reference.\n"
    "**Why:** Panels looked inconsistent across themes."
)

# A person's proposal in the census's most common shape: `# Decision:`, bold fields, sections.
SDK_PIN = """# Decision: Pin the SDK to a minor version
**Author:** Marlow
**Date:** 2026-03-04
**Status:** Proposed

## Context

The 0.13 → 0.14 bump renamed two exports and broke the sync worker at 03:00 UTC.

## Decision

Pin `@bradygaster/squad-sdk` to `~0.13.1` and bump it by hand.

## Rationale

A minor bump should be a reviewed change, not a surprise in CI.
"""

JUNO_HISTORY = """# Juno — History

## Core Context

- **My role:** UI. I own the terminal panels and the colour tokens.

## Learnings

<!-- Append learnings below -->

**Panels need contrast checks:**
Zoë's table catches low-contrast pairs before review does.
"""

INBOX = ".squad/decisions/inbox"


@pytest.fixture
def data_dir(tmp_path_factory, settings) -> Path:
    folder = tmp_path_factory.mktemp("canon-data")
    settings.CANON_DATA_DIR = folder
    return folder


@pytest.fixture
def root(tmp_path_factory, project: Project, data_dir: Path) -> Path:
    """A team's `.squad/` folder as Squad and its people left it; the project mirrors into it."""
    root = tmp_path_factory.mktemp("repo")
    squad_folder = root / ".squad"
    (squad_folder / "decisions/inbox").mkdir(parents=True)
    (squad_folder / "agents/juno").mkdir(parents=True)
    (squad_folder / "decisions.md").write_text(LOG, encoding="utf-8")
    (squad_folder / "agents/juno/history.md").write_text(JUNO_HISTORY, encoding="utf-8")
    (squad_folder / "team.md").write_text(
        "# Team\n\n| Name | Role |\n|---|---|\n| Juno | UI |\n", encoding="utf-8"
    )
    (root / INBOX / "juno-palette-tokens.md").write_text(PALETTE, encoding="utf-8")
    (root / INBOX / "marlow-sdk-pin.md").write_text(SDK_PIN, encoding="utf-8")
    project.workspace = str(root)
    project.save()
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".agentweaver" not in p.parts
    }


def sync(project: Project) -> tuple[mirror.ImportReport, mirror.ExportReport]:
    imported = mirror.import_project(project)
    exported = mirror.export_project(project)
    assert exported.ok, exported.errors
    return imported, exported


def entry_of(project: Project, name: str) -> InboxEntry:
    return InboxEntry.objects.get(project=project, file=name)


def nap(root: Path, *names: str) -> None:
    """What `squad nap` does with the inbox (the files named, else all): each file appended to the log as
    it is (`"\\n" + text.trimEnd() + "\\n"`), then deleted."""
    log = root / ".squad/decisions.md"
    for path in [root / INBOX / name for name in names] or sorted((root / INBOX).glob("*.md")):
        with log.open("a", encoding="utf-8") as out:
            out.write("\n" + path.read_text(encoding="utf-8").rstrip() + "\n")
        path.unlink()


def blocks_of(text: str) -> list[str]:
    return [part.text for part in squad.parse_decisions(text) if isinstance(part, squad.Block)]


# --- a team's inbox file decided in Canon -------------------------------------------------------


def test_a_merged_team_file_leaves_the_inbox_and_its_own_text_joins_the_log(project, root, data_dir):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")

    report = mirror.export_project(project)

    path = f"{INBOX}/juno-palette-tokens.md"
    assert not (root / path).exists()
    assert report.removed == [path]
    copy = Path(dict(report.backed_up)[path])
    assert copy.is_relative_to(data_dir) and copy.read_bytes() == PALETTE.encode()
    # Appended as Squad's Scribe appends an inbox file: its text, then one newline; nothing escaped.
    log = (root / ".squad/decisions.md").read_text(encoding="utf-8")
    assert log == LOG + "\n" + PALETTE + "\n"
    entry.refresh_from_db()
    assert entry.decision.markdown == PALETTE + "\n"
    assert MirrorFile.objects.filter(project=project, path=path).count() == 0


def test_after_the_merge_nothing_changes_again_and_no_block_is_adopted_twice(project, root):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")
    mirror.export_project(project)
    after_merge = snapshot(root)

    again = mirror.export_project(project)
    assert (again.written, again.removed, again.backed_up) == ([], [], [])
    imported, exported = sync(project)
    assert imported.adopted == [] and imported.created == []
    assert exported.written == []
    # Squad's `nap` finds only the file nobody decided yet.
    nap(root)
    assert snapshot(root)[".squad/decisions.md"].decode().count("Use five palette tokens") == 1
    sync(project)
    assert (
        Decision.objects.filter(project=project, title="Use five palette tokens for every panel").count() == 1
    )
    assert entry_of(project, "marlow-sdk-pin.md").status == EntryStatus.MERGED
    assert snapshot(root)[".squad/agents/juno/history.md"] == after_merge[".squad/agents/juno/history.md"]


def test_a_merged_team_text_edited_later_is_written_as_canons_block(project, root):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")
    mirror.export_project(project)
    entry.refresh_from_db()
    services.decision_edit(
        project=project, decision_id=entry.decision.pk, by="kestrel", content="Use six palette tokens."
    )

    mirror.export_project(project)

    log = (root / ".squad/decisions.md").read_text(encoding="utf-8")
    assert PALETTE not in log
    assert "Use six palette tokens." in log and f", #{entry.decision.pk})\n" in log
    assert sync(project)[1].written == []


def test_a_block_the_scribe_appends_after_the_merge_is_the_only_one_adopted(project, root):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")
    mirror.export_project(project)
    log = root / ".squad/decisions.md"
    with log.open("a", encoding="utf-8") as out:
        out.write(
            "\n### 2026-03-06: Søren owns the release train\n**By:** Kestrel (Lead)\n**What:** Søren cuts releases.\n"
        )
    before = Decision.objects.filter(project=project).count()

    imported, _ = sync(project)

    assert imported.adopted == [(".squad/decisions.md", "1 decision adopted (1 decision held for review)")]
    assert Decision.objects.filter(project=project).count() == before + 1
    assert log.read_text(encoding="utf-8").count("Use five palette tokens") == 1


def test_a_rejected_team_file_leaves_the_inbox_and_never_reaches_the_log(project, root, data_dir):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_reject(project=project, entry_id=entry.pk, by="kestrel", reason="Zoë's table is not final")

    report = mirror.export_project(project)

    path = f"{INBOX}/juno-palette-tokens.md"
    assert not (root / path).exists() and report.removed == [path]
    assert Path(dict(report.backed_up)[path]).read_bytes() == PALETTE.encode()
    assert (root / ".squad/decisions.md").read_text(encoding="utf-8") == LOG
    # `squad nap` has nothing of it left to merge.
    nap(root)
    assert "palette" not in (root / ".squad/decisions.md").read_text(encoding="utf-8")


def test_a_team_file_edited_after_import_stays_and_is_reported(project, root):
    sync(project)
    path = root / INBOX / "juno-palette-tokens.md"
    edited = PALETTE + "\n**References:** #58 label printer bridge"
    path.write_text(edited, encoding="utf-8")
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")

    report = mirror.export_project(project)

    assert path.read_text(encoding="utf-8") == edited
    assert report.removed == [] and f"{INBOX}/juno-palette-tokens.md" not in dict(report.backed_up)
    reason = dict(report.kept)[f"{INBOX}/juno-palette-tokens.md"]
    assert "edited outside Canon since it was imported" in reason and "merged" in reason
    # The log gets Canon's own block: the file is not what the decision was made from.
    entry.refresh_from_db()
    assert entry.decision.markdown == ""
    assert "Use five palette tokens for every panel" in (root / ".squad/decisions.md").read_text(
        encoding="utf-8"
    )
    assert dict(mirror.export_project(project).kept)[f"{INBOX}/juno-palette-tokens.md"] == reason


def test_a_proposal_edited_before_the_merge_leaves_the_inbox_but_is_written_as_canons_block(project, root):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_edit(
        project=project,
        entry_id=entry.pk,
        by="kestrel",
        content="Panels take the five tokens `bg`, `fg`, `muted`, `accent`, `warn`; the sixth waits for Zoë.",
    )
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")

    report = mirror.export_project(project)

    assert report.removed == [f"{INBOX}/juno-palette-tokens.md"]
    entry.refresh_from_db()
    assert entry.decision.markdown == ""
    log = (root / ".squad/decisions.md").read_text(encoding="utf-8")
    assert "the sixth waits for Zoë" in log and PALETTE not in log
    assert sync(project)[0].adopted == []


def test_a_decision_shaped_file_never_swallows_or_splits_the_teams_blocks(project, root):
    """`# Decision:` is a level-1 block: before a `###` block of a newest-first log, or followed by one
    of Canon's, it would take the next block in unless a `---` line ends it."""
    (root / ".squad/decisions.md").write_text(NEWEST_FIRST, encoding="utf-8")
    sync(project)
    team_blocks = blocks_of(NEWEST_FIRST)
    entry = entry_of(project, "marlow-sdk-pin.md")
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")
    services.decision_create(
        project=project,
        agent_name="Kestrel",
        type="process",
        title="Release notes name every migration",
        content="Each release note lists the migrations it runs.",
        by="kestrel",
    )

    mirror.export_project(project)

    log = (root / ".squad/decisions.md").read_text(encoding="utf-8")
    blocks = blocks_of(log)
    assert len(blocks) == 4
    assert SDK_PIN in blocks and all(block in blocks for block in team_blocks)
    imported, exported = sync(project)
    assert imported.adopted == [] and exported.written == []


def test_a_merged_learning_from_a_team_file_leaves_the_inbox_for_its_agents_history(project, root):
    (root / INBOX / "juno-focus-rings.md").write_text(
        "# Juno — focus rings\n**Type:** learning\n\nFocus rings vanish on the `muted` token; use `accent`.\n",
        encoding="utf-8",
    )
    sync(project)
    entry = entry_of(project, "juno-focus-rings.md")
    assert entry.type == "learning"
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel", confirm_flagged=True)

    report = mirror.export_project(project)

    assert report.removed == [f"{INBOX}/juno-focus-rings.md"]
    history = (root / ".squad/agents/juno/history.md").read_text(encoding="utf-8")
    assert history.startswith(JUNO_HISTORY) and "use `accent`" in history


def test_a_dry_run_says_which_decided_file_would_leave_and_touches_nothing(project, root, data_dir):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_reject(project=project, entry_id=entry.pk, by="kestrel")
    before = snapshot(root)

    report = mirror.export_project(project, dry_run=True)

    assert report.removed == [f"{INBOX}/juno-palette-tokens.md"]
    assert snapshot(root) == before
    assert not any(data_dir.rglob("*.md"))


def test_a_decided_file_squad_already_took_is_left_for_the_next_import(project, root):
    sync(project)
    entry = entry_of(project, "juno-palette-tokens.md")
    services.entry_merge(project=project, entry_id=entry.pk, by="kestrel")
    (root / INBOX / "juno-palette-tokens.md").unlink()

    report = mirror.export_project(project)

    assert report.removed == [] and f"{INBOX}/juno-palette-tokens.md" not in dict(report.backed_up)
    # The import still knows the file was there, to find the block Squad put it in.
    assert MirrorFile.objects.filter(project=project, path=f"{INBOX}/juno-palette-tokens.md").exists()


# --- Canon's own inbox files ----------------------------------------------------------------------


def test_canons_inbox_file_is_in_squads_shape_and_nap_appends_a_clean_block(project, root):
    sync(project)
    entry = services.entry_submit(
        project=project,
        agent_name="Wren",
        slug="retry-uploads-with-jitter",
        type="technical",
        title="Retry uploads with jitter",
        content="Uploads retry three times, 0\u2013500 ms of jitter apart.",
        rationale="Three clients retrying on the same second overloaded the gateway.",
        tags="uploads",
    ).entry
    mirror.export_project(project)
    text = (root / INBOX / "retry-uploads-with-jitter.md").read_text(encoding="utf-8")
    assert text.startswith("### ") and "**By:** Wren" in text
    assert not re.search(r"^(agent|slug|type|title|importance|tags):", text, re.MULTILINE)

    nap(root, "retry-uploads-with-jitter.md")
    sync(project)

    log = (root / ".squad/decisions.md").read_text(encoding="utf-8")
    assert not re.search(r"^(---|agent:|slug:)", log, re.MULTILINE)
    entry.refresh_from_db()
    assert entry.status == EntryStatus.MERGED
    assert (entry.decision.title, entry.decision.agent.name) == ("Retry uploads with jitter", "Wren")
    # Squad's own parser reads a block by Wren, not lines folded into the decision before it.
    last = blocks_of(log)[-1]
    assert "**By:** Wren" in last and "0\u2013500 ms of jitter" in last


# --- one heading per decision ---------------------------------------------------------------------


def test_a_superseding_decision_with_the_same_title_gets_a_heading_of_its_own(project, root):
    sync(project)
    old = services.decision_create(
        project=project,
        agent_name="Marlow",
        type="architectural",
        title="Queue jobs in PostgreSQL",
        content="Jobs are rows claimed with SKIP LOCKED.",
        by="kestrel",
    )
    new = services.decision_create(
        project=project,
        agent_name="Marlow",
        type="architectural",
        title="Queue jobs in PostgreSQL",
        content="Jobs are rows claimed with SKIP LOCKED; a sweeper requeues jobs older than ten minutes.",
        supersedes=[old.pk],
        by="kestrel",
    )

    mirror.export_project(project)

    log = (root / ".squad/decisions.md").read_text(encoding="utf-8")
    headings = [line for line in log.splitlines() if line.startswith("### ")]
    assert len(headings) == len(set(headings)) == 4
    assert [h for h in headings if f"#{old.pk})" in h] and [h for h in headings if f"#{new.pk})" in h]


# --- one home per agent ---------------------------------------------------------------------------

RAI_BY_HAND = """# Rai

## Learnings

- Søren's deploy window is Tuesdays 14:00\u201316:00 CET; nothing ships outside it.
"""

RAI_CAST = """# Rai — History

## Core Context

- **My role:** Release. I own the release train and the changelog.

## Learnings

<!-- Append learnings below -->

📌 Team update (2026-03-02T14:10:00Z): Queue jobs in PostgreSQL — decided by Marlow
"""


@pytest.fixture
def two_folders(root: Path) -> Path:
    """One agent, two folders: `Rai/` made by a person, `rai/` by Squad's casting (lower-case)."""
    for folder, text in (("Rai", RAI_BY_HAND), ("rai", RAI_CAST)):
        (root / ".squad/agents" / folder).mkdir(parents=True)
        (root / ".squad/agents" / folder / "history.md").write_text(text, encoding="utf-8")
    return root


def test_the_first_sync_of_two_folders_of_one_agent_changes_no_byte(project, two_folders):
    before = snapshot(two_folders)
    sync(project)
    assert snapshot(two_folders) == before
    assert {
        m.agent.name for m in AgentMemory.objects.filter(project=project, origin__contains="/agents/")
    } == {
        "Juno",
        "Rai",
    }
    assert sync(project)[1].written == []


def test_canons_memory_goes_to_the_folder_named_as_the_agent_only(project, two_folders):
    sync(project)
    services.memory_record(
        project=project,
        agent_name="Rai",
        type="learning",
        content="Tag releases from main, never from a fork.",
    )
    cast = (two_folders / ".squad/agents/rai/history.md").read_bytes()

    sync(project)
    sync(project)

    assert (two_folders / ".squad/agents/rai/history.md").read_bytes() == cast
    home = (two_folders / ".squad/agents/Rai/history.md").read_text(encoding="utf-8")
    assert home.startswith(RAI_BY_HAND) and home.count("never from a fork") == 1
    assert sync(project)[1].written == []


def test_without_a_folder_named_as_the_agent_the_first_adopted_folder_is_its_home(project, root):
    services.decision_create(
        project=project,
        agent_name="Rai",
        type="process",
        title="Freeze on Fridays",
        content="No deploys.",
        by="k",
    )
    sync(project)
    for folder, text in (("RAI", RAI_BY_HAND), ("rai", RAI_CAST)):
        (root / ".squad/agents" / folder).mkdir(parents=True)
        (root / ".squad/agents" / folder / "history.md").write_text(text, encoding="utf-8")
    sync(project)
    services.memory_record(
        project=project, agent_name="rai", type="learning", content="The changelog is generated."
    )

    sync(project)

    assert "The changelog is generated." in (root / ".squad/agents/RAI/history.md").read_text(
        encoding="utf-8"
    )
    assert (root / ".squad/agents/rai/history.md").read_text(encoding="utf-8") == RAI_CAST


def test_a_memory_adopted_from_another_file_is_never_added_to_a_history(project, root):
    sync(project)
    services.memories_adopt(
        project=project,
        agent_name="Juno",
        items=[
            services.Adopted(
                markdown="- Old panels used eight tokens.\n",
                content="Old panels used eight tokens.",
                type="learning",
            )
        ],
        origin=".squad/agents/juno/history-archive.md",
    )
    before = snapshot(root)
    sync(project)
    assert snapshot(root) == before


def test_a_decision_adopted_from_another_file_is_never_added_to_the_log(project, root):
    sync(project)
    archived = "### 2025-01-04: Ship on Tuesdays\n**By:** Rai\n\nReleases go out on Tuesdays.\n"
    services.decisions_adopt(
        project=project,
        items=[
            services.Adopted(
                markdown=archived,
                content="Releases go out on Tuesdays.",
                type="process",
                author="Rai",
                title="Ship on Tuesdays",
                date=datetime(2025, 1, 4, tzinfo=UTC),
            )
        ],
        origin=".squad/decisions-archive.md",
    )
    services.decision_create(
        project=project,
        agent_name="Kestrel",
        type="process",
        title="Release notes name every migration",
        content="Each release note lists the migrations it runs.",
        by="kestrel",
    )

    mirror.export_project(project)

    log = (root / ".squad/decisions.md").read_text(encoding="utf-8")
    assert "Release notes name every migration" in log
    assert "Ship on Tuesdays" not in log
    assert (
        hashlib.sha256(log.encode()).hexdigest()
        == MirrorFile.objects.get(project=project, path=".squad/decisions.md").sha256
    )
