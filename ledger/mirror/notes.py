"""Notes files read into the ledger at each import (docs/mirror.md "Notes files").

- `agents/{folder}/memory/*.md`: an agent's private notes. Each file is one memory of that agent
  (source `notes`), keyed by its path and the sha256 of its text. An unchanged file does nothing; a
  changed one makes a new memory that supersedes the one before; a file that is gone retires its memory
  (archived); a file that comes back after that is indexed again.
- `memory/*.md`: the team's notes. Each version of a file is one pending proposal (tagged `cross-team`)
  that a coordinator merges into a cross-team memory or rejects; the same version is never proposed
  twice. A new version withdraws the pending proposal of the one before (rejected, "file changed"); a
  file that is gone withdraws its pending proposal ("file removed") and retires the memory it was merged
  into.

Canon only reads these files: the export never writes, moves or removes anything in these folders. A
file that cannot be read safely or makes no note (a link, a folder, too large, not UTF-8, a NUL
character, bad front matter, nothing after the front matter) is skipped and reported; the ledger keeps
what it had for it, and the rest of the import goes on.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ledger import services
from ledger.mirror import fs, squad
from ledger.mirror.paths import Layout
from ledger.mirror.render import sha
from ledger.mirror.reports import ImportReport
from ledger.models import (
    PRIVATE_ENTRY_TYPES,
    AgentMemory,
    AuditEvent,
    EntryStatus,
    Importance,
    InboxEntry,
    MemoryStatus,
    MemoryType,
    MirrorFile,
    Project,
    Source,
)
from ledger.values import CROSS_TEAM_TAG, InvalidValue, normalize_tags

NOTES_FOLDER = "memory"
# Front matter a notes file may carry; other keys are ignored.
NOTE_KEYS = ("type", "importance", "tags", "author")
_NEWLINES = re.compile(r"\r\n?")


def private_folder(layout: Layout, agent_folder: str) -> str:
    return f"{layout.agents}/{agent_folder}/{NOTES_FOLDER}"


def team_folder(layout: Layout) -> str:
    return f"{layout.team}/{NOTES_FOLDER}"


@dataclass
class Found:
    """A notes file read and checked: the version to write, and what its front matter asked for."""

    note: services.NoteVersion
    author: str = ""
    # A private note asked for `cross-team`, which it never gets.
    dropped_cross_team: bool = False


class _Skip(Exception):
    """A notes file that makes no note; the message says why."""


def _choice(meta: dict[str, Any], name: str, allowed: Iterable[str], default: str) -> str:
    value = meta.get(name, default)
    allowed = [str(a) for a in allowed]
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        raise _Skip(f"front matter {name}: {value!r} is not one of: {', '.join(allowed)}")
    return value.strip().lower()


def parse_note(path: str, data: bytes, *, team: bool) -> Found:
    """A notes file's bytes as a note; `_Skip` with the reason when they make none."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Skip("not UTF-8") from None
    if "\x00" in text:
        raise _Skip("contains a NUL character")
    body = text.removeprefix("\ufeff").lstrip("\r\n")
    meta: dict[str, Any] = {}
    split = squad.split_front_matter(body)
    if split is not None:
        try:
            meta = squad.load_yaml(split[0].strip().strip("-"))
        except squad.FrontMatterError as exc:
            raise _Skip(str(exc)) from None
        body = split[1]
    content = _NEWLINES.sub("\n", body).strip()
    if not content:
        raise _Skip("no text after the front matter" if split is not None else "empty file")
    types = [str(t) for t in PRIVATE_ENTRY_TYPES] if team else MemoryType.values
    raw_tags = meta.get("tags")
    if raw_tags is not None and not isinstance(raw_tags, str | list):
        raise _Skip("front matter tags: must be a list or a comma-separated string")
    try:
        tags = normalize_tags(raw_tags)
    except InvalidValue as exc:
        raise _Skip(f"front matter tags: {exc}") from None
    dropped = not team and CROSS_TEAM_TAG in tags
    tags = [tag for tag in tags if tag != CROSS_TEAM_TAG]
    author = meta.get("author", "")
    if team and not isinstance(author, str):
        raise _Skip(f"front matter author: {author!r} is not a name")
    return Found(
        note=services.NoteVersion(
            path=path,
            sha256=sha(data),
            text=text,
            content=content,
            type=_choice(meta, "type", types, MemoryType.LEARNING),
            importance=_choice(meta, "importance", Importance.values, Importance.MEDIUM),
            tags=tags,
        ),
        author=author.strip() if team and isinstance(author, str) else "",
        dropped_cross_team=dropped,
    )


