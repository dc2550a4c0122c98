"""The files of each kind the ledger should be in, each with the fingerprint of its inputs and how to
render it.

Listing them reads the rows of the kind light (`ledger.mirror.sources`): the log and `boundaries.md`
show the decisions, `patterns.md` and each history the memories, each inbox file its entry, `now.md` the
open session; the fingerprint of an adopted file has what Canon adopted there too (its sha256). A file
is rendered only when the export finds its fingerprint changed (`ledger.mirror.export`); the files a
few changed rows touch are found from those rows alone (`ledger.mirror.partial`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from ledger.mirror import changes, render, sources
from ledger.mirror.manifest import FileState
from ledger.mirror.paths import BOUNDARIES, PATTERNS, Layout
from ledger.mirror.pieces import Cache
from ledger.mirror.render import Rendered
from ledger.mirror.sources import Sources, digest
from ledger.models import (
    Agent,
    AgentMemory,
    Decision,
    EntryStatus,
    InboxEntry,
    MirrorFile,
    Project,
    Session,
)

# A rendering: the file's new text and parts, and the stamp of each row whose text it holds.
Drawn = tuple[Rendered, dict[str, str]]
# Ids asked for in one statement.
MANY = 500


@dataclass
class Target:
    """A file the ledger should be in: its path, the fingerprint of its inputs, and how to render it from
    the adopted text (or None), its manifest row (or None) and the texts the file holds."""

    path: str
    inputs: str
    render: Callable[[str | None, MirrorFile | None, Cache], Drawn]
    # A team file Canon renders from what it adopted there (the log, histories, now.md). Any other file
    # that was adopted (an imported inbox file) is the team's and never written.
    adoptable: bool = False
    agent_id: int | None = None
    # The pending entry whose file this is, and the file's name the entry holds ("" before the first).
    entry_id: int | None = None
    entry_file: str = ""


def _adopted(state: FileState | None) -> str:
    return state.adopted_sha256 if state is not None else ""


def _known(row: MirrorFile | None) -> tuple[dict[str, str], list[str]]:
    return (row.parts, row.placed) if row is not None else ({}, [])


def targets(
    kind: str,
    project: Project,
    layout: Layout,
    states: dict[str, FileState],
    rows: Sources,
    *,
    entries: set[int] | None = None,
) -> list[Target]:
    """The files of one kind (`changes.KINDS`); of the inbox, those of `entries` alone when given."""
    if kind == changes.DECISION:
        return _log_targets(project, layout, states, rows)
    if kind == changes.MEMORY:
        inputs = sources.digest_text("patterns\n" + sources.stamps(rows.pattern_rows()))
        drawn = Target(PATTERNS, inputs, lambda base, row, cache: drawn_patterns(rows, cache))
        return [drawn, *_history_targets(project, layout, states, rows)]
    if kind == changes.ENTRY:
        return _inbox_targets(project, layout, states, rows, entries)
    session = Session.objects.filter(project=project, ended_at__isnull=True).first()
    if session is None:
        return []
    inputs = digest("now", session.pk, session.updated_at.isoformat(), _adopted(states.get(layout.now)))

    def draw(base: str | None, row: MirrorFile | None, cache: Cache) -> Drawn:
        return Rendered(render.render_now(session, base=base)), {}

    return [Target(layout.now, inputs, draw, adoptable=True)]


def _log_targets(
    project: Project, layout: Layout, states: dict[str, FileState], rows: Sources
) -> list[Target]:
    # The text of the team's own blocks counts too: the mirror sets it once, not touching `updated_at`.
    decisions = sources.stamps(rows.decisions) + repr([d.markdown_length for d in rows.decisions])
    return [
        Target(
            layout.decisions,
            digest("log", layout.decisions, decisions, _adopted(states.get(layout.decisions))),
            lambda base, row, cache: drawn_log(rows, layout.decisions, base, row, cache),
            adoptable=True,
        ),
        Target(
            BOUNDARIES,
            digest("boundaries", decisions),
            lambda base, row, cache: drawn_boundaries(rows, cache),
        ),
    ]


def drawn_log(rows: Sources, path: str, base: str | None, row: MirrorFile | None, cache: Cache) -> Drawn:
    known, placed = _known(row)
    held = set(known.values())
    # The decisions whose blocks the log may hold: those it holds already, and any no other file gave.
    needed = [d for d in rows.decisions if d.origin in ("", path) or d.mirror_key in held]
    texts = rows.log_texts(needed, cache)
    drawn = render.render_decisions(
        rows.decisions, path=path, base=base, known=known, placed=placed, text=texts, digest=texts.digest
    )
    drawn.marks = {d.mirror_key: (d.order, str(drawn.levels.get(d.mirror_key, ""))) for d in needed}
    return drawn, texts.stamps


def drawn_boundaries(rows: Sources, cache: Cache) -> Drawn:
    shown = [d for d in rows.decisions if render.is_boundary(d)]
    texts = rows.texts(shown, cache, model=Decision, stamp=lambda d: d.stamp, draw=render.boundary_text)
    drawn = render.boundaries(shown, texts)
    drawn.marks = {d.mirror_key: (d.order, "") for d in shown}
    return drawn, texts.stamps


def drawn_patterns(rows: Sources, cache: Cache) -> Drawn:
    shown = rows.pattern_rows()
    texts = rows.texts(shown, cache, model=AgentMemory, stamp=lambda m: m.stamp, draw=render.pattern_text)
    drawn = render.patterns(shown, texts)
    drawn.marks = {m.mirror_key: (m.order, "") for m in shown}
    return drawn, texts.stamps


def _history(
    rows: Sources, agent: Agent, path: str, home: bool, base: str | None, row: MirrorFile | None, cache: Cache
) -> Drawn:
    memories = rows.history_rows(path, agent.pk, home)
    shown = [m for m in memories if render.shown(m)]
    texts = rows.texts(shown, cache, model=AgentMemory, stamp=lambda m: m.stamp, draw=render.memory_text)
    known, placed = _known(row)
    drawn = render.render_history(
        agent, memories, base=base, known=known, placed=placed, text=texts, digest=texts.digest
    )
    return drawn, texts.stamps


def _history_targets(
    project: Project, layout: Layout, states: dict[str, FileState], rows: Sources
) -> list[Target]:
    """A history for every folder an agent has (adopted, or written by Canon) and for its home folder.

    A memory adopted from a history is rendered in that file only; Canon's own memories go to the
    agent's home alone (`render.history_homes`), so two folders of one agent (`Rai/`, `rai/`) never
    receive each other's lines.
    """
    own = {m.agent_id for m in rows.memories if m.origin == "" and sources.listed(m)}
    return [history_target(layout, states, rows, *place) for place in histories(project, layout, own, rows)]


def histories(
    project: Project, layout: Layout, own: set[int], rows: Sources
) -> list[tuple[Agent, str, bool]]:
    """Each history file the agents have (`own`: the agents that have memories of their own), with its
    agent and whether it is the agent's home; the homes are kept in `rows.homes`."""
    # The history files each agent has, adopted ones first, the first adopted first.
    held: dict[int, list[tuple[tuple[bool, datetime, str], str]]] = {}
    prefix = layout.agents + "/"
    for path, agent_id, adopted_at, updated_at in MirrorFile.objects.filter(
        project=project, agent__isnull=False, path__startswith=prefix
    ).values_list("path", "agent_id", "adopted_at", "updated_at"):
        folder = path.removeprefix(prefix).split("/")[0]
        if path == layout.history(folder):
            held.setdefault(agent_id, []).append(
                ((adopted_at is None, adopted_at or updated_at, folder), folder)
            )
    folders = {agent_id: [folder for _, folder in sorted(found)] for agent_id, found in held.items()}
    agents = list(Agent.objects.filter(project=project, pk__in=own | set(folders)).order_by("pk"))
    homes = render.history_homes(agents, folders)
    rows.homes = {str(agent_id): layout.history(folder) for agent_id, folder in homes.items()}
    found = []
    for agent in agents:
        home = layout.history(homes[agent.pk])
        for path in sorted({home, *(layout.history(f) for f in folders.get(agent.pk, []))}):
            found.append((agent, path, path == home))
    return found


