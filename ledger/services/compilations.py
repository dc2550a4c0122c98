"""The record of what an agent was told: each compiled context, with the rows it named."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
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


# How many compilations one pruning transaction removes: short transactions, so a long prune never
# holds the tables the compiler writes to.
PRUNE_BATCH = 1_000


def compilations_prune(*, before: datetime, project: Project | None = None, dry_run: bool = False) -> int:
    """Remove the compilations recorded before `before` (of one project, or of all), with the rows
    naming what each told, a batch at a time; how many there were. Nothing else refers to a
    compilation, and the ledger's rows it named are untouched."""
    old = Compilation.objects.filter(created_at__lt=before)
    if project is not None:
        old = old.filter(project=project)
    if dry_run:
        return old.count()
    removed = 0
    while True:
        with transaction.atomic():
            batch = list(old.order_by("id").values_list("id", flat=True)[:PRUNE_BATCH])
            if not batch:
                return removed
            Compilation.objects.filter(pk__in=batch).delete()
        removed += len(batch)
