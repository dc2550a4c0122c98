"""Each way Canon and the published Squad program once disagreed about a `.squad/` folder, one test each.

Squad's side is always its own code (`tests/interop/squad.py`): `squad init` and casting make the team, its
tools and commands write, its parsers read. The Scribe, an LLM, is emulated from its charter.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ledger import context, services
from ledger.models import AgentMemory, Decision, EntryStatus, InboxEntry, MemoryStatus, Project
from tests.interop import squad
from tests.interop.canon import COORDINATOR, export, mirrored, sync
from tests.interop.invariants import canon_heading_title, scrubbed
from tests.interop.scribe_emulation import scribe_pass

_ESCAPED = re.compile(r"^\\(?:#|---)", re.MULTILINE)


def team_file(root: Path, relative: str) -> str:
    return (root / ".squad" / relative).read_text(encoding="utf-8")


def inbox_files(root: Path) -> list[Path]:
    return sorted((root / ".squad" / "decisions" / "inbox").glob("*.md"))


def workspace_files(root: Path) -> dict[str, bytes]:
    """Every file of the repository but git's own."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def entry_titled(project: Project, title: str) -> InboxEntry:
    """The project's one inbox entry whose title holds `title`."""
    return InboxEntry.objects.select_related("agent").get(project=project, title__contains=title)


def test_agent_folders_differing_only_in_case_keep_their_own_histories(project, cast_team, data_dir):
    root = cast_team
    upper, lower = root / ".squad/agents/Rai/history.md", root / ".squad/agents/rai/history.md"
    assert upper.is_file() and lower.is_file()
    mirrored(project, root)
    before = workspace_files(root)

    sync(project)
    after_first = workspace_files(root)
    assert {path: after_first[path] for path in before} == before
    assert sorted(p for p in after_first if p.startswith(".squad/")) == sorted(
        p for p in before if p.startswith(".squad/")
    )

    content = "Review every prompt template for personal data before it ships — ✓ Tromsø pilot included."
    services.memory_store(
        project=project, agent_name="Rai", type="learning", importance="high", content=content, by=COORDINATOR
    )
    export(project)
    holders = [path.parent.name for path in (upper, lower) if content in path.read_text(encoding="utf-8")]
    assert len(holders) == 1, holders

    exported = workspace_files(root)
    sync(project)
    assert workspace_files(root) == exported


def test_squad_decide_inbox_file_is_imported_and_merged_without_escapes(adopted, fresh_team):
    root = fresh_team
    squad.decide(
        root,
        "Marlow",
        "Queue jobs",
        "Jobs are rows claimed with SELECT … FOR UPDATE SKIP LOCKED; one database to back up (Ålesund ops).",
        now="2026-11-26T11:04:35.512Z",
    )
    (written,) = inbox_files(root)
    assert written.read_text(encoding="utf-8").startswith("### 2026-11-26T11-04-35: Queue jobs\n")

    sync(adopted)
    entry = InboxEntry.objects.select_related("agent").get(project=adopted)
    assert (entry.status, entry.title, entry.agent.name) == (EntryStatus.PENDING, "Queue jobs", "Marlow")
    assert entry.created_at == datetime(2026, 11, 26, 11, 4, 35, tzinfo=UTC)

    services.entry_merge(project=adopted, entry_id=entry.pk, by=COORDINATOR)
    export(adopted)
    log = team_file(root, "decisions.md")
    assert not _ESCAPED.search(log), [line for line in log.splitlines() if line.startswith("\\")]
    titles = [d["title"] for d in squad.parse_decisions(log)]
    assert not [t for t in titles if t.startswith("T11-04-35")], titles


def test_squad_memory_write_decision_file_is_imported_as_a_pending_entry(adopted, fresh_team):
    root = fresh_team
    written = squad.memory_write_decision(
        root,
        title="Retry SMS sends through the job queue",
        author="Juno",
        content="Failed SMS sends go back on the job queue with jitter, never retried inline — café Wi-Fi drops.",
    )
    assert written.read_text(encoding="utf-8").startswith("---\nid: ")

    sync(adopted)
    entry = InboxEntry.objects.select_related("agent").get(project=adopted)
    assert (entry.status, entry.agent.name, entry.title) == (
        EntryStatus.PENDING,
        "Juno",
        "Retry SMS sends through the job queue",
    )


