"""Notes files: the markdown notes agents and people keep in the workspace, indexed into the ledger.

An agent's private note (`agents/{folder}/memory/*.md`) becomes one memory of that agent, keyed by the
file's path (`origin`) and the sha256 of its text (`content_sha256`). A new version of the file makes a
new memory and supersedes the one before; a file that is gone retires its memory (archived, audited).
Nothing is deleted.

A team note (`memory/*.md`) reaches other agents only through a coordinator: each version of the file
becomes one pending inbox proposal (`file` is `{path}@{sha256}`, so the database itself refuses a second
proposal of the same version), merged into a cross-team memory as any other proposal is.

The mirror (`ledger.mirror.notes`) reads and checks the files; these functions do the writes, each
atomic, each audited with actor `canon` and via `import`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from ledger.models import (
    PRIVATE_ENTRY_TYPES,
    Agent,
    AgentMemory,
    EntryStatus,
    Importance,
    InboxEntry,
    MemoryStatus,
    MemoryType,
    Project,
    Source,
)
from ledger.services.effects import audit
from ledger.services.errors import Conflict, invalid
from ledger.services.fields import (
    checked_choice,
    checked_tags,
    entry_fields,
    summary_line,
)
from ledger.services.inbox.review import entry_reject
from ledger.services.memory import memory_insert
from ledger.services.projects import agent_get_or_create
from ledger.values import CROSS_TEAM_TAG, InvalidValue, check_text

NOTES_ACTOR = "canon"
NOTES_VIA = "import"
# InboxEntry.file holds `{path}@{sha256}`: the path may take what the column leaves.
NOTE_FILE_MAX_LENGTH = 255
# Why a pending proposal of a team note was withdrawn (its entry is rejected with this reason).
FILE_CHANGED = "file changed"
FILE_REMOVED = "file removed"


@dataclass(frozen=True)
class NoteVersion:
    """One version of a notes file, as the mirror read and checked it."""

    path: str
    sha256: str
    # The whole file as written (front matter included), kept verbatim in `markdown`.
    text: str
    # The body: the note itself, the front matter removed.
    content: str
    type: str
    importance: str
    tags: list[str] = field(default_factory=list)


def note_file(path: str, sha256: str) -> str:
    """The inbox entry `file` of one version of a team note: its path and the sha256 of its text."""
    return f"{path}@{sha256}"


def note_path(file: str) -> str:
    """The path part of a team note's entry `file`."""
    return file.rpartition("@")[0]


def _checked(note: NoteVersion, types: Sequence[str]) -> None:
    """The checks a note passes before it is written, each naming what it refused."""
    try:
        check_text(note.text, "the file")
    except InvalidValue as exc:
        raise invalid("file", str(exc)) from exc
    if not note.content.strip():
        raise invalid("file", "no text after the front matter")
    checked_choice("type", note.type, types)
    checked_choice("importance", note.importance, Importance.values)
    checked_tags(note.tags)


def _supersede(*, project: Project, old: AgentMemory, new: AgentMemory, path: str) -> bool:
    """Mark `old` superseded by `new` if it is still active (compare-and-set); audited when it was."""
    won = AgentMemory.objects.filter(pk=old.pk, status=MemoryStatus.ACTIVE).update(
        status=MemoryStatus.SUPERSEDED, superseded_by=new, updated_at=timezone.now()
    )
    if won:
        audit(
            project=project,
            actor=NOTES_ACTOR,
            via=NOTES_VIA,
            action="supersede",
            obj=old,
            from_state=MemoryStatus.ACTIVE,
            to_state=MemoryStatus.SUPERSEDED,
            detail={"file": path, "superseded_by": new.pk},
        )
    return bool(won)


