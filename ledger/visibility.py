"""Who may see a row, and what may change who sees it: the one rule (docs/ledger.md "Who sees what").

What one agent wrote reaches another agent only after a person acted on it: a dashboard user, a
coordinator token, or an operator's command. Everything that reads for an agent (the compiler's
layers, the API's and MCP's lists, search) takes its rule from here, and everything that writes
asks here before it widens who reads a row:

- an agent reads its own memories, the ones tagged `cross-team` (a person merged or wrote them, since
  an agent's own cross-team memory is proposed instead) and the summaries of ended sessions (shown
  with the agents who wrote them), and its own episodes only;
- an agent sees every inbox proposal but the private learnings, patterns and updates of others;
- a shared memory is re-activated, re-tagged, re-worded or shared only by a coordinator
  (`memory_change_refusal`);
- the Scribe, which runs with no person behind it, merges only what stays with the run's own agent
  (`scribe_refusal`), within the run as the server saw it (`run_started`);
- the project's coordinator agent speaks only through coordinator tokens (`agent_token_refusal`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TypeAlias

from django.conf import settings
from django.db.models import Expression, Min, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from ledger import untrusted
from ledger.models import (
    BOUNDARY_TYPES,
    PRIVATE_ENTRY_TYPES,
    Agent,
    AgentMemory,
    Compilation,
    Episode,
    InboxEntry,
    MemoryStatus,
    Project,
    Source,
)
from ledger.values import CROSS_TEAM_TAG, agent_key

# The scope words the full-text index holds beside each row's text (migration 0010, which writes them):
# a memory's and an episode's agent (this prefix and the agent's id), a cross-team memory's team and a
# session summary's project (each prefix and the project's id). They say in the index what
# `memory_readable` and `episode_readable` say of the rows.
SCOPE_AGENT = "canonagent"
SCOPE_TEAM = "canonteam"
SCOPE_SUMMARY = "canonsummary"

# Who reads a row: an agent, its id, or an expression giving its id when the query runs (the
# compiler's statements, `ledger.context.layers`, are built from these same rules that way).
Viewer: TypeAlias = Agent | int | Expression


def memory_readable(viewer: Viewer) -> Q:
    """The memories `viewer` may read: its own, the cross-team ones and the session summaries (the rule
    of the scope words the full-text index holds for each memory: `memory_scope_words`)."""
    return Q(agent=viewer) | Q(cross_team=True) | Q(source=Source.SESSION_SUMMARY)


def memory_scope_words(viewer: Agent) -> list[str]:
    """The scope words (migration 0010) of the memories `viewer` may read: its own, the project's
    cross-team ones and the project's session summaries, as `memory_readable` reads them."""
    return [
        f"{SCOPE_AGENT}{viewer.pk}",
        f"{SCOPE_TEAM}{viewer.project_id}",
        f"{SCOPE_SUMMARY}{viewer.project_id}",
    ]


def memories_visible_to(project: Project, viewer: Agent | None) -> QuerySet[AgentMemory]:
    """The project's memories `viewer` may read, with their agents; a coordinator (None) reads all."""
    qs = AgentMemory.objects.filter(project=project).select_related("agent")
    return qs if viewer is None else qs.filter(memory_readable(viewer)).read_by(viewer)


def memory_is_readable(memory: AgentMemory, viewer: Agent | None) -> bool:
    """One memory by the rule of `memory_readable`."""
    return (
        viewer is None
        or memory.agent_id == viewer.pk
        or memory.cross_team
        or memory.source == Source.SESSION_SUMMARY
    )


def episode_readable(viewer: Viewer) -> Q:
    """The episodes `viewer` may read: its own (scope word `SCOPE_AGENT` and its id in the index)."""
    return Q(agent=viewer)