def test_canon_pending_entry_is_exported_as_a_native_inbox_file_that_nap_merges(adopted, fresh_team):
    root = fresh_team
    title = "Pin the SDK to a minor version"
    services.entry_submit(
        project=adopted,
        agent_name="Juno",
        slug="pin-sdk-minor",
        type="technical",
        title=title,
        content="Pin @bradygaster/squad-sdk to ~0.13 in every package — no caret ranges.",
        rationale="A minor release renamed a parser export and broke the rota exporter overnight.",
    )
    export(adopted)
    (written,) = inbox_files(root)
    text = written.read_text(encoding="utf-8")
    assert not text.startswith("---"), text
    assert re.search(r"^### .*Pin the SDK to a minor version", text, re.MULTILINE), text
    assert re.search(r"^\*\*By:\*\* Juno\s*$", text, re.MULTILINE), text

    squad.nap(root)
    assert not inbox_files(root)
    log = team_file(root, "decisions.md")
    assert text.rstrip() in log
    read = [
        (d["title"], d.get("date"), d.get("author"))
        for d in squad.parse_decisions(log)
        if title in d["title"]
    ]
    (heading,) = re.findall(r"^### \d{4}-\d{2}-\d{2}: (.*)$", text, re.MULTILINE)
    assert heading.startswith(f"{title} (") and heading.endswith("Z)")
    assert read == [(heading, f"{entry_titled(adopted, title).created_at.astimezone(UTC):%Y-%m-%d}", "Juno")]

    sync(adopted)
    entry = entry_titled(adopted, title)
    assert entry.status == EntryStatus.MERGED
    assert entry.decision is not None and entry.decision.markdown.strip() == text.strip()
    log = team_file(root, "decisions.md")
    assert not re.search(r"^(?:agent|slug):", log, re.MULTILINE)


@pytest.mark.parametrize("decision", ["merge", "reject"])
def test_team_inbox_file_leaves_the_inbox_once_a_coordinator_decides_it(
    adopted, fresh_team, data_dir, decision
):
    root = fresh_team
    summary = "Store fleet positions as PostGIS points"
    written = squad.decide(
        root,
        "Marlow",
        summary,
        "Positions are geography(Point, 4326); the map panel queries by bounding box around Bodø.",
    )
    original = written.read_bytes()
    sync(adopted)
    entry = entry_titled(adopted, summary)
    if decision == "merge":
        services.entry_merge(project=adopted, entry_id=entry.pk, by=COORDINATOR)
    else:
        services.entry_reject(project=adopted, entry_id=entry.pk, by=COORDINATOR, reason="Kept in SQLite.")

    export(adopted)
    assert not written.exists()
    copies = list((data_dir / "backups" / adopted.slug).rglob(written.name))
    assert original in [copy.read_bytes() for copy in copies], copies
    log = team_file(root, "decisions.md")
    merged_blocks = [d for d in squad.parse_decisions(log) if summary in d["title"]]
    assert len(merged_blocks) == (1 if decision == "merge" else 0), merged_blocks

    squad.nap(root)
    assert team_file(root, "decisions.md") == log
    sync(adopted)
    active = Decision.objects.filter(project=adopted, title__contains=summary, status="active")
    assert active.count() == (1 if decision == "merge" else 0)


def test_superseding_with_the_same_title_on_the_same_day_survives_the_scribe(adopted, fresh_team):
    root = fresh_team
    title = "Queue jobs in PostgreSQL"
    first = services.decision_create(
        project=adopted,
        agent_name="Marlow",
        type="architectural",
        title=title,
        content="Jobs are rows in PostgreSQL, claimed with SKIP LOCKED.",
        by=COORDINATOR,
    )
    export(adopted)
    second = services.decision_create(
        project=adopted,
        agent_name="Marlow",
        type="architectural",
        title=title,
        content="Jobs are rows in PostgreSQL; the sweeper retries a claimed row after five minutes.",
        supersedes=[first.pk],
        by=COORDINATOR,
    )
    export(adopted)
    headings = [
        e["heading"]
        for e in squad.split_entries(team_file(root, "decisions.md"))["entries"]
        if title in e["heading"]
    ]
    assert len(headings) == 2 and len(set(headings)) == 2, headings

    done = scribe_pass(root, now=squad.iso(datetime.now(UTC)))
    assert not [block for block in done.removed if title in block], done.removed
    sync(adopted)
    second.refresh_from_db()
    assert second.status == "active"
    titles = [d["title"] for d in squad.parse_decisions(team_file(root, "decisions.md"))]
    assert canon_heading_title(second) in titles, titles


def test_scrubbed_email_in_a_canon_memory_becomes_the_active_memory(adopted, fresh_team):
    root = fresh_team
    address = "ops-desk@tidepool-fleet.no"
    content = f"Rota exports go to {address} — never to the skippers' phones directly."
    memory = services.memory_store(
        project=adopted, agent_name="Rai", type="core_context", content=content, by=COORDINATOR
    ).memory
    export(adopted)
    assert content in team_file(root, "agents/Rai/history.md")

    squad.scrub_emails(root)
    assert address not in team_file(root, "agents/Rai/history.md")

    sync(adopted)
    memory.refresh_from_db()
    assert memory.status != MemoryStatus.ACTIVE
    active = AgentMemory.objects.filter(project=adopted, agent=memory.agent, status=MemoryStatus.ACTIVE)
    assert [m.content for m in active if "[email scrubbed]" in m.content] == [scrubbed(content)]
    compiled = context.compile(adopted, "Rai", task="Where do rota exports go?")
    assert compiled.error is None and compiled.text is not None
    assert scrubbed(content) in compiled.text
    assert address not in compiled.text


