"""The compiler's layers hold the rows the selectors give, row for row (docs/compiler.md, "Layers").

The compiler reads each layer with statements built once from the rules that `ledger.selectors`,
`ledger.visibility` and `ledger.lifecycle` define (`ledger.context.layers`); the selectors read with
the same rules through the ORM. On a random ledger (every type, status, importance and source of
memory, expired, pinned and shared ones, decisions of every type and status, held ones, episodes,
sessions ended with a summary, and a second project with an agent of the same name), for readers who
own rows, one who owns none and one the project does not know, the rows each layer may take before any
budget are the same both ways, in the same order where the layer has one. Both are also checked
against the documented rules, written once more here over the rows in Python.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from ledger import selectors, services
from ledger.context import layers
from ledger.models import (
    Agent,
    AgentMemory,
    Decision,
    DecisionStatus,
    DecisionType,
    Episode,
    EpisodeOutcome,
    Importance,
    MemoryStatus,
    MemoryType,
    Project,
    Source,
)
from ledger.values import agent_key

# Every row of the ledger holds this word, so a task of it reaches every row the relevant layer may take.
WORD = "zephyr"
# More than any layer holds here: every candidate is read.
ALL = 10_000
NAMES = ["Ripley", "Kenji", "Marlow", "Ash"]
FILLER = ["queue", "retry", "webhook", "billing", "cache", "deploy", "schema", "index", "worker", "lease"]


@dataclass
class Seen:
    """Which layers were compared with rows in them and with rows left out, over a whole ledger."""

    filled: set[str] = field(default_factory=set)
    narrowed: set[str] = field(default_factory=set)

    def note(self, layer: str, found: Collection[int], out_of: int) -> None:
        if found:
            self.filled.add(layer)
        if len(found) < out_of:
            self.narrowed.add(layer)


def _text(rng: random.Random, label: str) -> str:
    return f"{label} {WORD} " + " ".join(rng.choices(FILLER, k=rng.randint(2, 8)))


def _moment(rng: random.Random, now: datetime, moments: list[datetime]) -> datetime:
    """A time in the past year, often one already given to another row (so that ids break ties)."""
    if moments and rng.random() < 0.3:
        return rng.choice(moments)
    moment = now - timedelta(days=rng.randint(1, 365), seconds=rng.randint(0, 86_399))
    moments.append(moment)
    return moment


def build_ledger(project: Project, rng: random.Random, now: datetime, names: list[str]) -> None:
    """Memories, decisions, episodes and sessions of every kind, in `project`, by `names` and the
    project's coordinator agent."""
    writers = [*names, project.coordinator_agent]
    moments: list[datetime] = []
    for number in range(2):
        services.session_start(project=project, session_id=f"{project.slug}-{number}", focus_area="f")
        services.session_update_current(project=project, summary=_text(rng, f"summary {number}"), end=True)
    if rng.random() < 0.7:
        services.session_start(project=project, session_id=f"{project.slug}-open", focus_area="now")
    for number in range(70):
        memory = services.memory_record(
            project=project,
            agent_name=rng.choice(writers),
            type=rng.choice(MemoryType.values),
            importance=rng.choice(Importance.values),
            content=_text(rng, f"memory {project.slug} {number}"),
            tags=rng.choice([[], ["cross-team"], ["ops"], ["cross-team", "ops"]]),
            source=rng.choice(Source.values),
            pinned=rng.random() < 0.1,
        )
        expiry = rng.choice([None, now - timedelta(days=3), now + timedelta(days=3), now, memory.expires_at])
        AgentMemory.objects.filter(pk=memory.pk).update(
            status=rng.choices(MemoryStatus.values, weights=[6, 1, 1])[0],
            expires_at=expiry,
            created_at=_moment(rng, now, moments),
        )
    for number in range(30):
        decision = services.decision_create(
            project=project,
            agent_name=rng.choice(writers),
            type=rng.choice(DecisionType.values),
            title=f"Decision {number} on the {WORD}",
            content=_text(rng, f"decision {number}"),
            by="lead",
        )
        status = rng.choices(DecisionStatus.values, weights=[5, 1, 1])[0]
        Decision.objects.filter(pk=decision.pk).update(
            status=status,
            # A decision adopted from a file as superseded may not name its replacement.
            source=Source.IMPORT if status == DecisionStatus.SUPERSEDED else decision.source,
            held=rng.random() < 0.2,
            created_at=_moment(rng, now, moments),
        )
    for number in range(25):
        result = services.episode_record(
            project=project,
            agent_name=rng.choice(writers),
            run_id=f"run-{number}",
            outcome=rng.choice(EpisodeOutcome.values),
            tried=_text(rng, f"episode {number}"),
        )
        Episode.objects.filter(pk=result.episode.pk).update(created_at=_moment(rng, now, moments))


# --- The documented rules, over rows in Python ---


