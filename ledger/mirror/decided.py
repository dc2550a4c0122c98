"""The team's inbox files a coordinator decided: out of the inbox, as Squad's Scribe takes out the files
it merges (docs/mirror.md "What Canon reads and writes").

A team's inbox file whose entry a coordinator merged or rejected leaves the inbox (a copy kept first) if
it still holds the bytes Canon imported; a merged decision that still says what the file says goes into
the log as the file's own text.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass

from django.utils import timezone

from ledger import services
from ledger.mirror import backups, fs, render
from ledger.mirror.adopt.foreign import MAX_IMPORT_BYTES
from ledger.mirror.adopt.proposals import parse_inbox_file
from ledger.mirror.manifest import FileState
from ledger.mirror.paths import Layout
from ledger.mirror.render import sha
from ledger.mirror.reports import ExportReport
from ledger.models import EntryStatus, InboxEntry, MirrorFile, Project


@dataclass
class Decided:
    """A team's inbox file (imported: adopted in the manifest) whose entry a coordinator has merged or
    rejected, still holding the bytes Canon imported (`data`): it leaves the inbox, as Squad's Scribe
    removes the files it merges, so that Squad's `nap` never merges it again."""

    path: str
    row: FileState
    entry: InboxEntry
    data: bytes


def decided_inbox_files(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, FileState],
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


def keep_team_text(project: Project, decided: list[Decided]) -> None:
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


def remove_decided(
    project: Project,
    workspace: fs.Workspace,
    files: dict[str, FileState],
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
        copy = backups.backup(current, project_slug=project.slug, relative=path, when=timezone.now())
        report.backed_up.append((path, str(copy)))
        try:
            workspace.remove(path)
        except (OSError, fs.UnsafePath) as exc:
            report.errors.append((path, f"could not remove: {getattr(exc, 'strerror', None) or exc}"))
            continue
        MirrorFile.objects.filter(project=project, path=path).delete()
        files.pop(path, None)
        report.removed.append(path)
