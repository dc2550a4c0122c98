"""`decisions/inbox/*.md`: each new file a pending entry, unless the ledger has that slug with other
text; and the files that left the inbox, merged into the log by Squad's Scribe (found by their words)
or removed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from ledger import services
from ledger.mirror import fs, manifest, squad
from ledger.mirror.adopt.foreign import MAX_IMPORT_BYTES, foreign_text, remember
from ledger.mirror.adopt.proposals import Proposal, parse_inbox_file
from ledger.mirror.paths import Layout
from ledger.mirror.render import sha
from ledger.mirror.reports import ImportReport
from ledger.models import Agent, Decision, EntryStatus, InboxEntry, MirrorFile, Project
from ledger.values import InvalidValue, agent_key, agent_segment


def _normalised(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def _words(text: str) -> set[str]:
    return set(_normalised(text).split())


_Candidate = TypeVar("_Candidate")

# How much of an entry's wording a block must hold to be the one Squad's Scribe merged it into.
MERGED_OVERLAP = 0.9


def _merged_into(
    entry: InboxEntry, candidates: list[_Candidate], text: Callable[[_Candidate], tuple[str, str]]
) -> _Candidate | None:
    """The new block that took in this entry's text: the one holding most of its words (at least 90%),
    else one with the same title. `text` gives a candidate's (title, whole text)."""
    wanted = _words(f"{entry.title} {entry.content} {entry.rationale}")
    best, score = None, MERGED_OVERLAP
    for candidate in candidates:
        overlap = len(wanted & _words(text(candidate)[1])) / len(wanted) if wanted else 0
        if overlap >= score:
            best, score = candidate, overlap
    if best is not None:
        return best
    title = _normalised(entry.title)
    return next((c for c in candidates if title and _normalised(text(c)[0]) == title), None)


def _decision_text(decision: Decision) -> tuple[str, str]:
    return decision.title, decision.markdown


def _block_text(block: squad.Block) -> tuple[str, str]:
    return block.title, block.text


def taken_by_squad(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    new: list[squad.Block],
) -> dict[str, InboxEntry]:
    """New blocks of the log that are a decided entry's team file, which Squad took into the log before
    Canon's export took it out of the inbox (sha256 of the block -> the entry): the file is gone, and the
    block holds its words."""
    prefix = layout.inbox + "/"
    gone = [
        path[len(prefix) :]
        for path, row in files.items()
        if path.startswith(prefix) and row.adopted and workspace.kind(path) == "absent"
    ]
    if not gone or not new:
        return {}
    taken: dict[str, InboxEntry] = {}
    candidates = list(new)
    decided = InboxEntry.objects.filter(project=project, file__in=gone).exclude(status=EntryStatus.PENDING)
    for entry in decided.select_related("decision"):
        block = _merged_into(entry, candidates, _block_text)
        if block is not None:
            taken[sha(block.text)] = entry
            candidates.remove(block)
    return taken


def import_inbox(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    adopted: list[Decision],
    progress: Callable[[str], None] | None,
) -> None:
    kind = workspace.kind(layout.inbox)
    if kind not in ("dir", "absent"):
        report.skipped.append((layout.inbox, "a symbolic link" if kind == "link" else "not a folder"))
        return
    names = [n for n in workspace.files(layout.inbox) if not n.startswith(fs.TEMP_PREFIX)]
    agent_folders = workspace.folders(layout.agents) if workspace.kind(layout.agents) == "dir" else []
    by_file = {e.file: e for e in InboxEntry.objects.filter(project=project).exclude(file="")}
    parsed: list[tuple[str, str, Proposal]] = []
    for name in names:
        path = layout.inbox_file(name)
        if progress:
            progress(path)
        kind = workspace.kind(path)
        if kind != "file":
            report.skipped.append((path, "a symbolic link" if kind == "link" else "not a regular file"))
            continue
        found = foreign_text(workspace, path, files.get(path), report, limit=MAX_IMPORT_BYTES)
        if found is None:
            continue
        text, digest = found
        if name in by_file:
            earlier = by_file[name]
            if earlier.status == EntryStatus.PENDING or path in files:
                report.conflicts.append(
                    (path, f"edited since it was imported as {earlier.slug!r}; the ledger keeps its text")
                )
                continue
            # Canon took the decided entry's file out of the inbox; this is a new file under that name.
            if not report.dry_run:
                services.entry_file_release(project=project, entry_id=earlier.pk)
            del by_file[name]
        try:
            proposal = parse_inbox_file(project, name, text, agent_folders)
        except ValueError as exc:
            report.skipped.append((path, str(exc)))
            continue
        parsed.append((name, digest, proposal))
    _create_entries(project, layout, files, report, parsed)
    _gone_inbox_files(project, layout, files, report, set(names), by_file, adopted)


