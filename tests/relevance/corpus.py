"""The relevance set: three made-up teams' ledgers, shaped like Squad teams' own, and the tasks their
agents start work with, each labelled with the rows a careful person would want in front of the agent.

The teams (`harbormaster`, `quillkit`, `loamwise`) were written for this set; no text comes from a
public repository. Each ledger holds what a Squad team's `.squad/` folder holds once Canon has adopted
it and the team has worked beside Canon for a while:

- decisions as teams write them in `decisions.md`: titles such as "Queue reminder jobs in
  PostgreSQL, not Redis", bodies with `**By:**`, `**What:**` and `**Why:**` lines or `## Context` /
  `## Decision` sections, tables and code, file names, ticket ids and versions (`publish-handbook.sh`,
  `QKPLAN-07`, `fw-v2.4.1`, `SKIP LOCKED`); a few are superseded or archived and must never be
  returned; the architectural and scope ones are boundaries, which every compile carries whole, so no
  task is labelled with one;
- agents' histories: core context, `📌` updates and learnings, long and short, most private to their
  agent, some shared with the team (`cross-team`), some archived or corrected (never returned);
- episodes (what an agent's run tried, and how it ended) and the summaries of closed sessions.

The tasks are phrased the way an agent starts work ("put the public handbook back to how it was
before this morning's publish"), in other words than their targets. The tasks and their labels were
written before anything was measured on this set, and are not changed to suit what any search finds.

`load` records a team's ledger through the services, oldest row first, each dated as the team wrote
it: the decision log's blocks and the history files' entries adopted as Canon adopts a team's files
(`decisions_adopt`, `memories_adopt`), then superseded or archived as the team did; the memories an
agent recorded itself and the shared ones a person merged through `memory_store`; runs through
`episode_record`; sessions through `session_start`, each closing the one before.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from django.utils import timezone

from ledger import models, services
from ledger.lifecycle import expires_at_for
from ledger.models import DecisionType, Project, Source
from ledger.values import CROSS_TEAM_TAG

CORE, LEARNING, PATTERN, UPDATE = "core_context", "learning", "pattern", "update"
TECHNICAL, PROCESS = DecisionType.TECHNICAL.value, DecisionType.PROCESS.value
ARCHITECTURAL, SCOPE = DecisionType.ARCHITECTURAL.value, DecisionType.SCOPE.value
BOUNDARY_TYPES = frozenset({ARCHITECTURAL, SCOPE})
# Who wrote a memory: most came in with the team's history files, some were recorded by an agent, the
# shared ones were merged from the inbox by a person.
IMPORT, AGENT, INBOX = Source.IMPORT.value, Source.AGENT.value, Source.INBOX.value
SUCCEEDED, FAILED, ABANDONED = "succeeded", "failed", "abandoned"
# Where the team's files are, for the rows adopted from them.
DECISIONS_FILE = ".squad/decisions.md"
# Who a "User directive" block of a team's log is by: Squad writes down the person's words as `user`'s.
USER = "user"


class Decision(NamedTuple):
    """A decision of the team's log. `replaces` names the decision it supersedes (written earlier)."""

    key: str
    by: str
    title: str
    body: str
    days_ago: int
    type: str = TECHNICAL
    rationale: str = ""
    replaces: str = ""
    archived: bool = False


class Memory(NamedTuple):
    """An entry of an agent's history. `shared`: tagged `cross-team`. `corrects` names the memory it
    replaces (written earlier; that one becomes superseded)."""

    key: str
    agent: str
    type: str
    content: str
    days_ago: int
    importance: str = "medium"
    source: str = IMPORT
    shared: bool = False
    archived: bool = False
    corrects: str = ""


class Episode(NamedTuple):
    """One run of an agent: what it tried, how it ended, what got in its way."""

    key: str
    agent: str
    outcome: str
    tried: str
    days_ago: int
    files: tuple[str, ...] = ()
    difficulties: str = ""
    feedback: str = ""


class Session(NamedTuple):
    """A work session of the team, written by `by`. Every session but the team's last is closed, and
    its summary kept as a memory every agent reads."""

    key: str
    by: str
    focus: str
    summary: str
    days_ago: int
    issues: tuple[str, ...] = ()


class Task(NamedTuple):
    """A task an agent starts, and the keys of the rows that should be in front of it."""

    agent: str
    text: str
    targets: tuple[str, ...]


class Team(NamedTuple):
    slug: str
    name: str
    decisions: tuple[Decision, ...]
    memories: tuple[Memory, ...]
    episodes: tuple[Episode, ...]
    sessions: tuple[Session, ...]
    tasks: tuple[Task, ...]

    def kind_of(self, key: str) -> str:
        """What a key names: "decision", "memory", "episode" or "summary"."""
        return _kinds(self)[key]

    def retired(self) -> frozenset[str]:
        """The archived and superseded rows: never returned, by any search."""
        return _retired(self)

    def boundaries(self) -> frozenset[str]:
        """The architectural and scope decisions: in every compiled context whole, never a target."""
        return frozenset(d.key for d in self.decisions if d.type in BOUNDARY_TYPES)


@functools.cache
def _kinds(team: Team) -> dict[str, str]:
    kinds = {d.key: "decision" for d in team.decisions}
    kinds |= {m.key: "memory" for m in team.memories}
    kinds |= {e.key: "episode" for e in team.episodes}
    kinds |= {s.key: "summary" for s in team.sessions[:-1]}
    return kinds


@functools.cache
def _retired(team: Team) -> frozenset[str]:
    replaced = {d.replaces for d in team.decisions if d.replaces}
    corrected = {m.corrects for m in team.memories if m.corrects}
    archived = {d.key for d in team.decisions if d.archived} | {m.key for m in team.memories if m.archived}
    return frozenset(replaced | corrected | archived)