def history_target(
    layout: Layout, states: dict[str, FileState], rows: Sources, agent: Agent, path: str, home: bool
) -> Target:
    shown = sources.stamps(rows.history_rows(path, agent.pk, home))
    inputs = digest("history", path, agent.pk, agent.name, home, shown, _adopted(states.get(path)))

    def draw(base: str | None, row: MirrorFile | None, cache: Cache) -> Drawn:
        return _history(rows, agent, path, home, base, row, cache)

    return Target(path, inputs, draw, adoptable=True, agent_id=agent.pk)


def _inbox_targets(
    project: Project, layout: Layout, states: dict[str, FileState], rows: Sources, only: set[int] | None
) -> list[Target]:
    """A file for each pending entry that has none yet, and Canon's own files of pending entries (of the
    entries `only` names, when given)."""
    found = []
    pending = InboxEntry.objects.filter(project=project, status=EntryStatus.PENDING)
    if only is not None and len(only) <= MANY:
        pending = pending.filter(pk__in=sorted(only))  # else all of them, the others left out below
    for pk, slug, file, stamp in sources.fetch(
        pending.order_by("slug").values_list("pk", "slug", "file", sources.stamp_of("updated_at"))
    ):
        if only is not None and pk not in only:
            continue
        path = layout.inbox_file(file or f"{slug}.md")
        state = states.get(path)
        if file and (state is None or state.adopted or not state.sha256):
            continue  # the team's file, or one removed outside Canon: never written again
        inputs = sources.digest_text(f"inbox|{pk}|{stamp}")
        found.append(Target(path, inputs, partial(_inbox_file, rows, pk), entry_id=pk, entry_file=file))
    return found


def entry_paths(project: Project, layout: Layout, entries: set[int]) -> set[str]:
    """Every path the files of these entries may have had (Canon names a new entry's file after its
    slug; the file it was imported from, or took that name, is its `file`)."""
    found = set()
    ids = sorted(entries)
    for start in range(0, len(ids), MANY):
        for slug, file in InboxEntry.objects.filter(
            project=project, pk__in=ids[start : start + MANY]
        ).values_list("slug", "file"):
            found.add(layout.inbox_file(f"{slug}.md"))
            if file:
                found.add(layout.inbox_file(file))
    return found


def _inbox_file(rows: Sources, pk: int, base: str | None, row: MirrorFile | None, cache: Cache) -> Drawn:
    return Rendered(text=render.render_inbox_file(rows.models(InboxEntry, [pk])[pk])), {}
