"""Adoption: a team's own files taken into the ledger, their text kept verbatim."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ledger.blocks import decision_block
from ledger.models import (
    BOUNDARY_TYPES,
    Agent,
    AgentMemory,
    Decision,
    DecisionStatus,
    DecisionType,
    Importance,
    MemoryStatus,
    MemoryType,
    Project,
    Source,
)
from ledger.services.effects import audit_many
from ledger.services.errors import invalid
from ledger.services.fields import IMPORTANCE_RANK, TITLE_MAX_LENGTH, content_sha256, summary_line
from ledger.services.projects import agent_get_or_create
from ledger.tokens import count_tokens
from ledger.values import AGENT_NAME_MAX_LENGTH, InvalidValue, check_text, content_key


@dataclass(frozen=True)
class Adopted:
    """One decision block or history entry read from a team file, as the mirror parsed it."""

    markdown: str
    content: str
    type: str
    author: str = ""
    title: str = ""
    date: datetime | None = None
    status: str = DecisionStatus.ACTIVE


ADOPTED_AUTHOR_FALLBACK = "unknown"


def adopted_agent_name(raw: str) -> str:
    """An author as written in a team file, made a valid agent name (`unknown` when nothing is left)."""
    name = "".join(ch for ch in raw if ch.isprintable()).strip()[:AGENT_NAME_MAX_LENGTH].strip()
    return name or ADOPTED_AUTHOR_FALLBACK


def _agents_by_name(project: Project, names: Iterable[str]) -> dict[str, Agent]:
    return {name: agent_get_or_create(project=project, name=name) for name in sorted(set(names))}


def _checked_adopted(items: Sequence[Adopted]) -> None:
    for item in items:
        try:
            check_text(item.markdown, "the file")
        except InvalidValue as exc:
            raise invalid("file", str(exc)) from exc


def _adopted_type(item: Adopted, project: Project, *, boundaries: bool) -> str:
    wanted = item.type if item.type in DecisionType.values else project.squad_type
    if not boundaries and wanted in BOUNDARY_TYPES:
        return DecisionType.TECHNICAL
    return wanted


def decisions_adopt(
    *, project: Project, items: Sequence[Adopted], origin: str, boundaries: bool = True
) -> list[Decision]:
    """One decision per block of a team's decision log, all or none. The block's text is kept verbatim
    (`markdown`), its date becomes the creation time; a type the block does not name is the project's
    `squad_type`.

    With `boundaries=False` (blocks someone added to a log after a coordinator adopted it), no block
    becomes an architectural or scope decision by itself: those are typed `technical` until a coordinator
    retypes them, so text written into a file never reaches every agent's boundaries unreviewed; and
    each active one is held for review (`Decision.held`), out of every context, until a coordinator
    retypes or edits it.
    """
    _checked_adopted(items)
    now = timezone.now()
    with transaction.atomic():
        agents = _agents_by_name(project, (adopted_agent_name(item.author) for item in items))
        decisions = []
        for item in items:
            status = item.status if item.status in DecisionStatus.values else DecisionStatus.ACTIVE
            decision = Decision(
                project=project,
                agent=agents[adopted_agent_name(item.author)],
                type=_adopted_type(item, project, boundaries=boundaries),
                title=summary_line(item.title, TITLE_MAX_LENGTH)
                or summary_line(item.content, 80)
                or "Untitled",
                content=item.content.strip() or item.title or item.markdown.strip(),
                status=status,
                held=not boundaries and status == DecisionStatus.ACTIVE,
                status_changed_at=item.date or now,
                source=Source.IMPORT,
                markdown=item.markdown,
                origin=origin[:1024],
                created_at=item.date or now,
            )
            decision.tokens = count_tokens(decision_block(decision))
            decisions.append(decision)
        Decision.objects.bulk_create(decisions, batch_size=500)
        audit_many(project=project, objects=decisions, action="adopt", detail={"file": origin})
        return decisions


def memories_adopt(
    *, project: Project, agent_name: str, items: Sequence[Adopted], origin: str
) -> list[AgentMemory]:
    """One memory per entry of an agent's history file, all or none, its text kept verbatim."""
    _checked_adopted(items)
    now = timezone.now()
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=adopted_agent_name(agent_name))
        memories = [
            AgentMemory(
                project=project,
                agent=agent,
                type=item.type if item.type in MemoryType.values else MemoryType.LEARNING,
                importance=Importance.MEDIUM,
                importance_rank=IMPORTANCE_RANK[Importance.MEDIUM],
                content=item.content.strip() or item.markdown.strip(),
                tags=[],
                tag_index="",
                source=Source.IMPORT,
                markdown=item.markdown,
                origin=origin[:1024],
                content_sha256=content_sha256(item.content.strip() or item.markdown.strip()),
                content_key=content_key(item.content.strip() or item.markdown.strip()),
                tokens=count_tokens(item.content.strip() or item.markdown.strip()),
                created_at=item.date or now,
            )
            for item in items
        ]
        AgentMemory.objects.bulk_create(memories, batch_size=500)
        audit_many(project=project, objects=memories, action="adopt", detail={"file": origin})
        return memories


