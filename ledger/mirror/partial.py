"""The files a few changed rows touch, found and rendered from those rows (`ledger.mirror.changes`).

- An inbox entry: its own file; the paths it may have had stop being files if it is no longer pending.
- A decision: the log and `boundaries.md`. When the log is Canon's alone, both are the files they were
  with the changed decisions (and those a changed decision replaced, whose block names it) taken out
  and put back (`ledger.mirror.splice`); else they are rendered from every decision.
- A memory: the history it is listed in (the file it was adopted from, else its agent's home), and
  `patterns.md` when it is or was a pattern there. When the agents' homes are no longer those the last
  export wrote, every history is looked at.

Every other file of the kind stays as the last export left it (`ledger.mirror.export`). Each returns
None when the rows alone cannot tell (a row deleted, homes moved): the kind is then looked at whole.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q
from django.db.models.fields.json import KeyTextTransform

from ledger.mirror import render, sources, splice
from ledger.mirror.manifest import FileState
from ledger.mirror.paths import BOUNDARIES, PATTERNS, Layout
from ledger.mirror.pieces import Cache
from ledger.mirror.render import DECISIONS_PREAMBLE, Rendered, sha
from ledger.mirror.sources import DecisionRow, MemoryRow, Sources, digest
from ledger.mirror.targets import (
    Drawn,
    Target,
    drawn_boundaries,
    drawn_log,
    drawn_patterns,
    histories,
    history_target,
)
from ledger.models import (
    Agent,
    AgentMemory,
    Decision,
    MemoryStatus,
    MirrorChunk,
    MirrorFile,
    Project,
    Source,
)

# The heads of the files that list rows oldest first, as their rendering writes them with no row.
BOUNDARIES_HEAD = "# Boundaries\n"
PATTERNS_HEAD = "# Patterns\n"


def _drawn(
    spliced: splice.Spliced | None, moved: dict[str, splice.Moved], row: MirrorFile | None, log: bool
) -> Drawn | None:
    """The rendering a splice gave, with (in the log) the parts it knows: those of the blocks kept, as
    the manifest knew them, and those of the blocks moved."""
    if spliced is None:
        return None
    out = Rendered(text=spliced.text, levels=spliced.levels, lines=spliced.lines)
    if log:
        old = row.parts if row is not None else {}
        out.parts = {digest: key for digest, key in old.items() if key not in moved}
        out.parts.update((sha(m.text), key) for key, m in moved.items() if m.order is not None)
        # Each block known by the sha256 of its text: when two share one, the log is rendered whole.
        if len(out.parts) != len(spliced.keys) or len(set(old.values())) != len(old):
            return None
        out.placed = sorted(spliced.keys)
    return out, {}


# ---------------------------------------------------------------------------------------------
# Decisions


def decision_targets(
    project: Project, layout: Layout, states: dict[str, FileState], rows: Sources, ids: set[int], mark: str
) -> list[Target]:
    """The log and `boundaries.md`, rendered again: by splicing the changed decisions in when they can
    be, else whole. Their fingerprints are the changes' own, different at every export."""
    path = layout.decisions
    moved = _MovedDecisions(project, rows, ids)

    def log(base: str | None, row: MirrorFile | None, cache: Cache) -> Drawn:
        if base is None and cache.entries:
            found = moved.log(path)
            drawn = _drawn(splice.resplice(cache, DECISIONS_PREAMBLE, found, log=True), found, row, log=True)
            if drawn is not None:
                return drawn
        return drawn_log(rows, path, base, row, cache)

    def boundaries(base: str | None, row: MirrorFile | None, cache: Cache) -> Drawn:
        if cache.entries:
            found = moved.boundaries()
            drawn = _drawn(splice.resplice(cache, BOUNDARIES_HEAD, found), found, row, log=False)
            if drawn is not None:
                return drawn
        return drawn_boundaries(rows, cache)

    return [
        Target(path, digest("log", mark), log, adoptable=True),
        Target(BOUNDARIES, digest("boundaries", mark), boundaries),
    ]


