"""Agent memories: recorded, edited and archived (nothing is deleted)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from ledger.lifecycle import expires_at_for
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
from ledger.services.effects import audit, workspace_changed
from ledger.services.errors import NotFound
from ledger.services.fields import (
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
) -> AgentMemory:
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
        content_sha256=content_sha256(content),
        content_key=content_key(content),
        tokens=count_tokens(content),
        pinned=pinned,
        expires_at=expires_at_for(source, now, pinned=pinned),
        created_at=now,
    )


def memory_record(
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
) -> AgentMemory:
    """Record a memory for an agent. A coordinator's injection says who injected it, and may say which
    kind of learning it is (`category`, blank otherwise)."""
    name = checked_agent_name(agent_name)
    values: dict[str, Any] = {
        "type": checked_choice("type", type, MemoryType.values),
        "importance": checked_choice("importance", importance or Importance.MEDIUM, Importance.values),
        "content": checked_text("content", content, required=True),
        "tags": checked_tags(tags),
        "session_id": checked_text("session_id", session_id, max_length=SESSION_ID_MAX_LENGTH).strip(),
        "source": checked_choice("source", source, Source.values),
        "injected_by": checked_text("injected_by", injected_by, max_length=150),
        "category": checked_choice("category", category, MemoryCategory.values) if category != "" else "",
    }
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=name)
        memory = memory_insert(project=project, agent=agent, **values)
        workspace_changed(project)
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
    agent: Agent | None = None,
) -> AgentMemory:
    """Edit content, importance, tags or status (`archived` replaces deleting). `agent` scopes the lookup."""
    changes: dict[str, Any] = {}
    if content is not None:
        text = checked_text("content", content, required=True)
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
        changes["status"] = checked_choice("status", status, MemoryStatus.values)
    with transaction.atomic():
        qs = locked(AgentMemory.objects.filter(project=project))
        if agent is not None:
            qs = qs.filter(agent=agent)
        memory = qs.filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"no memory {memory_id} for this agent in project {project.slug}")
        changes = {k: v for k, v in changes.items() if getattr(memory, k) != v}
        if not changes:
            return memory
        before = memory.status
        for key, value in changes.items():
            setattr(memory, key, value)
        memory.save(update_fields=[*changes, "updated_at"])
        action = "archive" if changes.get("status") == MemoryStatus.ARCHIVED else "edit"
        audit(
            project=project,
            actor=by,
            via=via,
            action=action,
            obj=memory,
            from_state=before,
            to_state=memory.status,
            detail={"fields": sorted(changes)},
        )
        workspace_changed(project)
        return memory


def memory_archive(*, project: Project, memory_id: int, by: str, via: str = "api") -> AgentMemory:
    return memory_edit(project=project, memory_id=memory_id, by=by, via=via, status=MemoryStatus.ARCHIVED)