def live(memory: AgentMemory, now: datetime) -> bool:
    return memory.status == MemoryStatus.ACTIVE and (memory.expires_at is None or memory.expires_at > now)


def told(decision: Decision) -> bool:
    return decision.status == DecisionStatus.ACTIVE and not decision.held


def documented(project: Project, key: str, now: datetime) -> dict[str, Any]:
    """Each layer's rows as docs/compiler.md says them, for the agent with `key`."""
    memories = list(AgentMemory.objects.filter(project=project).select_related("agent"))
    decisions = list(Decision.objects.filter(project=project))
    episodes = list(Episode.objects.filter(project=project).select_related("agent"))
    boundary = ("architectural", "scope")
    high = ("learning", "pattern")

    def in_memory_layer(m: AgentMemory) -> bool:
        own = m.agent.key == key
        shared = "cross-team" in m.tags and not own
        kind = m.type in high and m.importance == "high"
        return live(m, now) and ((own and (m.type == "core_context" or kind)) or (shared and kind))

    def readable(m: AgentMemory) -> bool:
        return m.agent.key == key or "cross-team" in m.tags or m.source == "session_summary"

    # Importance (high first), then newest first, then the higher id first.
    layer = sorted(
        filter(in_memory_layer, memories), key=lambda m: (m.importance_rank, now - m.created_at, -m.pk)
    )
    oldest_first = sorted(decisions, key=lambda d: (d.created_at, d.pk))
    return {
        "boundaries": [d.pk for d in oldest_first if told(d) and d.type in boundary],
        "memory": [m.pk for m in layer],
        "relevant memories": {m.pk for m in memories if readable(m) and live(m, now)},
        "episodes": {e.pk for e in episodes if e.agent.key == key},
        "decisions": {d.pk for d in decisions if told(d) and d.type not in boundary},
        "session": next((s.pk for s in project.sessions.all() if s.ended_at is None), None),
    }


# --- The two readings ---


def compiled(project: Project, key: str, now: datetime) -> dict[str, Any]:
    """Each layer's rows as the compiler reads them, before any budget."""
    with connection.cursor() as cursor:
        match = layers.task_match(cursor, WORD, [WORD])
        session = layers.session_row(cursor, project.pk)
        return {
            "boundaries": [row[0] for row in layers.boundary_rows(cursor, project.pk)],
            "memory": [row[0] for row in layers.memory_rows(cursor, project.pk, key, now, ALL)],
            "relevant memories": {
                row[0] for row in layers.relevant_memory_rows(cursor, project.pk, key, match, now, ALL)
            },
            "episodes": {row[0] for row in layers.relevant_episode_rows(cursor, project.pk, key, match, ALL)},
            "decisions": {row[0] for row in layers.relevant_decision_rows(cursor, project.pk, match, ALL)},
            "session": None if session is None else session[0],
        }


def selected(project: Project, key: str, now: datetime) -> dict[str, Any]:
    """Each layer's rows as the selectors read them through the ORM."""
    agent = Agent.objects.filter(project=project, key=key).first()
    viewer: Agent | int = agent if agent is not None else 0
    session = selectors.open_session(project)
    return {
        "boundaries": list(selectors.boundaries(project).values_list("pk", flat=True)),
        "memory": list(selectors.memory_layer(project, viewer, now).values_list("pk", flat=True)),
        "relevant memories": set(
            selectors.relevant_memories(project, viewer, now).values_list("pk", flat=True)
        ),
        "episodes": set(selectors.relevant_episodes(project, viewer).values_list("pk", flat=True)),
        "decisions": set(selectors.relevant_decisions(project).values_list("pk", flat=True)),
        "session": None if session is None else session.pk,
    }


@pytest.mark.parametrize("seed", range(4))
def test_the_compiler_and_the_selectors_agree_row_for_row(project, other_project, seed):
    rng = random.Random(seed)
    now = timezone.now()
    build_ledger(project, rng, now, NAMES)
    build_ledger(other_project, rng, now, ["Ripley", "Vasquez"])
    readers = [*NAMES, project.coordinator_agent, "Hicks", "Vasquez"]  # Hicks: in no project
    seen = Seen()
    sizes = {
        "boundaries": Decision.objects.filter(project=project).count(),
        "memory": AgentMemory.objects.filter(project=project).count(),
        "relevant memories": AgentMemory.objects.filter(project=project).count(),
        "episodes": Episode.objects.filter(project=project).count(),
        "decisions": Decision.objects.filter(project=project).count(),
    }
    for name in readers:
        key = agent_key(name)
        by_compiler, by_selectors = compiled(project, key, now), selected(project, key, now)
        assert by_compiler == by_selectors, name
        expected = documented(project, key, now)
        assert by_compiler == expected, name
        for layer, out_of in sizes.items():
            seen.note(layer, expected[layer], out_of)
    # The ledger put every rule to work: each layer held rows, and left some out.
    assert seen.filled == set(sizes) and seen.narrowed == set(sizes)
