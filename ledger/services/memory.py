"""Agent memories: recorded, corrected, consolidated, edited and archived (nothing is deleted).

The rules (docs/ledger.md "Memory"):

- the same memory twice is one memory: an agent's active memory with the same normalised content
  (`content_key`) is returned instead of a new row, and its expiry starts again if it had passed;
- a new memory that closely repeats one the agent already reads is flagged as a near-duplicate
  (`similar_to`, `similarity`) for a coordinator to merge or dismiss;
- a correction (`corrects`) supersedes the memory it names, in the same transaction;
- a pinned memory never expires; unpinning gives it its source's time-to-live again, from now.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from rapidfuzz import fuzz

from ledger.lifecycle import expires_at_for, live
from ledger.models import (
    Agent,
    AgentMemory,
    Importance,
    MemoryCategory,
    MemoryStatus,
    MemoryType,
    Project,
    Source,
)
from ledger.relevance import task_terms
from ledger.search import WORD, search
from ledger.services.effects import audit, workspace_changed
from ledger.services.errors import Conflict, NotFound, invalid
from ledger.services.fields import (
    CONTENT_MAX_LENGTH,
    IMPORTANCE_RANK,
    SESSION_ID_MAX_LENGTH,
    checked_agent_name,
    checked_choice,
    checked_tags,
    checked_text,
    content_sha256,
    locked,
)
from ledger.services.projects import agent_get_or_create
from ledger.tokens import count_tokens
from ledger.values import (
    CROSS_TEAM_TAG,
    content_key,
    tag_index,
)

# Near-duplicates: the new memory's longest words are searched (one query, any of them may match, best
# first), and the best few matches are scored by their whole text. Longer words are the rarer ones, so
# they find the memories that share the topic.
NEAR_DUPLICATE_WORDS = 8
NEAR_DUPLICATE_CANDIDATES = 20
# The statuses a memory may be given by an edit: `superseded` comes only with what supersedes it.
EDITABLE_STATUSES = (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)


@dataclass
class MemoryRecorded:
    """What recording a memory did: a new row (`created`), or the agent's existing memory with the
    same content (`renewed` when its expiry had passed and started again)."""

    memory: AgentMemory
    created: bool
    renewed: bool = False

    @property
    def message(self) -> str:
        if self.created:
            return f"recorded as memory {self.memory.pk}"
        said = f"already recorded as memory {self.memory.pk}"
        return f"{said}; it had expired and is renewed" if self.renewed else said


def memory_insert(
    *,
    project: Project,
    agent: Agent,
    type: str,
    importance: str,
    content: str,
    tags: list[str],
    session_id: str,
    source: str,
    injected_by: str,
    category: str = "",
    pinned: bool = False,
    markdown: str = "",
    origin: str = "",
    sha256: str | None = None,
) -> AgentMemory:
    """Insert one memory with every column derived from it filled. A memory read from a file keeps that
    file's text (`markdown`), its path (`origin`) and the hash of its bytes (`sha256`, instead of the
    content's)."""
    now = timezone.now()
    return AgentMemory.objects.create(
        project=project,
        agent=agent,
        type=type,
        importance=importance,
        importance_rank=IMPORTANCE_RANK[Importance(importance)],
        content=content,
        tags=tags,
        tag_index=tag_index(tags),
        cross_team=CROSS_TEAM_TAG in tags,
        session_id=session_id,
        source=source,
        injected_by=injected_by[:150],
        category=category,
        markdown=markdown,
        origin=origin[:1024],
        content_sha256=sha256 if sha256 is not None else content_sha256(content),
        content_key=content_key(content),
        tokens=count_tokens(content),
        pinned=pinned,
        expires_at=expires_at_for(source, now, pinned=pinned),
        created_at=now,
    )


def memory_record(**kwargs: Any) -> AgentMemory:
    """Record a memory (`memory_store`) when the caller needs only the memory, new or already there."""
    return memory_store(**kwargs).memory


