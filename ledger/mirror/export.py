"""Export: the ledger written into the workspace, only where Canon owns the path.

Canon owns a path when the file is absent or holds exactly the bytes Canon last wrote or adopted there
(`MirrorFile`). Any other file is someone else's: the export leaves it as it is and reports it as
kept; the next import adopts it. Before Canon replaces bytes it did not write itself (an adopted file),
it copies them into its data directory and names the copy in the report.

A team's inbox file whose entry a coordinator merged or rejected leaves the inbox, as Squad's Scribe
removes the files it merges (a copy kept first), if it still holds the bytes Canon imported; a merged
decision that still says what the file says goes into the log as the file's own text.

Each write records the bytes it is about to write before it writes them, so a crash at any point leaves
the previous file whole or the new one, and either is still recognised as Canon's. Temporary files a
crash left behind are removed at the next export.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from ledger import services
from ledger.mirror import fs, manifest, render
from ledger.mirror.adopt.foreign import MAX_ADOPT_BYTES, MAX_IMPORT_BYTES
from ledger.mirror.adopt.proposals import parse_inbox_file
from ledger.mirror.paths import BOUNDARIES, PATTERNS, Layout
from ledger.mirror.render import Rendered, sha
from ledger.mirror.reports import ExportReport
from ledger.models import (
    Agent,
    AgentMemory,
    Decision,
    EntryStatus,
    InboxEntry,
    MemoryStatus,
    MirrorFile,
    Project,
    Session,
    Source,
)


@dataclass
class Target:
    """A file the ledger should be in: its path and how to render it from the adopted text (or None)."""

    path: str
    render: Callable[[str | None], Rendered]
    # A team file Canon renders from what it adopted there (the log, histories, now.md). Any other file
    # that was adopted (an imported inbox file) is the team's and never written.
    adoptable: bool = False
    agent: Agent | None = None
    entry: InboxEntry | None = None


def _fixed(text: str) -> Callable[[str | None], Rendered]:
    return lambda _base: Rendered(text=text)


def targets(project: Project, layout: Layout, files: dict[str, MirrorFile]) -> list[Target]:
    decisions = list(
        Decision.objects.filter(project=project).select_related("agent").order_by("created_at", "id")
    )
    decisions_row = files.get(layout.decisions)
    found = [
        Target(
            layout.decisions,
            lambda base: render.render_decisions(
                decisions,
                path=layout.decisions,
                base=base,
                known=decisions_row.parts if decisions_row else {},
                placed=decisions_row.placed if decisions_row else [],
            ),
            adoptable=True,
        ),
        Target(BOUNDARIES, _fixed(render.render_boundaries(decisions))),
    ]
    memories = list(
        AgentMemory.objects.filter(project=project)
        # Archived memories are gone from the files, except the lines the team wrote (adopted ones).
        .exclude(Q(status=MemoryStatus.ARCHIVED) & ~Q(source=Source.IMPORT))
        # A memory indexed from a notes file lives in that file, which Canon only reads.
        .exclude(source=Source.NOTES)
        .select_related("agent")
        .order_by("created_at", "id")
    )
    found.append(Target(PATTERNS, _fixed(render.render_patterns(memories))))
    found += _history_targets(project, layout, files, memories)
    found += _inbox_targets(project, layout, files)
    session = Session.objects.filter(project=project, ended_at__isnull=True).first()
    if session is not None:
        found.append(
            Target(
                layout.now, lambda base: Rendered(text=render.render_now(session, base=base)), adoptable=True
            )
        )
    return found


def _history_targets(
    project: Project, layout: Layout, files: dict[str, MirrorFile], memories: list[AgentMemory]
) -> list[Target]:
    """A history for every folder an agent has (adopted, or written by Canon) and for its home folder.

    A memory adopted from a history is rendered in that file only; Canon's own memories go to the
    agent's home alone (`render.history_homes`), so two folders of one agent (`Rai/`, `rai/`) never
    receive each other's lines.
    """
    adopted_from: dict[str, list[AgentMemory]] = {}
    own: dict[int, list[AgentMemory]] = {}
    for memory in memories:
        if memory.origin:
            adopted_from.setdefault(memory.origin, []).append(memory)
        else:
            own.setdefault(memory.agent_id, []).append(memory)
    # The history files each agent has, adopted ones first, the first adopted first.
    held: dict[int, list[tuple[tuple[bool, datetime, str], str]]] = {}
    for file in files.values():
        folder = file.path.removeprefix(layout.agents + "/").split("/")[0]
        if file.agent_id and file.path == layout.history(folder):
            order = (not file.adopted, file.adopted_at or file.updated_at, folder)
            held.setdefault(file.agent_id, []).append((order, folder))
    folders = {agent_id: [folder for _, folder in sorted(found)] for agent_id, found in held.items()}
    agents = list(Agent.objects.filter(project=project, pk__in=set(own) | set(folders)).order_by("pk"))
    homes = render.history_homes(agents, folders)
    found = []
    for agent in agents:
        home = layout.history(homes[agent.pk])
        for path in sorted({home, *(layout.history(f) for f in folders.get(agent.pk, []))}):
            row = files.get(path)
            shown = adopted_from.get(path, []) + (own.get(agent.pk, []) if path == home else [])
            shown.sort(key=lambda m: (m.created_at, m.pk))

            def draw(
                base: str | None,
                agent: Agent = agent,
                row: MirrorFile | None = row,
                shown: list[AgentMemory] = shown,
            ) -> Rendered:
                return render.render_history(
                    agent,
                    shown,
                    base=base,
                    known=row.parts if row else {},
                    placed=row.placed if row else [],
                )

            found.append(Target(path, draw, adoptable=True, agent=agent))
    return found


def _inbox_targets(project: Project, layout: Layout, files: dict[str, MirrorFile]) -> list[Target]:
    """A file for each pending entry that has none yet, and Canon's own files of pending entries."""
    found = []
    for entry in (
        InboxEntry.objects.filter(project=project, status=EntryStatus.PENDING)
        .select_related("agent")
        .order_by("slug")
    ):
        path = layout.inbox_file(entry.file or f"{entry.slug}.md")
        row = files.get(path)
        if entry.file and (row is None or row.adopted or not row.sha256):
            continue  # the team's file, or one removed outside Canon: never written again
        found.append(Target(path, _fixed(render.render_inbox_file(entry)), entry=entry))
    return found