def entries_visible_to(qs: QuerySet[InboxEntry], viewer: Agent | None) -> QuerySet[InboxEntry]:
    """An agent sees every proposal except the private learnings, patterns and updates of other agents
    (those not tagged `cross-team`); a coordinator (None) sees all. A proposal is not context: what it
    says reaches an agent's context only once a person merged it."""
    if viewer is None:
        return qs
    # The tags as JSON text: the quoted tag matches that whole tag only, on SQLite and PostgreSQL alike.
    shared = Q(tags_text__contains=f'"{CROSS_TEAM_TAG}"')
    private = Q(type__in=PRIVATE_ENTRY_TYPES) & ~shared & ~Q(agent=viewer)
    return qs.alias(tags_text=Cast("tags", TextField())).exclude(private)


def memory_change_refusal(
    memory: AgentMemory,
    *,
    content: str | None = None,
    importance: str | None = None,
    tags: list[str] | None = None,
    status: str | None = None,
) -> str | None:
    """Why an agent may not make this change to its own memory, or None when it may.

    Every agent reads a shared (`cross-team`) memory, so changing its text, importance or tags, or
    making it active again, is a coordinator's act; so is sharing a private one. Archiving is allowed:
    it only takes text away from other agents' context.
    """
    if memory.cross_team:
        if any(value is not None for value in (content, importance, tags)):
            return (
                "this memory is shared with every agent: a coordinator changes its text, importance "
                f"or tags; record a new memory tagged {CROSS_TEAM_TAG!r} to propose a change"
            )
        if status is not None and status != MemoryStatus.ARCHIVED and status != memory.status:
            return "this memory is shared with every agent: only a coordinator makes it active again"
        return None
    if tags is not None and CROSS_TEAM_TAG in tags:
        return (
            f"sharing goes through review: record the memory tagged {CROSS_TEAM_TAG!r} to propose it "
            "to a coordinator"
        )
    return None


def scribe_refusal(entry: InboxEntry, key: str, *, backstop: bool) -> str | None:
    """Why the Scribe leaves `entry` (of the run of the agent with `key`) for a person, or None when it
    may merge it: a private learning, pattern or update the agent itself proposed, or, with the
    coordinator `backstop`, the coordinator agent's own architectural or scope proposal."""
    if entry.agent.key != key:
        return "another agent's entry"
    if CROSS_TEAM_TAG in entry.tags:
        return f"tagged {CROSS_TEAM_TAG!r}: every agent would read it, so a person merges it"
    boundary = backstop and entry.type in BOUNDARY_TYPES
    voices = (Source.AGENT, Source.COORDINATOR) if boundary else (Source.AGENT,)
    if entry.source not in voices:
        return f"came from {entry.source}, not from the agent's own token: a person merges it"
    if entry.type not in PRIVATE_ENTRY_TYPES and not boundary:
        return "a decision: a person merges it"
    flagged = untrusted.flags("\n".join((entry.title, entry.content, entry.rationale)))
    if flagged:
        return f"flagged ({', '.join(flagged)}): a person merges it"
    return None


def run_started(project: Project, key: str, run_id: str, started_at: datetime) -> datetime:
    """When the run began as the server saw it, for the entries that carry no run id: not before the
    client's `started_at`, nor before the first row the server recorded with this run id (a
    compilation, an entry or an episode of the agent), nor more than CANON_SCRIBE_RUN_HOURS ago."""
    floors = [started_at, timezone.now() - timedelta(hours=settings.CANON_SCRIBE_RUN_HOURS)]
    of_run = {"project": project, "agent__key": key, "run_id": run_id}
    for model in (Compilation, InboxEntry, Episode):
        first = model.objects.filter(**of_run).aggregate(first=Min("created_at"))["first"]  # type: ignore[attr-defined]
        if first is not None:
            floors.append(first)
    return max(floors)


def agent_token_refusal(project: Project, name: str) -> str | None:
    """Why no agent token may act as `name` in `project`: the coordinator agent's name belongs to
    coordinator tokens (its entries are what the backstop merges, its memories every summary's owner)."""
    if agent_key(name) == agent_key(project.coordinator_agent):
        return (
            f"{name!r} is the project's coordinator agent: it speaks through coordinator tokens "
            "(issue one with --role coordinator)"
        )
    return None