def test_scribe_team_update_after_a_patterns_section_is_adopted_as_an_update(adopted, fresh_team):
    root = fresh_team
    services.memory_store(
        project=adopted,
        agent_name="Rai",
        type="pattern",
        content="Every prompt change ships with a red-team transcript in the PR.",
        by=COORDINATOR,
    )
    export(adopted)
    headings = re.findall(r"^## (.+)$", team_file(root, "agents/Rai/history.md"), re.MULTILINE)
    assert headings[-1] == "Patterns", headings

    squad.decide(root, "Marlow", "Move the sync service to Node 22", "node:sqlite needs 22.5 or later.")
    scribe_pass(root, now="2026-11-26T16:20:00Z", affects=["Rai"])
    assert team_file(root, "agents/Rai/history.md").endswith(
        "📌 Team update (2026-11-26T16:20:00Z): Move the sync service to Node 22 — decided by Marlow\n"
    )

    sync(adopted)
    (update,) = AgentMemory.objects.filter(
        project=adopted, content__contains="Team update (2026-11-26T16:20:00Z)"
    )
    assert (update.agent.name, update.type) == ("Rai", "update")


def test_squad_memory_updates_and_sessions_are_adopted_with_their_dates(adopted, fresh_team):
    root = fresh_team
    update = "Rota exports now run nightly at 02:00 CET — Ålesund asked for it."
    session = "Paired with Marlow on the SMS retry queue; next: alerting when it backs up."
    squad.memory(root, "Rai", "updates", update, now="2026-11-20T09:30:00Z")
    squad.memory(root, "Rai", "sessions", session, now="2026-11-21T14:00:00Z")
    history = team_file(root, "agents/Rai/history.md")
    assert "## Decisions\n\n### 2026-11-20\n\n" + update in history
    assert "## Context\n\n### 2026-11-21\n\n" + session in history

    sync(adopted)
    memories = AgentMemory.objects.filter(project=adopted, agent__name="Rai")
    (decided,) = [m for m in memories if update in m.content]
    (context_entry,) = [m for m in memories if session in m.content]
    assert decided.created_at.astimezone(UTC).date().isoformat() == "2026-11-20"
    assert context_entry.created_at.astimezone(UTC).date().isoformat() == "2026-11-21"


def test_canon_decision_with_sub_headings_and_rules_reads_as_one_decision_in_squad(adopted, fresh_team):
    root = fresh_team
    decision = services.decision_create(
        project=adopted,
        agent_name="Marlow",
        type="technical",
        title="Queue jobs in PostgreSQL",
        content=(
            "Jobs are rows in PostgreSQL.\n\n## Details\n\nWorkers claim rows with SKIP LOCKED.\n\n---\n\n"
            "Revisit when the queue passes 50 jobs a second (Tromsø peak)."
        ),
        by=COORDINATOR,
    )
    export(adopted)
    log = team_file(root, "decisions.md")

    read = squad.parse_decisions(log)
    titles = [d["title"] for d in read]
    mine = [d for d in read if d["title"] == canon_heading_title(decision)]
    assert len(mine) == 1 and "Details" not in titles, titles
    body = mine[0]["body"]
    assert not _ESCAPED.search(body), body
    assert "Workers claim rows with SKIP LOCKED." in body and "Revisit when the queue" in body
    entries = [e for e in squad.split_entries(log)["entries"] if "Workers claim rows" in e["text"]]
    assert len(entries) == 1 and "Queue jobs in PostgreSQL" in entries[0]["heading"], entries


def test_blocks_nap_archives_are_archived_in_the_ledger_and_not_written_back(adopted, fresh_team):
    root = fresh_team
    today = datetime.now(UTC)
    old = [f"Sync contract v{n}: fields frozen for the Bergen trawler fleet" for n in range(1, 31)]
    for n, summary in enumerate(old, start=1):
        squad.decide(
            root,
            "Marlow" if n % 2 else "Juno",
            summary,
            f"Version {n} of the sync contract keeps every field of v{n - 1}; new fields are optional and "
            "clients ignore what they do not know. The web and mobile clients build on it; the skippers' "
            "tablets upgrade when they next dock (Ålesund, Bergen, Tromsø, Bodø, Hammerfest). " * 4,
            now=squad.iso(today - timedelta(days=100 - n)),
        )
    recent = "Sync contract v31: position updates every ten seconds"
    squad.decide(root, "Marlow", recent, "Ten seconds keeps the map live without draining satellite links.")
    scribe_pass(root, now=squad.iso(today))
    assert len(team_file(root, "decisions.md").encode()) > 20 * 1024
    sync(adopted)

    squad.nap(root)
    archive = team_file(root, "decisions-archive.md")
    assert all(summary in archive for summary in old)

    sync(adopted)
    decisions = list(Decision.objects.filter(project=adopted))
    status = {s: [d.status for d in decisions if s in d.title] for s in [*old, recent]}
    assert {s: status[s] for s in old} == {s: ["archived"] for s in old}
    assert status[recent] == ["active"]
    log = team_file(root, "decisions.md")
    assert not [summary for summary in old if summary in log]
    in_log = {e["heading"] for e in squad.split_entries(log)["entries"]}
    in_archive = {
        e["heading"] for e in squad.split_entries(team_file(root, "decisions-archive.md"))["entries"]
    }
    assert not in_log & in_archive
