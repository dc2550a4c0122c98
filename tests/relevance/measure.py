"""Retrieval measured on the relevance set (`corpus`): three systems rank rows for each task, as the
task's agent, and the figures say how soon a target comes.

- `search`: Canon's one search across the ledger,
  `ledger.finder.find(project, agent_name=<agent>, coordinator=False, q=<task>)`.
- `layer`: the relevant layer of the compiled context, `ledger.context.compile(project, <agent>,
  task=<task>, max_items=0)`, its rows in block order (`relevant.order`). The memory layer is left
  empty (`max_items=0`) so that every row the agent may read competes for the relevant layer, as it
  does in the other two systems; the layer's token budget is the default one.
- `bm25`: plain BM25 (`rank_bm25.BM25Okapi`) over exactly the rows the agent may see (the project's
  active decisions, the live memories it may read, summaries included, and its own episodes), each
  row's text and the task cut into lower-cased word tokens, no stop words dropped and no stemming. A
  row holding none of the task's words is not returned.

Figures, over the tasks: hit@1 and hit@5, the share of tasks with a target at rank 1 or within the
first five; MRR, the mean of 1 / the rank of the first target within the first ten (0 when none is).
Per kind of target (decision, memory, episode, summary), the same over the tasks with a target of that
kind, counting only the targets of that kind.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rank_bm25 import BM25Okapi

from ledger import context, services, visibility
from ledger.lifecycle import live
from ledger.models import Agent, Decision, DecisionStatus, Episode
from ledger.values import agent_key
from tests.relevance import team_harbormaster, team_loamwise, team_quillkit
from tests.relevance.corpus import Loaded, Task, Team, load

TEAMS: tuple[Team, ...] = (team_harbormaster.TEAM, team_quillkit.TEAM, team_loamwise.TEAM)
SYSTEMS = ("search", "layer", "bm25")
KINDS = ("decision", "memory", "episode", "summary")
DEPTH = 10
HITS_AT = (1, 5)
_TOKEN = re.compile(r"\w+")


def tasks() -> list[tuple[Team, Task]]:
    return [(team, task) for team in TEAMS for task in team.tasks]


def search_is_available() -> bool:
    """Whether Canon has its one search across the ledger (`ledger.finder`)."""
    return importlib.util.find_spec("ledger.finder") is not None


def load_teams() -> list[Loaded]:
    """Every team's ledger, each in a project of its own."""
    loaded = []
    for team in TEAMS:
        project, _ = services.project_create_or_update(slug=team.slug, name=team.name)
        loaded.append(load(project, team))
    return loaded


@dataclass(frozen=True)
class Outcome:
    """What one system returned for one task: the keys of the rows, best first (a row the set does
    not name as `<kind id>`), at most `DEPTH`."""

    loaded: Loaded
    task: Task
    found: tuple[str, ...]

    def rank(self, kind: str | None = None) -> int | None:
        """The 1-based rank of the first target (of `kind`, when given), or None when none is returned."""
        team = self.loaded.team
        targets = {key for key in self.task.targets if kind is None or team.kind_of(key) == kind}
        return next((i for i, key in enumerate(self.found, start=1) if key in targets), None)

    def unseeable(self) -> list[str]:
        """The rows returned that the agent must never be given: archived or superseded rows, another
        agent's private memories or episodes."""
        team, me = self.loaded.team, agent_key(self.task.agent)
        private = {m.key for m in team.memories if not m.shared and agent_key(m.agent) != me}
        private |= {e.key for e in team.episodes if agent_key(e.agent) != me}
        return [key for key in self.found if key in team.retired() or key in private]


@dataclass(frozen=True)
class Figures:
    """Over `tasks` tasks: the share with a target within the first k rows (`hits[k]`, k in `HITS_AT`)
    and the mean reciprocal rank of the first target within `DEPTH`."""

    tasks: int
    hits: dict[int, float]
    mrr: float

    @classmethod
    def of(cls, outcomes: list[Outcome], kind: str | None = None) -> Figures:
        """The figures over the outcomes whose task has a target (of `kind`, when given), counting only
        the targets of that kind."""
        counted = [
            o
            for o in outcomes
            if kind is None or any(o.loaded.team.kind_of(key) == kind for key in o.task.targets)
        ]
        ranks = [rank for rank in (o.rank(kind) for o in counted) if rank is not None]
        if not counted:
            return cls(0, dict.fromkeys(HITS_AT, 0.0), 0.0)
        hits = {k: sum(1 for rank in ranks if rank <= k) / len(counted) for k in HITS_AT}
        return cls(len(counted), hits, sum(1 / rank for rank in ranks) / len(counted))


def _keys(loaded: Loaded, rows: list[tuple[str, int]]) -> tuple[str, ...]:
    return tuple(loaded.key(kind, pk) or f"<{kind} {pk}>" for kind, pk in rows[:DEPTH])


def search(loaded: Loaded, task: Task) -> tuple[str, ...]:
    """The search's first `DEPTH` hits for the task, as the task's agent."""
    from ledger import finder

    hits = finder.find(loaded.project, agent_name=task.agent, coordinator=False, q=task.text, limit=DEPTH)
    return _keys(loaded, [(hit.kind, hit.id) for hit in hits])


