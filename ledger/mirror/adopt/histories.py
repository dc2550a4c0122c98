"""`agents/{folder}/history.md`: each new bullet or paragraph of a typed section a memory of that agent,
a line edited in the file a memory edited; and `history-archive.md`, where older sections move."""

from __future__ import annotations

from collections.abc import Callable
from difflib import SequenceMatcher

from ledger import services
from ledger.mirror import fs, manifest, squad
from ledger.mirror.adopt.foreign import MAX_ADOPT_BYTES, counted, foreign_text, remember
from ledger.mirror.paths import Layout
from ledger.mirror.render import key, sha
from ledger.mirror.reports import ImportReport
from ledger.mirror.squad import coverage
from ledger.models import Agent, AgentMemory, MemoryStatus, MirrorFile, Project


def adopt_histories(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    progress: Callable[[str], None] | None,
) -> None:
    if workspace.kind(layout.agents) != "dir":
        return
    for folder in workspace.folders(layout.agents):
        path = layout.history(folder)
        if progress:
            progress(path)
        known = files.get(path)
        previous = dict(known.parts) if known is not None else {}
        found = foreign_text(workspace, path, known, report, limit=MAX_ADOPT_BYTES)
        if found is None:
            continue
        text, digest = found
        row = manifest.entry(project, files, path)
        parsed = squad.parse_history(text)
        entries = [part for part in parsed if isinstance(part, squad.Entry)]
        parts = {sha(e.text): row.parts[sha(e.text)] for e in entries if sha(e.text) in row.parts}
        new = list({sha(e.text): e for e in entries if sha(e.text) not in parts}.values())
        if report.dry_run:
            report.adopted.append((path, f"would adopt {counted(len(new), 'memory', 'memories')}"))
            continue
        gone = {d: k for d, k in previous.items() if d not in parts and k.startswith("agentmemory:")}
        for moved in _history_archive(
            project, workspace, layout.history_archive(folder), files, report, gone
        ):
            gone.pop(moved)
        try:
            agent = row.agent if row.agent is not None else _folder_agent(project, folder)
            memories = services.memories_adopt(
                project=project,
                agent_name=agent.name,
                items=[
                    services.Adopted(
                        markdown=squad.without_controls(e.text),
                        content=squad.without_controls(e.content),
                        type=e.type,
                        date=e.date,
                    )
                    for e in new
                ],
                origin=path,
            )
        except services.Conflict as exc:
            # A folder named like another agent (look-alike letters): that history waits, the rest goes on.
            report.skipped.append((path, f"{exc.message}; left untouched"))
            continue
        parts.update({sha(e.text): key(m) for e, m in zip(new, memories, strict=True)})
        row.agent = agent
        remember(row, digest=digest, parts=parts, placed=set(parts.values()))
        edited = services.memories_edited_outside(
            project=project, replaced=_edited_in_place(project, list(gone.values()), memories), origin=path
        )
        for old, replacement in edited:
            report.edited.append(
                (path, f"memory {old.pk} edited in the file; memory {replacement.pk} holds the edited text")
            )
        report.adopted.append((path, f"{counted(len(memories), 'memory', 'memories')} adopted"))
        report.lines.append((path, coverage.line_report(parsed).describe()))


def _history_archive(
    project: Project,
    workspace: fs.Workspace,
    path: str,
    files: dict[str, MirrorFile],
    report: ImportReport,
    gone: dict[str, str],
) -> list[str]:
    """`agents/{folder}/history-archive.md`, where Squad's `nap` moves the older sections of a history
    over 15 KB. Canon only reads it: a memory whose entry left the history for it is archived. Returns
    the sha256 of the entries that arrived there (keys of `gone`)."""
    found = foreign_text(workspace, path, files.get(path), report, limit=MAX_ADOPT_BYTES)
    if found is None:
        return []
    text, digest = found
    entries = [part for part in squad.parse_history(text) if isinstance(part, squad.Entry)]
    arrived = {sha(e.text): gone[sha(e.text)] for e in entries if sha(e.text) in gone}
    ids = [int(k.split(":", 1)[1]) for k in arrived.values()]
    archived = services.memories_archived_outside(project=project, memory_ids=ids, origin=path)
    row = manifest.entry(project, files, path)
    parts = {**{d: k for d, k in row.parts.items() if d in {sha(e.text) for e in entries}}, **arrived}
    remember(row, digest=digest, parts=parts, placed=set(parts.values()))
    if archived:
        report.archived.append((path, f"{counted(len(archived), 'memory', 'memories')} moved here, archived"))
    return list(arrived)


# How alike a line someone edited must stay to its old text to count as the same memory edited.
EDITED_LIKENESS = 0.6


def _edited_in_place(
    project: Project, gone: list[str], adopted: list[AgentMemory]
) -> list[tuple[AgentMemory, AgentMemory]]:
    """Pairs (old, new): a memory whose text left the file and a memory adopted from the file in the same
    import whose text is at least `EDITED_LIKENESS` alike (an address scrubbed, a typo fixed); each memory
    in at most one pair, most alike first."""
    if not gone or not adopted:
        return []
    ids = [int(k.split(":", 1)[1]) for k in gone]
    olds = list(
        AgentMemory.objects.filter(project=project, pk__in=ids, status=MemoryStatus.ACTIVE).only(
            "pk", "content", "status", "agent_id"
        )
    )
    scored = []
    for old in olds:
        for new in adopted:
            if new.agent_id != old.agent_id:
                continue
            matcher = SequenceMatcher(None, old.content, new.content, autojunk=False)
            if matcher.real_quick_ratio() >= EDITED_LIKENESS and matcher.quick_ratio() >= EDITED_LIKENESS:
                ratio = matcher.ratio()
                if ratio >= EDITED_LIKENESS:
                    scored.append((ratio, old, new))
    pairs = []
    taken_old: set[int] = set()
    taken_new: set[int] = set()
    for _, old, new in sorted(scored, key=lambda item: -item[0]):
        if old.pk not in taken_old and new.pk not in taken_new:
            pairs.append((old, new))
            taken_old.add(old.pk)
            taken_new.add(new.pk)
    return pairs


def _folder_agent(project: Project, folder: str) -> Agent:
    return services.agent_get_or_create(project=project, name=services.adopted_agent_name(folder))