def note_index(
    *, project: Project, agent_name: str, note: NoteVersion, previous: AgentMemory | None = None
) -> AgentMemory:
    """One version of an agent's private note as a memory of that agent (source `notes`), all or
    nothing. `previous`, the memory of the file's earlier version, is superseded by it when still
    active. Never cross-team: a private note stays with its agent."""
    _checked(note, MemoryType.values)
    tags = [tag for tag in note.tags if tag != CROSS_TEAM_TAG]
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=agent_name)
        memory = memory_insert(
            project=project,
            agent=agent,
            type=note.type,
            importance=note.importance,
            content=note.content,
            tags=tags,
            session_id="",
            source=Source.NOTES,
            injected_by="",
            markdown=note.text,
            origin=note.path,
            sha256=note.sha256,
        )
        audit(
            project=project,
            actor=NOTES_ACTOR,
            via=NOTES_VIA,
            action="index",
            obj=memory,
            to_state=memory.status,
            detail={"file": note.path, "sha256": note.sha256},
        )
        if previous is not None:
            _supersede(project=project, old=previous, new=memory, path=note.path)
        return memory


def notes_retire(*, project: Project, memories: list[AgentMemory], path: str) -> list[AgentMemory]:
    """The memories of a notes file that is gone: archived (never deleted), each audited as `retire`
    with the path. Returns those that were still active (the others are left as they are)."""
    retired = []
    with transaction.atomic():
        for memory in memories:
            won = AgentMemory.objects.filter(pk=memory.pk, status=MemoryStatus.ACTIVE).update(
                status=MemoryStatus.ARCHIVED, updated_at=timezone.now()
            )
            if not won:
                continue
            memory.status = MemoryStatus.ARCHIVED
            audit(
                project=project,
                actor=NOTES_ACTOR,
                via=NOTES_VIA,
                action="retire",
                obj=memory,
                from_state=MemoryStatus.ACTIVE,
                to_state=MemoryStatus.ARCHIVED,
                detail={"file": path},
            )
            retired.append(memory)
    return retired


def note_propose(*, project: Project, agent_name: str, slug: str, note: NoteVersion) -> InboxEntry:
    """One version of a team note as a pending proposal (source `notes`, tagged `cross-team`), which a
    coordinator merges into a cross-team memory or rejects. A version already proposed, whatever
    became of it, is a Conflict: the database refuses a second entry with the same `file`."""
    _checked(note, PRIVATE_ENTRY_TYPES)
    file = note_file(note.path, note.sha256)
    if len(file) > NOTE_FILE_MAX_LENGTH:
        raise invalid("file", f"the path is too long to record (over {NOTE_FILE_MAX_LENGTH - 65} characters)")
    fields = entry_fields(
        type=note.type,
        title="",
        content=note.content,
        tags=[*note.tags, CROSS_TEAM_TAG],
        importance=note.importance,
    )
    fields["title"] = _title(note.content)
    try:
        with transaction.atomic():
            agent: Agent = agent_get_or_create(project=project, name=agent_name)
            entry = InboxEntry.objects.create(
                project=project, agent=agent, slug=slug, source=Source.NOTES, file=file, **fields
            )
            audit(
                project=project,
                actor=NOTES_ACTOR,
                via=NOTES_VIA,
                action="propose",
                obj=entry,
                to_state=EntryStatus.PENDING,
                detail={"file": note.path, "sha256": note.sha256},
            )
    except IntegrityError:
        raise Conflict(f"{note.path} was already proposed in this version (slug {slug!r})") from None
    return entry


def _title(content: str) -> str:
    """The note's first line, without its heading marks, as the proposal's title."""
    first = next((line for line in content.splitlines() if line.strip()), "")
    return summary_line(first.strip().lstrip("#"), 80)


def note_withdraw(*, project: Project, entry: InboxEntry, reason: str) -> InboxEntry:
    """A pending proposal of a team note whose file changed or is gone: rejected with `reason`, kept."""
    return entry_reject(project=project, entry_id=entry.pk, by=NOTES_ACTOR, reason=reason, via=NOTES_VIA)


def note_merged_supersede(
    *, project: Project, current: AgentMemory, older: list[AgentMemory], path: str
) -> int:
    """A team note's new version was merged: the memories its earlier merged versions became are
    superseded by it. Returns how many were."""
    with transaction.atomic():
        return sum(_supersede(project=project, old=old, new=current, path=path) for old in older)