def decisions_archived_outside(
    *, project: Project, decision_ids: Sequence[int], origin: str
) -> list[Decision]:
    """Active decisions whose blocks someone moved out of the log into an archive file (Squad's `nap`
    moves blocks older than 30 days into `decisions-archive.md`): archived, each audited with the file.
    Decisions no longer active are left as they are. Returns the decisions archived."""
    with transaction.atomic():
        decisions = list(
            Decision.objects.select_for_update().filter(
                project=project, pk__in=list(decision_ids), status=DecisionStatus.ACTIVE
            )
        )
        now = timezone.now()
        Decision.objects.filter(pk__in=[d.pk for d in decisions], status=DecisionStatus.ACTIVE).update(
            status=DecisionStatus.ARCHIVED, status_changed_at=now, updated_at=now
        )
        for decision in decisions:
            decision.status = DecisionStatus.ARCHIVED
        audit_many(project=project, objects=decisions, action="archive", detail={"file": origin})
        return decisions


def memories_archived_outside(
    *, project: Project, memory_ids: Sequence[int], origin: str
) -> list[AgentMemory]:
    """Active memories whose entries someone moved out of a history into its archive file (Squad's `nap`
    keeps a history under 15 KB so): archived, each audited with the file. Returns the memories archived."""
    with transaction.atomic():
        memories = list(
            AgentMemory.objects.select_for_update().filter(
                project=project, pk__in=list(memory_ids), status=MemoryStatus.ACTIVE
            )
        )
        AgentMemory.objects.filter(pk__in=[m.pk for m in memories], status=MemoryStatus.ACTIVE).update(
            status=MemoryStatus.ARCHIVED, updated_at=timezone.now()
        )
        for memory in memories:
            memory.status = MemoryStatus.ARCHIVED
        audit_many(project=project, objects=memories, action="archive", detail={"file": origin})
        return memories


def memories_edited_outside(
    *, project: Project, replaced: Sequence[tuple[AgentMemory, AgentMemory]], origin: str
) -> list[tuple[AgentMemory, AgentMemory]]:
    """Memories whose lines someone edited in place in their file (Squad's `scrub-emails` removing an
    address, a person fixing a typo): each `(old, new)` pair's old memory, if still active, is
    superseded by the new one adopted from the edited line, and audited with the file. The new memory
    keeps what the ledger knew of the old one beyond its text (importance, tags, pin, category). Returns
    the pairs that were superseded."""
    kept = ("importance", "importance_rank", "tags", "tag_index", "cross_team", "pinned", "category")
    done = []
    with transaction.atomic():
        for old, new in replaced:
            won = AgentMemory.objects.filter(pk=old.pk, status=MemoryStatus.ACTIVE).update(
                status=MemoryStatus.SUPERSEDED, superseded_by=new, updated_at=timezone.now()
            )
            if won:
                source = AgentMemory.objects.only(*kept).get(pk=old.pk)
                for name in kept:
                    setattr(new, name, getattr(source, name))
                new.save(update_fields=[*kept, "updated_at"])
                old.status, old.superseded_by = MemoryStatus.SUPERSEDED, new
                done.append((old, new))
        audit_many(
            project=project,
            objects=[old for old, _ in done],
            action="supersede",
            detail={"file": origin, "edited outside Canon": True},
        )
    return done