# ---------------------------------------------------------------------------------------------
# The team's inbox files a coordinator decided


@dataclass
class Decided:
    """A team's inbox file (imported: adopted in the manifest) whose entry a coordinator has merged or
    rejected, still holding the bytes Canon imported (`data`): it leaves the inbox, as Squad's Scribe
    removes the files it merges, so that Squad's `nap` never merges it again."""

    path: str
    row: MirrorFile
    entry: InboxEntry
    data: bytes


def _decided_inbox_files(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ExportReport,
) -> list[Decided]:
    """The team's inbox files whose entries are merged or rejected and that still hold what Canon
    imported. One edited since is kept and reported; one already gone is left to the next import, which
    finds where Squad put it."""
    prefix = layout.inbox + "/"
    adopted = {
        path[len(prefix) :]: row for path, row in files.items() if path.startswith(prefix) and row.adopted
    }
    names = sorted(adopted)
    entries: list[InboxEntry] = []
    for start in range(0, len(names), 500):
        entries += InboxEntry.objects.filter(
            project=project,
            file__in=names[start : start + 500],
            status__in=[EntryStatus.MERGED, EntryStatus.REJECTED],
        ).select_related("decision", "decision__agent")
    found = []
    for entry in sorted(entries, key=lambda e: e.file):
        path = layout.inbox_file(entry.file)
        row = adopted[entry.file]
        try:
            current = workspace.read(path, max_bytes=MAX_IMPORT_BYTES)
        except (fs.UnsafePath, fs.FileTooLarge) as exc:
            report.kept.append((path, f"{exc or 'too large'}; left in place"))
            continue
        if current is None:
            continue
        if not row.owns(sha(current)):
            report.kept.append(
                (
                    path,
                    f"edited outside Canon since it was imported; {entry.slug!r} is {entry.status}, "
                    "so the file stays in the inbox until someone removes it",
                )
            )
            continue
        found.append(Decided(path, row, entry, current))
    return found