def layer(loaded: Loaded, task: Task) -> tuple[str, ...]:
    """The relevant layer's rows for the task, in block order, the memory layer left empty."""
    result = context.compile(loaded.project, task.agent, task=task.text, max_items=0)
    if result.error is not None:
        raise RuntimeError(f"compile failed for {task.text!r}: {result.error}")
    return _keys(loaded, list(result.relevant.order))


@dataclass
class Baseline:
    """Plain BM25 over the rows each agent may see, one index per agent of each team."""

    indexes: dict[tuple[str, str], tuple[BM25Okapi, list[str]]] = field(default_factory=dict)

    def __call__(self, loaded: Loaded, task: Task) -> tuple[str, ...]:
        index, keys = self._index(loaded, task.agent)
        scores = index.get_scores(tokens(task.text))
        order = sorted(range(len(keys)), key=lambda i: -scores[i])
        return tuple(keys[i] for i in order if scores[i] > 0)[:DEPTH]

    def _index(self, loaded: Loaded, agent_name: str) -> tuple[BM25Okapi, list[str]]:
        cache_key = (loaded.team.slug, agent_key(agent_name))
        if cache_key not in self.indexes:
            rows = visible_rows(loaded, agent_name)
            self.indexes[cache_key] = (BM25Okapi([tokens(text) for _, text in rows]), [k for k, _ in rows])
        return self.indexes[cache_key]


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens: runs of letters, digits and underscores."""
    return _TOKEN.findall(text.lower())


def visible_rows(loaded: Loaded, agent_name: str) -> list[tuple[str, str]]:
    """Every row the agent may be given, as (key, text): the project's active decisions, the live
    memories it may read (session summaries included), its own episodes."""
    project = loaded.project
    agent = Agent.objects.get(project=project, key=agent_key(agent_name))
    rows: list[tuple[str, str]] = []
    for d in Decision.objects.filter(project=project, status=DecisionStatus.ACTIVE).order_by("id"):
        rows.append(
            (loaded.key("decision", d.pk) or f"<decision {d.pk}>", f"{d.title}\n{d.content}\n{d.rationale}")
        )
    for m in visibility.memories_visible_to(project, agent).filter(live()).order_by("id"):
        rows.append((loaded.key("memory", m.pk) or f"<memory {m.pk}>", m.content))
    for e in Episode.objects.filter(project=project, agent=agent).order_by("id"):
        text = "\n".join([e.tried, e.difficulties, e.feedback, *e.files])
        rows.append((loaded.key("episode", e.pk) or f"<episode {e.pk}>", text))
    return rows


def run(system: str, loaded: list[Loaded]) -> list[Outcome]:
    """Every task of every team through `system` ("search", "layer" or "bm25")."""
    rank: Callable[[Loaded, Task], tuple[str, ...]]
    rank = Baseline() if system == "bm25" else {"search": search, "layer": layer}[system]
    return [Outcome(each, task, rank(each, task)) for each in loaded for task in each.team.tasks]


# --- What is printed ---


def describe_set() -> str:
    """One line on the set: its tasks, their targets by kind, and the rows of the ledgers."""
    targets = dict.fromkeys(KINDS, 0)
    for team, task in tasks():
        for key in task.targets:
            targets[team.kind_of(key)] += 1
    decisions = sum(len(t.decisions) for t in TEAMS)
    boundaries = sum(len(t.boundaries()) for t in TEAMS)
    memories = sum(len(t.memories) for t in TEAMS)
    episodes = sum(len(t.episodes) for t in TEAMS)
    summaries = sum(len(t.sessions) - 1 for t in TEAMS)
    retired = sum(len(t.retired()) for t in TEAMS)
    return (
        f"{len(tasks())} tasks over {len(TEAMS)} teams ({decisions} decisions, {boundaries} of them "
        f"boundaries; {memories} memories; {episodes} episodes; {summaries} session summaries; {retired} "
        f"rows archived or superseded); {sum(targets.values())} targets: "
        + ", ".join(f"{count} {kind}" for kind, count in targets.items())
    )


def table(results: dict[str, list[Outcome]]) -> str:
    """The figures of each system over every task, then over the tasks with a target of each kind."""
    lines = [f"{'':<20} {'tasks':>5} {'hit@1':>6} {'hit@5':>6} {'MRR':>6}"]
    for system, outcomes in results.items():
        for label, kind in [(system, None), *[(f"  {kind} targets", kind) for kind in KINDS]]:
            f = Figures.of(outcomes, kind)
            lines.append(f"{label:<20} {f.tasks:>5} {f.hits[1]:>6.3f} {f.hits[5]:>6.3f} {f.mrr:>6.3f}")
    return "\n".join(lines)


def per_task(results: dict[str, list[Outcome]]) -> str:
    """Each task's rank under each system ("-": not in the first ten), and what came first where a
    system missed."""
    systems = list(results)
    lines = [" ".join(f"{s:>6}" for s in systems) + "  task"]
    for row in zip(*results.values(), strict=True):
        ranks = " ".join(f"{o.rank() or '-'!s:>6}" for o in row)
        lines.append(f"{ranks}  [{row[0].task.agent}] {row[0].task.text}")
        lines.append(f"{'':>{7 * len(systems)}}  targets {', '.join(row[0].task.targets)}")
        for system, outcome in zip(systems, row, strict=True):
            rank = outcome.rank()
            if rank is None or rank > HITS_AT[-1]:
                lines.append(
                    f"{'':>{7 * len(systems)}}  {system}: {', '.join(outcome.found[:5]) or '(nothing)'}"
                )
    return "\n".join(lines)
