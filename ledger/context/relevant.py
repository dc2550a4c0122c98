"""The relevant-knowledge layer (docs/compiler.md, "Relevant past knowledge: the score"): the
candidates `ledger.context.layers` reads for a task, weighed by `ledger.relevance.blend` and taken,
best first, while their tokens fit the layer's budget. A candidate's line is rendered only when it is
taken."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ledger.blocks import episode_line, relevant_decision_line, relevant_memory_line
from ledger.context import layers
from ledger.context.answer import Layer
from ledger.models import Source
from ledger.relevance import blend

# How many candidates of each kind (memories, episodes, decisions) the layer reads, best text score first.
RELEVANT_CANDIDATES = 50
# The kinds of row the relevant layer holds, in the order equal scores take them; an episode is also
# the source it is weighed as (`ledger.lifecycle.source_weight`, CANON_MEMORY_SOURCE_WEIGHTS).
DECISION, MEMORY, EPISODE = "decision", "memory", "episode"
RELEVANT_KINDS = (DECISION, MEMORY, EPISODE)


@dataclass(frozen=True)
class _Candidate:
    """One row the relevant layer may take: its blended score, its kind (one of `RELEVANT_KINDS`) and
    id, how to render its line (only the rows taken are rendered) and its tokens."""

    score: float
    kind: str
    pk: int
    line: Callable[[], str]
    tokens: int


def _aware(value: Any) -> datetime:
    """A timestamp as the cursor gives it (SQLite: text, or a naive UTC datetime), made aware."""
    moment = parse_datetime(value) if isinstance(value, str) else value
    if moment is None:
        raise ValueError(f"not a timestamp: {value!r}")
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def select_relevant(
    cursor: Any,
    project_id: int,
    key: str,
    layer: Layer,
    *,
    in_memory_layer: list[int],
    task: str,
    words: list[str],
    budget: int,
    now: datetime,
) -> list[str]:
    """The relevant layer's lines, best blended score first, taken while their tokens fit `budget` (one
    that does not fit is passed over), leaving out the memories `in_memory_layer`. Three queries: the
    memory, episode and decision candidates (`ledger.context.layers`), each matched by the task
    (`layers.task_match`)."""
    match = layers.task_match(cursor, task, words)
    taken_already = set(in_memory_layer)
    memories = [
        row
        for row in layers.relevant_memory_rows(
            cursor, project_id, key, match, now, RELEVANT_CANDIDATES + len(taken_already)
        )
        if row[0] not in taken_already
    ][:RELEVANT_CANDIDATES]
    episodes = layers.relevant_episode_rows(cursor, project_id, key, match, RELEVANT_CANDIDATES)
    decisions = layers.relevant_decision_rows(cursor, project_id, match, RELEVANT_CANDIDATES)

    best = max([float(row[-1]) for row in (*memories, *episodes, *decisions)], default=0.0)
    candidates: list[_Candidate] = []
    for pk, type_, content, tokens, source, pinned, rank, created_at, row_key, name, by, text in memories:
        age = (now - _aware(created_at)).total_seconds()
        score = blend(
            float(text), best, importance_rank=rank, source=source, age_seconds=age, pinned=bool(pinned)
        )
        line = functools.partial(
            relevant_memory_line,
            type_=type_,
            content=content,
            own=row_key == key,
            agent_name=name,
            source=source,
            written_by=by,
        )
        candidates.append(_Candidate(score, MEMORY, pk, line, tokens))
    for pk, outcome, tried, difficulties, feedback, tokens, created_at, text in episodes:
        age = (now - _aware(created_at)).total_seconds()
        # An episode has no importance (it counts as high) and ages as an agent's own memory does.
        score = blend(
            float(text), best, importance_rank=0, source=EPISODE, age_seconds=age, decays_as=Source.AGENT
        )
        line = functools.partial(
            episode_line, outcome=outcome, tried=tried, difficulties=difficulties, feedback=feedback
        )
        candidates.append(_Candidate(score, EPISODE, pk, line, tokens))
    for pk, type_, title, content, rationale, tokens, source, created_at, name, text in decisions:
        decided = _aware(created_at)
        # A decision has no importance (it counts as high); it is weighed and ages as its source does.
        score = blend(
            float(text), best, importance_rank=0, source=source, age_seconds=(now - decided).total_seconds()
        )
        line = functools.partial(
            relevant_decision_line,
            type_=type_,
            agent_name=name,
            decided=decided.date(),
            title=title,
            content=content,
            rationale=rationale,
        )
        candidates.append(_Candidate(score, DECISION, pk, line, tokens))
    # Best first; equal scores: decisions, then memories, then episodes, each the newer row (higher id) first.
    candidates.sort(key=lambda c: (-c.score, RELEVANT_KINDS.index(c.kind), -c.pk))

    lines: list[str] = []
    taken: dict[str, list[int]] = {kind: [] for kind in RELEVANT_KINDS}
    for candidate in candidates:
        if layer.tokens + candidate.tokens > budget:
            continue
        layer.tokens += candidate.tokens
        lines.append(candidate.line())
        taken[candidate.kind].append(candidate.pk)
        layer.order.append((candidate.kind, candidate.pk))
    layer.ids, layer.episodes, layer.decisions = taken[MEMORY], taken[EPISODE], taken[DECISION]
    return lines