@dataclass
class Loaded:
    """A team's ledger as recorded in a project: each key's row id, by kind (a summary by the id of the
    memory its session's summary was kept as)."""

    team: Team
    project: Project
    ids: dict[str, dict[str, int]] = field(default_factory=dict)

    def key(self, kind: str, pk: int) -> str | None:
        """The key of the row of `kind` with id `pk`, or None for a row the set does not name. A memory
        id may name a summary: summaries are kept as memories."""
        kinds = ("memory", "summary") if kind == "memory" else (kind,)
        return next((self._keys[each][pk] for each in kinds if pk in self._keys[each]), None)

    @functools.cached_property
    def _keys(self) -> dict[str, dict[int, str]]:
        return {kind: {pk: key for key, pk in ids.items()} for kind, ids in self.ids.items()}


def load(project: Project, team: Team) -> Loaded:
    """Record `team`'s ledger in `project` through the services, oldest row first, each dated as the
    team wrote it (`days_ago` before now); closed sessions' summaries become memories as sessions
    end. Returns every key's row id."""
    loaded = Loaded(team, project, {"decision": {}, "memory": {}, "episode": {}, "summary": {}})
    items: list[Decision | Memory | Episode | Session] = [
        *team.decisions,
        *team.memories,
        *team.episodes,
        *team.sessions,
    ]
    now = timezone.now()
    # Oldest first; rows of the same day in the team's order (the sort is stable).
    for item in sorted(items, key=lambda item: -item.days_ago):
        when = now - timedelta(days=item.days_ago)
        if isinstance(item, Decision):
            _decision(loaded, item, when)
        elif isinstance(item, Memory):
            _memory(loaded, item, when)
        elif isinstance(item, Episode):
            _episode(loaded, item, when)
        else:
            _session(loaded, item, when)
    return loaded


def _decision(loaded: Loaded, item: Decision, when: datetime) -> None:
    """A block of the team's `decisions.md`, adopted as Canon adopts a team's log; one that replaces
    an earlier decision supersedes it, one the team archived is archived."""
    project, ids = loaded.project, loaded.ids["decision"]
    (decision,) = services.decisions_adopt(
        project=project,
        items=[
            services.Adopted(
                markdown=f"### {when:%Y-%m-%d}: {item.title}\n{item.body}\n",
                content=item.body,
                type=item.type,
                author=item.by,
                title=item.title,
                date=when,
            )
        ],
        origin=DECISIONS_FILE,
    )
    if item.replaces:
        services.decision_supersede(
            project=project, decision_id=ids[item.replaces], superseded_by_id=decision.pk, by="Scribe"
        )
    if item.archived:
        services.decision_archive(project=project, decision_id=decision.pk, by="Scribe")
    ids[item.key] = decision.pk


def _memory(loaded: Loaded, item: Memory, when: datetime) -> None:
    """An entry of the agent's `history.md`, adopted as Canon adopts a history file, or a memory the
    agent recorded, or a shared one merged from the inbox (`memory_store`, near-duplicates flagged);
    a correction supersedes the memory it corrects, an archived one is archived."""
    project, ids = loaded.project, loaded.ids["memory"]
    if item.source == IMPORT and not item.corrects:
        if item.importance != "medium" or item.shared:
            raise ValueError(f"{item.key}: an adopted entry is of medium importance and not shared")
        (memory,) = services.memories_adopt(
            project=project,
            agent_name=item.agent,
            items=[services.Adopted(markdown=item.content, content=item.content, type=item.type, date=when)],
            origin=f".squad/agents/{item.agent.lower()}/history.md",
        )
    else:
        memory = services.memory_store(
            project=project,
            agent_name=item.agent,
            type=item.type,
            importance=item.importance,
            content=item.content,
            tags=[CROSS_TEAM_TAG] if item.shared else [],
            source=item.source,
            corrects=ids[item.corrects] if item.corrects else None,
        ).memory
        models.AgentMemory.objects.filter(pk=memory.pk).update(
            created_at=when, expires_at=expires_at_for(item.source, when)
        )
    if item.archived:
        services.memory_archive(project=project, memory_id=memory.pk, by="Scribe", via="import")
    ids[item.key] = memory.pk


def _episode(loaded: Loaded, item: Episode, when: datetime) -> None:
    episode = services.episode_record(
        project=loaded.project,
        agent_name=item.agent,
        run_id=f"run-{item.key}",
        outcome=item.outcome,
        tried=item.tried,
        files=list(item.files),
        difficulties=item.difficulties,
        feedback=item.feedback,
    ).episode
    models.Episode.objects.filter(pk=episode.pk).update(created_at=when)
    loaded.ids["episode"][item.key] = episode.pk


def _session(loaded: Loaded, item: Session, when: datetime) -> None:
    """Open the session (closing the one before, whose summary is then kept as a memory)."""
    project = loaded.project
    previous = models.Session.objects.filter(project=project, ended_at__isnull=True).first()
    session = services.session_start(
        project=project,
        session_id=item.key,
        focus_area=item.focus,
        active_issues=list(item.issues),
        summary=item.summary,
        by=item.by,
    )
    models.Session.objects.filter(pk=session.pk).update(started_at=when)
    if previous is not None:
        models.Session.objects.filter(pk=previous.pk).update(ended_at=when)
        kept = models.AgentMemory.objects.get(
            project=project, source=Source.SESSION_SUMMARY, session_id=previous.session_id
        )
        models.AgentMemory.objects.filter(pk=kept.pk).update(
            created_at=when, expires_at=expires_at_for(Source.SESSION_SUMMARY, when)
        )
        loaded.ids["summary"][previous.session_id] = kept.pk
