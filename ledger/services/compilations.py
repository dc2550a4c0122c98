"""The record of what an agent was told: each compiled context, with the rows it named."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from ledger.models import Compilation, Project
from ledger.services.projects import agent_get_or_create


def compilation_record(
    *,
    project: Project,
    agent_name: str,
    run_id: str,
    child: bool,
    text: str,
    sha256: str,
    tokens: int,
    layers: dict[str, dict[str, Any]],
    decision_ids: Sequence[int],
    memory_ids: Sequence[int],
    skipped_ids: Sequence[int],
    max_items: int,
    max_tokens: int,
    episode_ids: Sequence[int] = (),
    task: str = "",
    budgets: dict[str, int] | None = None,
) -> Compilation:
    """What an agent was told in a run: the compiled text and the rows it named, kept for the audit.

    `memory_ids` are every memory told, of the memory and the relevant layers alike (the layers say
    which was where); `episode_ids` the episodes of the relevant layer; `task` what that layer was
    chosen for; `budgets` every layer's budget as used."""
    session_ids = layers.get("session", {}).get("ids") or []
    with transaction.atomic():
        compilation = Compilation.objects.create(
            project=project,
            agent=agent_get_or_create(project=project, name=agent_name),
            run_id=run_id[:200],
            child=child,
            text=text,
            sha256=sha256,
            tokens=tokens,
            layers=layers,
            session_id=session_ids[0] if session_ids else None,
            skipped_ids=list(skipped_ids),
            max_items=max_items,
            max_tokens=max_tokens,
            task=task,
            budgets=budgets or {},
        )
        Compilation.decisions.through.objects.bulk_create(
            [
                Compilation.decisions.through(compilation_id=compilation.pk, decision_id=pk)
                for pk in decision_ids
            ]
        )
        Compilation.memories.through.objects.bulk_create(
            [
                Compilation.memories.through(compilation_id=compilation.pk, agentmemory_id=pk)
                for pk in dict.fromkeys(memory_ids)
            ]
        )
        Compilation.episodes.through.objects.bulk_create(
            [
                Compilation.episodes.through(compilation_id=compilation.pk, episode_id=pk)
                for pk in dict.fromkeys(episode_ids)
            ]
        )
    return compilation