def _says_the_same(project: Project, decided: Decided, text: str) -> bool:
    """Whether the decision merged from this file still says what the file says (its title, content and
    rationale as the import reads them): neither the entry nor the decision was edited since."""
    decision = decided.entry.decision
    if decision is None:
        return False
    try:
        proposal = parse_inbox_file(project, decided.entry.file, text, [])
    except ValueError:
        return False
    title = proposal.title[: services.TITLE_MAX_LENGTH].strip() or decided.entry.slug
    return (decision.title, decision.content.strip(), decision.rationale.strip()) == (
        title,
        proposal.content.strip(),
        proposal.rationale.strip(),
    )


def _keep_team_text(project: Project, decided: list[Decided]) -> None:
    """A decision merged from a team's inbox file that still says what the file says is written into the
    log as the file's own text, as Squad's Scribe would append it (`render.inbox_block`), and known by it
    from then on; any other keeps Canon's block."""
    for item in decided:
        decision = item.entry.decision
        if decision is None or decision.markdown:
            continue
        try:
            text = item.data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        block = render.inbox_block(text)
        if block is not None and _says_the_same(project, item, text):
            # Text the database cannot store keeps Canon's block.
            with suppress(services.LedgerError):
                services.entry_file_text_keep(project=project, entry=item.entry, markdown=block)


def _remove_decided(
    project: Project,
    workspace: fs.Workspace,
    files: dict[str, MirrorFile],
    decided: list[Decided],
    report: ExportReport,
) -> None:
    """Take each decided team file out of the inbox, a copy of it first into Canon's data directory, if it
    still holds the bytes read before the log was written."""
    for item in decided:
        path = item.path
        if report.dry_run:
            report.backed_up.append((path, "(a copy in the data directory)"))
            report.removed.append(path)
            continue
        try:
            current = workspace.read(path, max_bytes=MAX_IMPORT_BYTES)
        except (fs.UnsafePath, fs.FileTooLarge) as exc:
            report.kept.append((path, f"{exc or 'too large'}; left in place"))
            continue
        if current != item.data:
            if current is not None:
                report.kept.append((path, "changed outside Canon while it was exported; left in place"))
            continue
        copy = fs.backup(current, project_slug=project.slug, relative=path, when=timezone.now())
        report.backed_up.append((path, str(copy)))
        try:
            workspace.remove(path)
        except (OSError, fs.UnsafePath) as exc:
            report.errors.append((path, f"could not remove: {getattr(exc, 'strerror', None) or exc}"))
            continue
        if item.row.pk is not None:
            item.row.delete()
        files.pop(path, None)
        report.removed.append(path)


# ---------------------------------------------------------------------------------------------


@dataclass
class Write:
    """A file the export is about to replace or create, with the manifest row that will record it."""

    target: Target
    row: MirrorFile
    data: bytes
    rendered: Rendered


def _plan(
    project: Project,
    workspace: fs.Workspace,
    files: dict[str, MirrorFile],
    target: Target,
    report: ExportReport,
) -> Write | None:
    """What to do at `target.path`: None when the file is not Canon's to write, or already right."""
    path = target.path
    row = files.get(path)
    try:
        current = workspace.read(path, max_bytes=MAX_ADOPT_BYTES)
    except fs.UnsafePath as exc:
        report.errors.append((path, str(exc)))
        return None
    except fs.FileTooLarge:
        report.kept.append((path, f"larger than {MAX_ADOPT_BYTES} bytes: not Canon's to replace"))
        return None
    if current is None and row is not None and row.adopted:
        report.kept.append((path, "removed outside Canon after it was adopted; not written again"))
        return None
    theirs = current is not None and (
        row is None or not row.owns(sha(current)) or (row.adopted and not target.adoptable)
    )
    if theirs:
        if not target.adoptable:
            reason = "not written by Canon; left as it is"
        elif row is None:
            reason = "the team's file: the next sync adopts it before Canon writes here"
        else:
            reason = "changed outside Canon since it was last written or adopted; the next sync adopts it"
        report.kept.append((path, reason))
        return None
    base = current.decode("utf-8") if current is not None and row is not None and row.adopted else None
    rendered = target.render(base)
    data = rendered.text.encode("utf-8")
    row = manifest.entry(project, files, path)
    row.agent = target.agent or row.agent
    if data == current:
        report.unchanged.append(path)
        if row.parts != rendered.parts or row.placed != rendered.placed:
            row.parts, row.placed = rendered.parts, rendered.placed
            return Write(target, row, b"", rendered)  # the manifest changes, the file does not
        return None
    if current is not None and sha(current) not in (row.sha256, row.pending_sha256):
        # Bytes Canon did not write itself: keep a copy before they are replaced.
        if report.dry_run:
            report.backed_up.append((path, "(a copy in the data directory)"))
        else:
            copy = fs.backup(current, project_slug=project.slug, relative=path, when=timezone.now())
            row.backup = str(copy)
            report.backed_up.append((path, str(copy)))
    row.pending_sha256 = sha(data)
    return Write(target, row, data, rendered)


