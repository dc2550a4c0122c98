"""Export: the ledger written into the workspace, only where Canon owns the path, at the cost of what
changed.

Canon owns a path when the file is absent or holds exactly the bytes Canon last wrote or adopted there
(`MirrorFile`). Any other file is someone else's: the export leaves it as it is and reports it as
kept; the next import adopts it. Before Canon replaces bytes it did not write itself (an adopted file),
it copies them into its data directory and names the copy in the report.

A team's inbox file whose entry a coordinator merged or rejected leaves the inbox (`decided`).

An export looks at the files the rows written since the last one touch (`changes`, `partial`); every
other file is as the last export left it, unless what the workspace shows of it (size, modification
time, inode: `fs.seen`) changed since. A file is rendered only when the fingerprint of its inputs
(`targets`) changed, and in it the rows that did not change keep the text the file holds (`pieces`,
`splice`). `full=True` renders and reads every file, as a repair: after the database was restored from
a backup, say (docs/mirror.md "What an export does").

Each write records the bytes it is about to write before it writes them, so a crash at any point leaves
the previous file whole or the new one, and either is still recognised as Canon's; a new file is
recorded whole before it is renamed in, so a crash before leaves no file, which the next export writes.
Temporary files a crash left behind are removed at the next export.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db.models import F, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from ledger.mirror import backups, changes, chunks, decided, fs, manifest, partial, pieces
from ledger.mirror.adopt.foreign import MAX_ADOPT_BYTES
from ledger.mirror.manifest import FileState
from ledger.mirror.paths import Layout
from ledger.mirror.pieces import Cache
from ledger.mirror.render import Rendered, sha
from ledger.mirror.reports import ExportReport
from ledger.mirror.sources import Sources
from ledger.mirror.targets import Target, entry_paths, targets
from ledger.models import InboxEntry, MirrorFile, Project


@dataclass
class Write:
    """A file the export is about to replace or create (`data`; empty when only the manifest changes),
    with the manifest row that will record it and what the row records once it is written."""

    target: Target
    row: MirrorFile
    data: bytes
    rendered: Rendered
    pieces: dict[str, Any]


def _folders(layout: Layout, paths: Iterable[str]) -> list[str]:
    """The folders an export looks in: those it writes in, and those of the files it wrote before."""
    return sorted({*layout.folders_written(), *(p.rpartition("/")[0] for p in paths)})


def _survey(
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, FileState],
    *,
    clean: bool,
    every: bool,
    left: dict[str, str],
) -> dict[str, str]:
    """What the workspace shows of each file in the folders Canon writes in (`fs.seen`), once the
    temporary files a crash left there are removed (unless `clean` is off: a dry run).

    A folder that shows what it showed when the last export ended (`left`: no file created, removed or
    renamed in it since, a crash's temporary file included) is not listed, unless `every`: its inbox
    files, which only Canon writes, are taken to be as the manifest recorded them; any other file in it
    (the log, a history: files people and Squad edit in place) is looked at alone."""
    found: dict[str, str] = {}
    by_folder: dict[str, list[str]] = {}
    for path in files:
        by_folder.setdefault(path.rpartition("/")[0], []).append(path)
    inbox = layout.inbox + "/"
    for folder in _folders(layout, files):
        try:
            if not every and folder in left and (workspace.folder_seen(folder) or "") == left[folder]:
                for path in by_folder.get(folder, []):
                    shown = files[path].seen if path.startswith(inbox) else workspace.file_seen(path)
                    if shown is not None:
                        found[path] = shown
                continue
            listed = workspace.survey(folder, clean=clean)
        except fs.UnsafePath:
            continue  # a folder that is a link is reported by the file that needs it
        prefix = f"{folder}/" if folder else ""
        found.update((prefix + name, shown) for name, shown in listed.items())
    return found


def _folders_seen(workspace: fs.Workspace, layout: Layout, paths: Iterable[str]) -> dict[str, str]:
    """What each folder an export looks in shows as it ends (`_survey`); "" when it is absent."""
    found = {}
    for folder in _folders(layout, paths):
        try:
            found[folder] = workspace.folder_seen(folder) or ""
        except fs.UnsafePath:
            continue
    return found


def _unchanged(state: FileState | None, inputs: str, seen: dict[str, str]) -> bool:
    """Whether the file is, for all the export can tell, what rendering it would give: its `inputs` and
    the file itself are as the manifest recorded them when Canon last wrote or checked it."""
    return (
        state is not None
        and bool(state.inputs)
        and state.inputs == inputs
        and not state.pending_sha256
        and bool(state.seen)
        and seen.get(state.path) == state.seen
    )


def _plan(
    project: Project,
    workspace: fs.Workspace,
    files: dict[str, MirrorFile],
    target: Target,
    report: ExportReport,
    *,
    full: bool,
    seen: dict[str, str],
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
    digest = sha(current) if current is not None else ""
    theirs = current is not None and (
        row is None or not row.owns(digest) or (row.adopted and not target.adoptable)
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
    held = Cache()
    if row is not None and not full:
        held = pieces.cache(current, row.pieces, digest, row.parts)
    rendered, stamps = target.render(base, row, held)
    data = rendered.text.encode("utf-8")
    written = digest if data == current else sha(data)
    row = manifest.entry(project, files, path)
    if target.agent_id is not None:
        row.agent_id = target.agent_id
    recorded = pieces.record(
        rendered.text,
        rendered.order,
        stamps,
        written,
        marks=rendered.marks,
        lines=rendered.lines,
    )
    if data == current:
        report.unchanged.append(path)
        now = (rendered.parts, rendered.placed, recorded, target.inputs, seen.get(path, ""))
        if (row.parts, row.placed, row.pieces, row.inputs, row.seen) == now:
            return None
        row.inputs, row.seen = target.inputs, seen.get(path, "")
        return Write(target, row, b"", rendered, recorded)  # the manifest changes, the file does not
    if current is not None and digest not in (row.sha256, row.pending_sha256):
        # Bytes Canon did not write itself: keep a copy before they are replaced.
        if report.dry_run:
            report.backed_up.append((path, "(a copy in the data directory)"))
        else:
            copy = backups.backup(current, project_slug=project.slug, relative=path, when=timezone.now())
            row.backup = str(copy)
            report.backed_up.append((path, str(copy)))
    row.pending_sha256 = written
    return Write(target, row, data, rendered, recorded)


def _save_pending(rows: list[MirrorFile]) -> None:
    """Record the bytes about to be written (`pending_sha256`) and the copy of what they replace, by these
    columns alone: the parts a row knows are not written twice (a new row knows none yet)."""
    manifest.store(rows, manifest.PENDING)


def _record(writes: list[tuple[Write, str]]) -> None:
    """Record what each write left (`seen`: what the workspace shows of the file, "" when the file
    stayed as it was): its parts and pieces, and the bytes written. A row that knows many parts (a log
    of thousands of decisions) is updated with the columns that changed alone, its big ones in chunks
    (`ledger.mirror.chunks`); the others are stored together (`_save`), the new big ones with them
    (`chunks.save_many`)."""
    rows: list[MirrorFile] = []
    new: list[MirrorFile] = []
    for write, shown in writes:
        row, rendered = write.row, write.rendered
        now = {"parts": rendered.parts, "placed": rendered.placed, "pieces": write.pieces}
        changed = [name for name, value in now.items() if getattr(row, name) != value]
        row.parts, row.placed, row.pieces = rendered.parts, rendered.placed, write.pieces
        if write.data:
            row.sha256, row.pending_sha256, row.seen = row.pending_sha256, "", shown
        row.inputs = write.target.inputs
        if not chunks.big(row):
            rows.append(row)
            continue
        if row.pk is None:
            new.append(row)
            continue
        row.updated_at = timezone.now()
        MirrorFile.objects.filter(pk=row.pk).update(
            sha256=row.sha256,
            pending_sha256=row.pending_sha256,
            backup=row.backup,
            agent_id=row.agent_id,
            inputs=row.inputs,
            seen=row.seen,
            updated_at=row.updated_at,
            **chunks.stored(row, changed),
        )
        chunks.prune(row)
    chunks.save_many(new, _save)
    _save(rows)


def _save(rows: list[MirrorFile]) -> None:
    """Store manifest rows (an upsert on the project and path)."""
    manifest.store(rows, manifest.RECORDED)


def _apply(workspace: fs.Workspace, writes: list[Write], report: ExportReport) -> None:
    """Record what is about to be written, write the files, then record what was written. A crash in
    between leaves every file either as it was or as it was to be, and both are recognised as Canon's.

    A new file (no manifest row, no file) is recorded whole once it is written durably under its
    temporary name, before it is renamed in: a crash before the rename leaves no file, which the next
    export writes."""
    fresh = {w.target.path: w for w in writes if w.data and w.row.pk is None}
    _save_pending([w.row for w in writes if w.data and w.target.path not in fresh])

    def record_fresh(shown: dict[str, str]) -> None:
        _record([(write, shown[path]) for path, write in fresh.items() if path in shown])

    items = [(w.target.path, w.data) for w in writes if w.data]
    results = workspace.write_many(items, before_rename=record_fresh if fresh else None)
    done = [(w, "") for w in writes if not w.data]
    entries = []
    for write in writes:
        if not write.data:
            continue
        path = write.target.path
        outcome = results.get(path)
        if outcome is None or isinstance(outcome, Exception):
            reason = getattr(outcome, "strerror", None) or outcome or "not written"
            report.errors.append((path, f"could not write: {reason}"))
            continue
        if path not in fresh:
            done.append((write, outcome))
        if write.target.entry_id is not None and not write.target.entry_file:
            entries.append(write.target.entry_id)
        report.written.append(path)
    _record(done)
    # A new entry's file is named after its slug (`targets._inbox_targets`).
    for start in range(0, len(entries), 500):
        InboxEntry.objects.filter(pk__in=entries[start : start + 500], file="").update(
            file=Concat(F("slug"), Value(".md"))
        )


def _remove_stale(
    project: Project,
    workspace: fs.Workspace,
    files: dict[str, FileState],
    wanted: set[str],
    report: ExportReport,
    flagged: list[str],
) -> None:
    """Remove the files Canon wrote whose source is gone, if they are still exactly what it wrote; one
    kept is `flagged`, so that the next export looks at it again."""
    for path in sorted(set(files) - wanted):
        state = files[path]
        if state.adopted or not state.sha256:
            continue
        try:
            current = workspace.read(path, max_bytes=MAX_ADOPT_BYTES)
        except (fs.UnsafePath, fs.FileTooLarge) as exc:
            report.kept.append((path, f"{exc or 'too large'}; left in place"))
            flagged.append(path)
            continue
        if current is not None and not state.owns(sha(current)):
            report.kept.append((path, "edited outside Canon since Canon wrote it; left in place"))
            flagged.append(path)
            continue
        if not report.dry_run:
            if current is not None:
                workspace.remove(path)
            MirrorFile.objects.filter(project=project, path=path).delete()
            files.pop(path)
        if current is not None:
            report.removed.append(path)


def _gather(
    project: Project,
    layout: Layout,
    files: dict[str, FileState],
    rows: Sources,
    look: set[str],
    changed: changes.Changes | None,
    seen: dict[str, str],
    homes: object,
) -> tuple[list[Target], list[str]]:
    """The files the ledger should be in: those of the kinds in `look` with the fingerprints of their
    inputs, and those the `changed` rows touch (`partial`), as targets; and the paths of the others,
    as the last export left them. A file the workspace shows changed has its kind looked at too."""
    found: list[Target] = []
    gone: set[str] = set()
    for kind in sorted(k for k in (changes.DECISION, changes.MEMORY, changes.ENTRY) if changed is not None):
        ids = changed.rows.get(kind) if changed is not None and kind not in look else None
        if not ids or changed is None:
            continue
        mark = changed.mark(kind)
        if kind == changes.ENTRY:
            part: list[Target] | None = targets(kind, project, layout, files, rows, entries=ids)
            gone |= entry_paths(project, layout, ids)
        elif kind == changes.DECISION:
            part = partial.decision_targets(project, layout, files, rows, ids, mark)
        else:
            part = partial.memory_targets(project, layout, files, rows, ids, mark, homes)
        if part is None:
            look.add(kind)
        else:
            found += part
    for kind in sorted(look):
        found += targets(kind, project, layout, files, rows)
    held = {t.path for t in found} | gone
    kept_as_left = set(changes.KINDS) - look
    kinds = changes.kinds_of(files, layout)
    left = [
        path
        for path, state in files.items()
        if kinds[path] in kept_as_left and state.inputs and path not in held
    ]
    again = {kinds[path] for path in left if not _unchanged(files[path], files[path].inputs, seen)}
    if not again:
        return found, left
    found = [t for t in found if changes.kind_of(t.path, layout) not in again]
    for kind in sorted(k for k in again if k is not None):
        found += targets(kind, project, layout, files, rows)
    return found, [path for path in left if kinds[path] not in again]


# More changed entries than this: the export after a write reads the inbox's manifest whole.
FEW_ENTRIES = 250


def _entries_changed(
    project: Project, layout: Layout, last: dict[str, Any], changed: changes.Changes
) -> list[str] | None:
    """The paths the files of the changed entries may have (`entry_paths`); None when there are many,
    or when the last export left an inbox file to look at again."""
    ids = changed.rows.get(changes.ENTRY, set())
    if changes.ENTRY in last.get("recheck", []) or len(ids) > FEW_ENTRIES:
        return None
    return sorted(entry_paths(project, layout, ids))


def _narrowed(
    project: Project, workspace: fs.Workspace, layout: Layout, last: dict[str, Any]
) -> list[str] | None:
    """What the export after a write reads of the inbox's manifest: when no file was created, removed or
    renamed in the inbox folder since the last export (`_survey`), the adopted files (`decided`) and those
    of the entries changed since, the only ones it may write or remove; None: all of it."""
    try:
        shown = workspace.folder_seen(layout.inbox)
    except fs.UnsafePath:
        return None
    if (last.get("folders") or {}).get(layout.inbox) != (shown or ""):
        return None
    return _entries_changed(project, layout, last, changes.read(project))


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while the export runs, and let go after. An export
    makes and drops hundreds of thousands of small objects (a first export, 35,000 rows rendered): each
    burst of them has the collector walk every object the process holds, a tenth of the export's time.
    Reference counting frees them as before; the few cycles wait until the end."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def export_project(
    project: Project,
    *,
    dry_run: bool = False,
    full: bool = False,
    every: bool = True,
    progress: Callable[[str], None] | None = None,
) -> ExportReport:
    """Bring the files Canon owns in line with the ledger, rendering the files whose inputs changed (every
    file with `full`). Unless `every`, a folder unchanged since the last export is not listed (the export
    after a write: `_survey`). MirrorError if the workspace is unusable."""
    root = manifest.workspace_root(project)
    report = ExportReport(dry_run=dry_run)
    with manifest.project_lock(project), fs.Workspace(root) as workspace, _collection_paused():
        layout = Layout.of(workspace)
        last = changes.left_by_last(project)
        # The export after a write reads of the inbox's manifest only what it needs (`_narrowed`).
        keep = None if every or full or dry_run else _narrowed(project, workspace, layout, last)
        inbox = None if keep is None else layout.inbox
        files = manifest.states(project, workspace, dry_run=dry_run, inbox=inbox, keep=keep or ())
        decided_files = decided.decided_inbox_files(project, workspace, layout, files, report)
        # The files this export keeps or cannot write (those from here on) it looks at again next time.
        told = len(report.kept), len(report.errors)
        if not dry_run:
            decided.keep_team_text(project, decided_files)
        # Read after the decisions that took their file's text were written: that change is among them.
        changed = changes.read(project)
        look = set(changes.KINDS)
        trusted = not full and changes.trusted(project, layout, last, changed)
        if keep is not None:
            # Entries changed meanwhile: their files too, or the whole manifest when it cannot be narrowed.
            more = _entries_changed(project, layout, last, changed) if trusted else None
            if more is None:
                files, keep = manifest.states(project, workspace, dry_run=dry_run), None
            elif set(more) - set(keep):
                files.update(manifest.states_where(project, Q(path__in=sorted(set(more) - set(keep)))))
        if trusted:
            # The files the changed rows touch (`_gather`), every file of a kind looked at again.
            look = ({changes.SESSION} & changed.kinds) | (set(last.get("recheck", [])) & changes.KINDS)
        if keep is not None:
            # The inbox files Canon wrote that this export does not read are as the last one left them.
            prefix = f"{layout.inbox}/"
            read = sum(1 for path, state in files.items() if path.startswith(prefix) and not state.adopted)
            report.unread = manifest.count_under(project, layout.inbox) - read
        left = last.get("folders") or {}
        seen = _survey(workspace, layout, files, clean=not dry_run, every=every or not trusted, left=left)
        sources = Sources(project)
        gathered, left = _gather(
            project, layout, files, sources, look, changed if trusted else None, seen, last.get("homes")
        )
        # A file left as the last export left it was found unchanged already.
        report.unchanged += left
        dirty = []
        for target in sorted(gathered, key=lambda t: t.path):
            if not full and _unchanged(files.get(target.path), target.inputs, seen):
                report.unchanged.append(target.path)
            else:
                dirty.append(target)
        rows = manifest.rows(project, (t.path for t in dirty))
        sources.models(InboxEntry, [t.entry_id for t in dirty if t.entry_id is not None])
        writes = []
        for target in dirty:
            if progress:
                progress(target.path)
            write = _plan(project, workspace, rows, target, report, full=full, seen=seen)
            if write is None:
                continue
            if not dry_run:
                writes.append(write)
            elif write.data:
                report.written.append(target.path)
        if not dry_run:
            _apply(workspace, writes, report)
        flagged = [p for p, _ in report.kept[told[0] :] + report.errors[told[1] :]]
        decided.remove_decided(project, workspace, files, decided_files, report)
        _remove_stale(project, workspace, files, {t.path for t in gathered} | set(left), report, flagged)
        report.unchanged.sort()
        if not dry_run:
            recheck = {changes.kind_of(path, layout) for path in flagged}
            changes.forget(project, changed)
            homes = sources.homes if sources.homes is not None else last.get("homes")
            folders = _folders_seen(workspace, layout, files)
            changes.remember(project, layout, {k for k in recheck if k is not None}, homes, folders)
    return report