@dataclass
class _Walk:
    """What one import saw of a kind of notes: the files found, and the folders it could not read."""

    report: ImportReport
    limit: int
    progress: Callable[[str], None] | None
    present: set[str]
    blocked: list[str]

    def skip(self, path: str, reason: str) -> None:
        self.report.skipped.append((path, reason))
        self.report.notes_skipped += 1

    def listing(self, workspace: fs.Workspace, folder: str) -> list[str]:
        """The notes files in `folder` (every `*.md` name, whatever it is); a folder that is a link is
        reported and not read, and nothing under it is retired."""
        kind = workspace.kind(folder)
        if kind != "dir":
            if kind == "link":
                self.skip(folder, "a symbolic link; nothing under it is read")
                self.blocked.append(folder + "/")
            return []
        try:
            names = workspace.files(folder)
        except fs.UnsafePath as exc:
            self.skip(folder, f"{exc}; nothing under it is read")
            self.blocked.append(folder + "/")
            return []
        paths = [f"{folder}/{name}" for name in names]
        self.present.update(paths)
        return paths

    def read(self, workspace: fs.Workspace, path: str, *, team: bool) -> Found | None:
        if self.progress:
            self.progress(path)
        kind = workspace.kind(path)
        if kind != "file":
            what = {"link": "a symbolic link; not followed", "dir": "a folder, not a file"}
            self.skip(path, what.get(kind, "not a regular file"))
            return None
        try:
            data = workspace.read(path, max_bytes=self.limit)
        except fs.UnsafePath as exc:
            self.skip(path, str(exc))
            return None
        except fs.FileTooLarge:
            self.skip(path, f"too large (over {self.limit} bytes)")
            return None
        if data is None:  # removed while the import ran: the next one sees it gone
            return None
        try:
            return parse_note(path, data, team=team)
        except _Skip as exc:
            self.skip(path, str(exc))
            return None

    def gone(self, path: str) -> bool:
        return path not in self.present and not any(path.startswith(b) for b in self.blocked)


def _verb(report: ImportReport, text: str) -> str:
    return f"would be {text}" if report.dry_run else text


# ---------------------------------------------------------------------------------------------
# agents/{folder}/memory/*.md


def _agent_folders(workspace: fs.Workspace, layout: Layout, walk: _Walk) -> list[str]:
    kind = workspace.kind(layout.agents)
    if kind != "dir":
        if kind == "link":
            walk.blocked.append(layout.agents + "/")
        return []
    # An agent folder that is a link is not read (as for histories): its notes are left as they were.
    for name in workspace.files(layout.agents, suffix=""):
        if workspace.kind(f"{layout.agents}/{name}") == "link":
            walk.blocked.append(f"{layout.agents}/{name}/")
    return workspace.folders(layout.agents)


def _came_back(memories: Iterable[AgentMemory]) -> set[int]:
    """Which of these archived memories were retired by an import (their file went, then came back),
    rather than archived by a person."""
    ids = [m.pk for m in memories]
    if not ids:
        return set()
    return set(
        AuditEvent.objects.filter(
            object_type="agentmemory", object_id__in=ids, action="retire", via=services.NOTES_VIA
        ).values_list("object_id", flat=True)
    )