class _MovedDecisions:
    """The decisions that changed, light and with their texts, read once for both files."""

    def __init__(self, project: Project, rows: Sources, ids: set[int]) -> None:
        self.project, self.rows, self.ids = project, rows, ids
        self._light: dict[int, DecisionRow] | None = None
        self.affected = set(ids)

    def light(self) -> dict[int, DecisionRow]:
        if self._light is None:
            # Those that name a changed decision as their replacement: their blocks name it.
            named = set(
                Decision.objects.filter(
                    project=self.project, superseded_by_id__in=sorted(self.ids)
                ).values_list("pk", flat=True)
            )
            found = {d.pk: d for d in sources.decision_rows(self.project, self.ids | named)}
            replacements = {d.superseded_by_id for d in found.values() if d.superseded_by_id} - set(found)
            found |= {d.pk: d for d in sources.decision_rows(self.project, replacements)}
            self._light = found
            self.affected = self.ids | named
        return self._light

    def log(self, path: str) -> dict[str, splice.Moved]:
        light = self.light()
        shown = [light[pk] for pk in self.affected if pk in light and light[pk].origin in ("", path)]
        named = [d.superseded_by_id for d in shown if d.superseded_by_id]
        full = self.rows.models(Decision, [*(d.pk for d in shown), *named])
        found = {f"decision:{pk}": splice.Moved(f"decision:{pk}", None) for pk in self.affected}
        for d in shown:
            replacement = light.get(d.superseded_by_id or 0)
            stamp = d.stamp if replacement is None else f"{d.stamp}>{replacement.stamp}"
            text = render.decision_text(full[d.pk], full)
            found[d.mirror_key] = splice.Moved(
                d.mirror_key, (d.order, d.pk), stamp, text, render.level(d, text)
            )
        return found

    def boundaries(self) -> dict[str, splice.Moved]:
        light = self.light()
        shown = [light[pk] for pk in self.ids if pk in light and render.is_boundary(light[pk])]
        full = self.rows.models(Decision, [d.pk for d in shown])
        found = {f"decision:{pk}": splice.Moved(f"decision:{pk}", None) for pk in self.ids}
        for d in shown:
            found[d.mirror_key] = splice.Moved(
                d.mirror_key, (d.order, d.pk), d.stamp, render.boundary_text(full[d.pk])
            )
        return found


# ---------------------------------------------------------------------------------------------
# Memories


def memory_targets(
    project: Project,
    layout: Layout,
    states: dict[str, FileState],
    rows: Sources,
    ids: set[int],
    mark: str,
    homes: Any,
) -> list[Target] | None:
    """The histories the changed memories are listed in, and `patterns.md` when one of them is or was a
    pattern there; None when a memory was deleted or the agents' homes moved."""
    changed = sources.memory_rows(AgentMemory.objects.filter(project=project, pk__in=sorted(ids)))
    notes = set(
        AgentMemory.objects.filter(project=project, pk__in=sorted(ids), source=Source.NOTES).values_list(
            "pk", flat=True
        )
    )
    if len(changed) + len(notes) != len(ids) or not isinstance(homes, dict):
        return None
    own = _own(project)
    places = histories(project, layout, own, rows)
    if rows.homes != homes:
        return None
    touched = {m.origin or homes.get(str(m.agent_id), "") for m in changed}
    found = [history_target(layout, states, rows, *place) for place in places if place[1] in touched]
    keys = {m.mirror_key for m in changed} | {f"agentmemory:{pk}" for pk in notes}
    if any(m.type == "pattern" for m in changed) or _listed_in(project, PATTERNS, keys):

        def patterns(base: str | None, row: MirrorFile | None, cache: Cache) -> Drawn:
            if cache.entries:
                moved = _moved_patterns(rows, changed, keys)
                drawn = _drawn(splice.resplice(cache, PATTERNS_HEAD, moved), moved, row, log=False)
                if drawn is not None:
                    return drawn
            return drawn_patterns(rows, cache)

        found.append(Target(PATTERNS, digest("patterns", mark), patterns))
    return found


def _own(project: Project) -> set[int]:
    """The agents that have memories of their own the files list (not adopted from a file, not notes)."""
    mine = AgentMemory.objects.filter(agent=OuterRef("pk"), origin="").exclude(source=Source.NOTES)
    listed = mine.exclude(Q(status=MemoryStatus.ARCHIVED) & ~Q(source=Source.IMPORT))
    return set(Agent.objects.filter(project=project).filter(Exists(listed)).values_list("pk", flat=True))


def _listed_in(project: Project, path: str, keys: set[str]) -> bool:
    """Whether the file Canon last wrote at `path` holds a row of these keys (asked of the database: the
    rows of its pieces are not read), or may: a chunk of its (`ledger.mirror.chunks`) names one."""
    lines = Q()
    for key in keys:
        lines |= Q(rows__contains=f"{key}\t")
    file = MirrorFile.objects.filter(project=project, path=path)
    if file.annotate(rows=KeyTextTransform("rows", "pieces")).filter(lines).exists():
        return True
    chunked = Q()
    for key in keys:
        chunked |= Q(text__contains=f"{key}\t")
    return MirrorChunk.objects.filter(chunked, file__in=file).exists()


def _moved_patterns(rows: Sources, changed: list[MemoryRow], keys: set[str]) -> dict[str, splice.Moved]:
    shown = [m for m in changed if render.is_pattern(m)]
    full = rows.models(AgentMemory, [m.pk for m in shown])
    found = {key: splice.Moved(key, None) for key in keys}
    for m in shown:
        found[m.mirror_key] = splice.Moved(
            m.mirror_key, (m.order, m.pk), m.stamp, render.pattern_text(full[m.pk])
        )
    return found