def memory_store(
    *,
    project: Project,
    agent_name: str,
    type: str,
    content: str,
    importance: str | None = None,
    tags: str | Iterable[str] | None = None,
    session_id: str = "",
    source: str = Source.AGENT,
    injected_by: str = "",
    category: str = "",
    pinned: bool = False,
    corrects: int | None = None,
    by: str = "",
    via: str = "api",
) -> MemoryRecorded:
    """Record a memory for an agent, once. A coordinator's injection says who injected it, and may say
    which kind of learning it is (`category`, blank otherwise).

    The agent's row is locked first, so two identical writes at once make one memory. `corrects` names
    a memory of the project this one replaces: it must be active, and becomes `superseded`. Whoever
    checks that an agent corrects only its own memories is the caller's (the API's 403). `by` names who
    wrote it in the audit trail (the agent itself by default).
    """
    name = checked_agent_name(agent_name)
    values: dict[str, Any] = {
        "type": checked_choice("type", type, MemoryType.values),
        "importance": checked_choice("importance", importance or Importance.MEDIUM, Importance.values),
        "content": checked_text("content", content, required=True, max_length=CONTENT_MAX_LENGTH),
        "tags": checked_tags(tags),
        "session_id": checked_text("session_id", session_id, max_length=SESSION_ID_MAX_LENGTH).strip(),
        "source": checked_choice("source", source, Source.values),
        "injected_by": checked_text("injected_by", injected_by, max_length=150),
        "category": checked_choice("category", category, MemoryCategory.values) if category != "" else "",
    }
    if not isinstance(pinned, bool):
        raise invalid("pinned", "must be true or false")
    if corrects is not None and (not isinstance(corrects, int) or isinstance(corrects, bool)):
        raise invalid("corrects", "must be a memory id")
    key = content_key(values["content"])
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=name)
        # One writer per agent at a time: the look-up below and the insert are one step.
        Agent.objects.select_for_update().filter(pk=agent.pk).values_list("pk").get()
        actor = by or injected_by or agent.name
        corrected = _corrected(project, corrects) if corrects is not None else None
        existing = (
            AgentMemory.objects.filter(agent=agent, status=MemoryStatus.ACTIVE, content_key=key)
            .select_related("agent")
            .order_by("created_at", "id")
            .first()
        )
        if existing is not None:
            if corrected is not None:
                if corrected.pk == existing.pk:
                    raise Conflict(f"memory {existing.pk} already says this: nothing to correct")
                _supersede(corrected, existing, by=actor, via=via, reason="correction")
            renewed = _renew(existing, pin=pinned, by=actor, via=via)
            if corrected is not None or renewed or pinned:
                workspace_changed(project)
            return MemoryRecorded(existing, created=False, renewed=renewed)
        memory = memory_insert(project=project, agent=agent, pinned=pinned, **values)
        if corrected is not None:
            _supersede(corrected, memory, by=actor, via=via, reason="correction")
        _flag_near_duplicate(memory)
        workspace_changed(project)
        return MemoryRecorded(memory, created=True)


def _corrected(project: Project, memory_id: int) -> AgentMemory:
    """The memory a correction names, locked: in this project (else NotFound) and active (else Conflict)."""
    memory = locked(AgentMemory.objects.filter(project=project, pk=memory_id)).first()
    if memory is None:
        raise NotFound(f"corrects: no memory {memory_id} in project {project.slug}")
    if memory.status != MemoryStatus.ACTIVE:
        raise Conflict(
            f"memory {memory_id} is {memory.status}, not active: only an active memory is corrected"
        )
    return memory


def _supersede(old: AgentMemory, new: AgentMemory, *, by: str, via: str, reason: str) -> None:
    """`old` is replaced by `new`: kept, status `superseded`, linked to `new`; its flag, if any, goes."""
    old.status = MemoryStatus.SUPERSEDED
    old.superseded_by = new
    old.similar_to = None
    old.similarity = None
    old.save(update_fields=["status", "superseded_by", "similar_to", "similarity", "updated_at"])
    audit(
        project=old.project,
        actor=by,
        via=via,
        action="supersede",
        obj=old,
        from_state=MemoryStatus.ACTIVE,
        to_state=MemoryStatus.SUPERSEDED,
        detail={"superseded_by": new.pk, "reason": reason},
    )