def index_private_notes(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    *,
    limit: int,
    progress: Callable[[str], None] | None = None,
) -> None:
    walk = _Walk(report=report, limit=limit, progress=progress, present=set(), blocked=[])
    found: list[tuple[str, Found]] = []
    for folder in _agent_folders(workspace, layout, walk):
        for path in walk.listing(workspace, private_folder(layout, folder)):
            note = walk.read(workspace, path, team=False)
            if note is not None:
                found.append((folder, note))
    versions: dict[str, list[AgentMemory]] = {}
    prefix = layout.agents + "/"
    for memory in (
        AgentMemory.objects.filter(project=project, source=Source.NOTES, origin__startswith=prefix)
        .only("id", "origin", "content_sha256", "status", "created_at")
        .order_by("created_at", "id")
    ):
        versions.setdefault(memory.origin, []).append(memory)
    latest = {path: rows[-1] for path, rows in versions.items()}
    back = _came_back(
        m
        for folder, f in found
        if (m := latest.get(f.note.path)) is not None
        and m.content_sha256 == f.note.sha256
        and m.status == MemoryStatus.ARCHIVED
    )
    agents: dict[str, str] = {}
    for folder, f in found:
        if folder not in agents:
            agents[folder] = _folder_agent(layout, files, folder)
        _index_one(project, report, agents[folder], f, latest.get(f.note.path), back)
    for path, rows in sorted(versions.items()):
        if walk.gone(path):
            _retire(project, report, path, [m for m in rows if m.status == MemoryStatus.ACTIVE])


def _folder_agent(layout: Layout, files: dict[str, MirrorFile], folder: str) -> str:
    """The agent whose notes a folder holds: the one its history was adopted for, else its name."""
    history = files.get(layout.history(folder))
    if history is not None and history.agent is not None:
        return history.agent.name
    return services.adopted_agent_name(folder)


def _index_one(
    project: Project,
    report: ImportReport,
    agent: str,
    found: Found,
    previous: AgentMemory | None,
    back: set[int],
) -> None:
    note = found.note
    if previous is not None and previous.content_sha256 == note.sha256 and previous.pk not in back:
        # Unchanged, or archived or superseded by a person since: either way it stays as it is.
        report.unchanged.append(note.path)
        return
    changed = previous is not None and previous.content_sha256 != note.sha256
    replaced = previous if previous is not None and previous.status == MemoryStatus.ACTIVE else None
    what = _verb(report, "indexed")
    if not report.dry_run:
        try:
            memory = services.note_index(
                project=project,
                agent_name=agent,
                note=note,
                previous=replaced,
            )
        except services.LedgerError as exc:
            report.skipped.append((note.path, f"{exc.message}; left as it is"))
            report.notes_skipped += 1
            return
        what = f"memory {memory.pk} of {memory.agent.name}"
    if replaced is not None:
        what += f", superseding memory {replaced.pk}"
    elif previous is not None and not changed:
        what += " (the file came back)"
    if found.dropped_cross_team:
        what += "; the cross-team tag is ignored: a private note stays with its agent"
    (report.changed if changed else report.indexed).append((note.path, what))


def _retire(project: Project, report: ImportReport, path: str, memories: list[AgentMemory]) -> None:
    if not memories:
        return
    if not report.dry_run:
        memories = services.notes_retire(project=project, memories=memories, path=path)
        if not memories:
            return
    ids = ", ".join(str(m.pk) for m in memories)
    report.retired.append((path, f"the file is gone: memory {ids} {_verb(report, 'archived')}"))


# ---------------------------------------------------------------------------------------------
# memory/*.md