def _create_entries(
    project: Project,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    parsed: list[tuple[str, str, Proposal]],
) -> None:
    existing = {
        e.slug: e
        for e in InboxEntry.objects.select_related("agent").filter(
            project=project, slug__in=[p.slug for _, _, p in parsed]
        )
    }
    claimed: dict[str, str] = {}
    # The agent each name was last found or created as: the next file by the same agent asks no query.
    agents: dict[str, Agent] = {}
    for name, digest, proposal in parsed:
        path = layout.inbox_file(name)
        if proposal.slug in claimed:
            report.conflicts.append(
                (path, f"slug {proposal.slug!r} is also claimed by {claimed[proposal.slug]}")
            )
            continue
        claimed[proposal.slug] = path
        entry = existing.get(proposal.slug)
        if entry is not None and _same_text(entry, proposal):
            report.unchanged.append(path)
            if not report.dry_run:
                remember(manifest.entry(project, files, path), digest=digest, parts={}, placed=set())
            continue
        if entry is not None:
            free = (
                _free_slug(project, proposal)
                if entry.status != EntryStatus.PENDING and entry.file != name
                else None
            )
            if free is None:
                report.conflicts.append(
                    (path, f"the ledger already has {proposal.slug!r} ({entry.status}) with other text")
                )
                continue
            # A new proposal under a decided entry's slug, whose file has left the inbox: de-collided as
            # every proposal is (`{slug}--{agent}`).
            proposal.slug = free
        if report.dry_run:
            report.created.append(proposal.slug)
            continue
        try:
            created = services.entry_import(
                project=project,
                agent_name=proposal.agent,
                slug=proposal.slug,
                type=proposal.type,
                title=proposal.title[: services.TITLE_MAX_LENGTH],
                content=proposal.content,
                rationale=proposal.rationale,
                tags=proposal.tags,
                importance=proposal.importance,
                run_id=proposal.run_id,
                file=name,
                created_at=proposal.date,
                known=agents.get(proposal.agent),
            )
        except services.Conflict as exc:
            report.conflicts.append((path, exc.message))
            continue
        except services.LedgerError as exc:
            report.skipped.append((path, exc.message))
            continue
        agents[proposal.agent] = created.agent
        remember(
            manifest.entry(project, files, path),
            digest=digest,
            parts={digest: f"entry:{created.pk}"},
            placed=set(),
        )
        report.created.append(created.slug)


def _free_slug(project: Project, proposal: Proposal) -> str | None:
    """The first of `{slug}--{agent}`, `{slug}--{agent}--2`, … no entry of the project has; None when none
    of the first hundred is free."""
    try:
        segment = agent_segment(services.adopted_agent_name(proposal.agent))
    except InvalidValue:
        return None
    base = f"{proposal.slug}--{segment}"
    taken = set(
        InboxEntry.objects.filter(project=project, slug__startswith=base).values_list("slug", flat=True)
    )
    return next((c for c in (base, *(f"{base}--{n}" for n in range(2, 101))) if c not in taken), None)


def _same_text(entry: InboxEntry, proposal: Proposal) -> bool:
    try:
        same_agent = entry.agent.key == agent_key(proposal.agent)
    except InvalidValue:
        return False
    return (
        same_agent
        and entry.type == proposal.type
        and entry.title.strip() == proposal.title
        and entry.content.strip() == proposal.content.strip()
        and entry.rationale.strip() == proposal.rationale.strip()
    )


def _gone_inbox_files(
    project: Project,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    present: set[str],
    by_file: dict[str, InboxEntry],
    adopted: list[Decision],
) -> None:
    """Inbox files Canon knew that are gone: merged into the log by someone else, or removed."""
    prefix = layout.inbox + "/"
    gone = [p for p in files if p.startswith(prefix) and p[len(prefix) :] not in present]
    if not gone:
        return
    # Squad's Scribe appends the block and deletes the file in one commit: the block is new in this import.
    candidates = list(adopted)
    for path in gone:
        entry = by_file.get(path[len(prefix) :])
        if entry is not None and entry.status == EntryStatus.PENDING:
            decision = _merged_into(entry, candidates, _decision_text)
            if decision is not None:
                if not report.dry_run:
                    services.entry_merged_outside(
                        project=project, entry_id=entry.pk, decision=decision, by="squad (decisions.md)"
                    )
                    candidates.remove(decision)
                report.merged.append(
                    (path, f"{entry.slug!r} merged into {layout.decisions}: {decision.title}")
                )
            else:
                report.skipped.append(
                    (
                        path,
                        f"removed outside Canon; {entry.slug!r} stays pending, its file is not written again",
                    )
                )
        if not report.dry_run and files[path].pk is not None:
            files.pop(path).delete()