def _renew(memory: AgentMemory, *, pin: bool, by: str, via: str) -> bool:
    """The same memory written again: pinned if asked, else its expiry started again if it had passed.
    True when its expiry was renewed."""
    now = timezone.now()
    if pin and not memory.pinned:
        memory.pinned, memory.expires_at = True, None
        memory.save(update_fields=["pinned", "expires_at", "updated_at"])
        audit(project=memory.project, actor=by, via=via, action="pin", obj=memory, detail={"repeated": True})
        return False
    if memory.expires_at is None or memory.expires_at > now:
        return False
    before = memory.expires_at
    memory.expires_at = expires_at_for(memory.source, now, pinned=memory.pinned)
    memory.save(update_fields=["expires_at", "updated_at"])
    audit(
        project=memory.project,
        actor=by,
        via=via,
        action="renew",
        obj=memory,
        detail={"expired_at": before.isoformat(), "expires_at": _iso(memory.expires_at)},
    )
    return True


def _iso(moment: Any) -> str | None:
    return moment.isoformat() if moment is not None else None


def normalised_text(text: str) -> str:
    """The words of `text`, compatibility forms and case folded, one space apart: what two memories
    are compared by (punctuation and spacing do not make them differ)."""

    return " ".join(WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def near_duplicate(memory: AgentMemory) -> tuple[AgentMemory, int] | None:
    """The earlier memory `memory` most closely repeats, and how closely (0-100), when that reaches
    CANON_NEAR_DUPLICATE_SIMILARITY; else None.

    Candidates are what the memory's agent reads: its own active, unexpired memories, and for a
    cross-team memory the project's cross-team ones. The full-text index finds at most
    `NEAR_DUPLICATE_CANDIDATES` of them; each is scored by token-set similarity of the normalised texts.
    """
    scope = Q(agent=memory.agent_id)
    if memory.cross_team:
        scope |= Q(cross_team=True)
    rows = (
        AgentMemory.objects.filter(project=memory.project_id)
        .filter(scope, live())
        .exclude(pk=memory.pk)
        .select_related("agent")
    )
    words = sorted(task_terms(memory.content), key=len, reverse=True)[:NEAR_DUPLICATE_WORDS]
    if not words:
        return None
    candidates = search(rows, " ".join(words))[:NEAR_DUPLICATE_CANDIDATES]
    text = normalised_text(memory.content)
    best: tuple[AgentMemory, int] | None = None
    for candidate in candidates:
        score = round(fuzz.token_set_ratio(text, normalised_text(candidate.content)))
        if best is None or score > best[1]:
            best = (candidate, score)
    if best is None or best[1] < settings.CANON_NEAR_DUPLICATE_SIMILARITY:
        return None
    return best


def _flag_near_duplicate(memory: AgentMemory) -> None:
    found = near_duplicate(memory)
    if found is None:
        return
    memory.similar_to, memory.similarity = found
    memory.save(update_fields=["similar_to", "similarity", "updated_at"])


def _flagged(project: Project, memory_id: int) -> AgentMemory:
    """A memory flagged as a near-duplicate, locked: NotFound when absent, Conflict when not flagged."""
    memory = locked(AgentMemory.objects.filter(project=project, pk=memory_id)).first()
    if memory is None:
        raise NotFound(f"no memory {memory_id} in project {project.slug}")
    if memory.similar_to_id is None:
        raise Conflict(f"memory {memory_id} is not flagged as a near-duplicate")
    return memory


def memory_merge(*, project: Project, memory_id: int, keep: int, by: str, via: str = "api") -> AgentMemory:
    """A coordinator settles a near-duplicate: of the flagged memory and the one it repeats, `keep`
    names the one kept; the other becomes `superseded` by it. The flag is cleared. Returns the kept."""
    with transaction.atomic():
        flagged = _flagged(project, memory_id)
        earlier_id = flagged.similar_to_id
        assert earlier_id is not None  # `_flagged` checked it
        if keep not in (flagged.pk, earlier_id):
            raise invalid("keep", f"must be {flagged.pk} (this memory) or {earlier_id} (the one it repeats)")
        earlier = locked(AgentMemory.objects.filter(project=project, pk=earlier_id)).get()
        for memory in (flagged, earlier):
            if memory.status != MemoryStatus.ACTIVE:
                raise Conflict(
                    f"memory {memory.pk} is {memory.status}, not active: dismiss the flag instead of merging"
                )
        kept, gone = (flagged, earlier) if keep == flagged.pk else (earlier, flagged)
        if kept is flagged:
            flagged.similar_to, flagged.similarity = None, None
            flagged.save(update_fields=["similar_to", "similarity", "updated_at"])
        _supersede(gone, kept, by=by, via=via, reason="merge")
        audit(
            project=project,
            actor=by,
            via=via,
            action="merge",
            obj=kept,
            from_state=kept.status,
            to_state=kept.status,
            detail={"flagged": flagged.pk, "superseded": gone.pk},
        )
        workspace_changed(project)
        return kept


def memory_dismiss_similar(*, project: Project, memory_id: int, by: str, via: str = "api") -> AgentMemory:
    """A coordinator says a flagged memory is not a repeat: the flag is cleared, both memories stay."""
    with transaction.atomic():
        memory = _flagged(project, memory_id)
        detail = {"similar_to": memory.similar_to_id, "similarity": memory.similarity}
        memory.similar_to, memory.similarity = None, None
        memory.save(update_fields=["similar_to", "similarity", "updated_at"])
        audit(
            project=project,
            actor=by,
            via=via,
            action="dismiss-similar",
            obj=memory,
            from_state=memory.status,
            to_state=memory.status,
            detail=detail,
        )
        return memory


def memory_edit(
    *,
    project: Project,
    memory_id: int,
    by: str,
    via: str = "api",
    content: str | None = None,
    importance: str | None = None,
    tags: str | Iterable[str] | None = None,
    status: str | None = None,
    pinned: bool | None = None,
    agent: Agent | None = None,
) -> AgentMemory:
    """Edit content, importance, tags, status (`archived` replaces deleting) or whether it is pinned.
    `agent` scopes the lookup.

    Pinning clears the expiry; unpinning sets it again from the source's time-to-live, counted from now.
    A superseded memory keeps its status: what replaced it is the one to edit.
    """
    changes: dict[str, Any] = {}
    if content is not None:
        text = checked_text("content", content, required=True, max_length=CONTENT_MAX_LENGTH)
        changes.update(
            content=text,
            content_sha256=content_sha256(text),
            content_key=content_key(text),
            tokens=count_tokens(text),
        )
    if importance is not None:
        level = checked_choice("importance", importance, Importance.values)
        changes.update(importance=level, importance_rank=IMPORTANCE_RANK[Importance(level)])
    if tags is not None:
        clean = checked_tags(tags)
        changes.update(tags=clean, tag_index=tag_index(clean), cross_team=CROSS_TEAM_TAG in clean)
    if status is not None:
        changes["status"] = checked_choice("status", status, EDITABLE_STATUSES)
    if pinned is not None and not isinstance(pinned, bool):
        raise invalid("pinned", "must be true or false")
    with transaction.atomic():
        qs = locked(AgentMemory.objects.filter(project=project))
        if agent is not None:
            qs = qs.filter(agent=agent)
        memory = qs.filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"no memory {memory_id} for this agent in project {project.slug}")
        if pinned is not None and pinned != memory.pinned:
            changes["pinned"] = pinned
            changes["expires_at"] = None if pinned else expires_at_for(memory.source, timezone.now())
        changes = {k: v for k, v in changes.items() if getattr(memory, k) != v}
        if "status" in changes and memory.status == MemoryStatus.SUPERSEDED:
            raise Conflict(
                f"memory {memory.pk} is superseded by memory {memory.superseded_by_id}: its status stays"
            )
        if not changes:
            return memory
        before = memory.status
        for key, value in changes.items():
            setattr(memory, key, value)
        memory.save(update_fields=[*changes, "updated_at"])
        audit(
            project=project,
            actor=by,
            via=via,
            action=_edit_action(changes),
            obj=memory,
            from_state=before,
            to_state=memory.status,
            detail={"fields": sorted(changes)},
        )
        workspace_changed(project)
        return memory


def _edit_action(changes: dict[str, Any]) -> str:
    if changes.get("status") == MemoryStatus.ARCHIVED:
        return "archive"
    if set(changes) <= {"pinned", "expires_at"}:
        return "pin" if changes["pinned"] else "unpin"
    return "edit"


def memory_archive(*, project: Project, memory_id: int, by: str, via: str = "api") -> AgentMemory:
    return memory_edit(project=project, memory_id=memory_id, by=by, via=via, status=MemoryStatus.ARCHIVED)