def note_slug(file: str) -> str:
    """A team note version's proposal slug: `notes-{file name}-{hash of its path and sha256}`."""
    name = services.note_path(file).rsplit("/", 1)[-1]
    stem = squad.slug_from_filename(name)[:80].strip("-")
    digest = hashlib.sha256(file.encode("utf-8")).hexdigest()[:10]
    return "-".join(part for part in ("notes", stem, digest) if part)


def index_team_notes(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    report: ImportReport,
    *,
    limit: int,
    progress: Callable[[str], None] | None = None,
) -> None:
    walk = _Walk(report=report, limit=limit, progress=progress, present=set(), blocked=[])
    folder = team_folder(layout)
    found = [f for path in walk.listing(workspace, folder) if (f := walk.read(workspace, path, team=True))]
    versions: dict[str, list[InboxEntry]] = {}
    for entry in (
        InboxEntry.objects.filter(project=project, source=Source.NOTES, file__startswith=folder + "/")
        .select_related("memory")
        .only("id", "slug", "file", "status", "created_at", "memory__id", "memory__status")
        .order_by("created_at", "id")
    ):
        versions.setdefault(services.note_path(entry.file), []).append(entry)
    for f in found:
        _propose_one(project, report, f, versions.get(f.note.path, []))
    for path, entries in sorted(versions.items()):
        if not walk.gone(path):
            continue
        for entry in entries:
            if entry.status == EntryStatus.PENDING:
                _withdraw(project, report, path, entry, services.FILE_REMOVED)
        _retire(project, report, path, _live_merged(entries))


def _propose_one(project: Project, report: ImportReport, found: Found, entries: list[InboxEntry]) -> None:
    note = found.note
    file = services.note_file(note.path, note.sha256)
    current = next((e for e in entries if e.file == file), None)
    for entry in entries:
        if entry.status == EntryStatus.PENDING and entry is not current:
            _withdraw(project, report, note.path, entry, services.FILE_CHANGED)
    if current is not None:
        _supersede_merged(project, report, note.path, current, entries)
        return
    slug = note_slug(file)
    if report.dry_run:
        report.proposed.append((note.path, f"{slug!r} would wait for review"))
        return
    author = found.author or project.coordinator_agent
    try:
        entry = services.note_propose(project=project, agent_name=author, slug=slug, note=note)
    except services.LedgerError as exc:
        report.skipped.append((note.path, f"{exc.message}; left as it is"))
        report.notes_skipped += 1
        return
    report.proposed.append((note.path, f"{entry.slug!r} by {entry.agent.name} waits for review"))


def _supersede_merged(
    project: Project, report: ImportReport, path: str, current: InboxEntry, entries: list[InboxEntry]
) -> None:
    """The file's version in hand was merged: the memories of its earlier merged versions give way."""
    memory = current.memory
    if current.status != EntryStatus.MERGED or memory is None or memory.status != MemoryStatus.ACTIVE:
        report.unchanged.append(path)
        return
    older = [m for m in _live_merged(entries) if m != memory]
    if not older:
        report.unchanged.append(path)
        return
    if not report.dry_run:
        services.note_merged_supersede(project=project, current=memory, older=older, path=path)
    ids = ", ".join(str(m.pk) for m in older)
    report.changed.append((path, f"memory {ids} {_verb(report, 'superseded')} by memory {memory.pk}"))


def _live_merged(entries: list[InboxEntry]) -> list[AgentMemory]:
    """The memories these proposals were merged into that are still active."""
    return [
        e.memory
        for e in entries
        if e.status == EntryStatus.MERGED and e.memory is not None and e.memory.status == MemoryStatus.ACTIVE
    ]


def _withdraw(project: Project, report: ImportReport, path: str, entry: InboxEntry, reason: str) -> None:
    if not report.dry_run:
        try:
            services.note_withdraw(project=project, entry=entry, reason=reason)
        except services.LedgerError:
            return  # a coordinator decided it meanwhile: their decision stands
    report.withdrawn.append((path, f"{entry.slug!r} {_verb(report, 'rejected')}: {reason}"))