def _save(rows: list[MirrorFile]) -> None:
    """Store manifest rows in one statement per 500 (an upsert on the project and path)."""
    now = timezone.now()
    for row in rows:
        row.updated_at = now
    MirrorFile.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["project", "path"],
        update_fields=["sha256", "pending_sha256", "backup", "parts", "placed", "agent", "updated_at"],
    )


def _apply(workspace: fs.Workspace, writes: list[Write], report: ExportReport) -> None:
    """Record what is about to be written, write each file, then record what was written. A crash in
    between leaves every file either as it was or as it was to be, and both are recognised as Canon's."""
    _save([w.row for w in writes])
    done = []
    entries = []
    for write in writes:
        if not write.data:
            continue
        path = write.target.path
        try:
            workspace.write(path, write.data)
        except (OSError, fs.UnsafePath) as exc:
            report.errors.append((path, f"could not write: {getattr(exc, 'strerror', None) or exc}"))
            continue
        write.row.sha256, write.row.pending_sha256 = write.row.pending_sha256, ""
        write.row.parts, write.row.placed = write.rendered.parts, write.rendered.placed
        done.append(write.row)
        if write.target.entry is not None and not write.target.entry.file:
            entries.append(write.target.entry.pk)
        report.written.append(path)
    _save(done)
    # A new entry's file is named after its slug (`_inbox_targets`).
    for start in range(0, len(entries), 500):
        InboxEntry.objects.filter(pk__in=entries[start : start + 500], file="").update(
            file=Concat(F("slug"), Value(".md"))
        )


def _remove_stale(
    workspace: fs.Workspace, files: dict[str, MirrorFile], wanted: set[str], report: ExportReport
) -> None:
    """Remove the files Canon wrote whose source is gone, if they are still exactly what it wrote."""
    for path in sorted(set(files) - wanted):
        row = files[path]
        if row.adopted or not row.sha256:
            continue
        try:
            current = workspace.read(path, max_bytes=MAX_ADOPT_BYTES)
        except (fs.UnsafePath, fs.FileTooLarge) as exc:
            report.kept.append((path, f"{exc or 'too large'}; left in place"))
            continue
        if current is not None and not row.owns(sha(current)):
            report.kept.append((path, "edited outside Canon since Canon wrote it; left in place"))
            continue
        if not report.dry_run:
            if current is not None:
                workspace.remove(path)
            if row.pk is not None:
                row.delete()
            files.pop(path)
        if current is not None:
            report.removed.append(path)


def export_project(
    project: Project, *, dry_run: bool = False, progress: Callable[[str], None] | None = None
) -> ExportReport:
    """Bring the files Canon owns in line with the ledger. MirrorError if the workspace is unusable."""
    root = manifest.workspace_root(project)
    report = ExportReport(dry_run=dry_run)
    with manifest.project_lock(project), fs.Workspace(root) as workspace:
        layout = Layout.of(workspace)
        files = manifest.load(project, workspace, dry_run=dry_run)
        if not dry_run:
            for folder in {*layout.folders_written(), *(p.rsplit("/", 1)[0] for p in files)}:
                # A folder that is a link is reported by the write that needs it.
                with suppress(fs.UnsafePath):
                    workspace.clean_temp_files(folder)
        decided = _decided_inbox_files(project, workspace, layout, files, report)
        if not dry_run:
            _keep_team_text(project, decided)
        wanted = set()
        writes = []
        for target in sorted(targets(project, layout, files), key=lambda t: t.path):
            if progress:
                progress(target.path)
            wanted.add(target.path)
            write = _plan(project, workspace, files, target, report)
            if write is None:
                continue
            if not dry_run:
                writes.append(write)
            elif write.data:
                report.written.append(target.path)
        if not dry_run:
            _apply(workspace, writes, report)
        _remove_decided(project, workspace, files, decided, report)
        _remove_stale(workspace, files, wanted, report)
    return report
