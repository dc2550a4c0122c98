"""What the files are rendered from, read at the cost of what changed.

An export renders the files of a kind only when rows of that kind changed (`ledger.mirror.changes`).
It then reads the rows of that kind light (`DecisionRow`, `MemoryRow`: the key, the state and the stamp
of each row, no text), once for every file of the kind. The fingerprint of each file's inputs is that
of the rows it shows (their keys and stamps: a row's stamp is its `updated_at` as stored, so it changes
whenever the row is written) and of what else it depends on; only a file whose fingerprint changed is
rendered, and in it only the rows whose stamp changed since the file was written are rendered again from
their models (`Sources.texts`); the others keep the text the file holds (`ledger.mirror.pieces`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast, Length

from ledger.mirror import render
from ledger.mirror.pieces import Cache
from ledger.models import AgentMemory, Decision, InboxEntry, MemoryStatus, MemoryType, Project, Source

BATCH = 500
# What the texts of each kind of row read (`render`), with the agent's name.
TEXT_FIELDS: dict[type[Any], tuple[str, ...]] = {
    Decision: (
        "markdown",
        "status",
        "superseded_by_id",
        "content",
        "rationale",
        "created_at",
        "title",
        "type",
        "agent__name",
    ),
    AgentMemory: ("source", "markdown", "type", "content", "created_at", "agent__name"),
    InboxEntry: (
        "created_at",
        "title",
        "content",
        "rationale",
        "type",
        "importance",
        "tags",
        "run_id",
        "agent__name",
    ),
}


def digest(*parts: Any) -> str:
    """The fingerprint of a file's inputs: the sha256 of their `repr`, with the rendering's version."""
    return digest_text(repr(parts))


def digest_text(text: str) -> str:
    """`digest` of inputs already said as text."""
    return hashlib.sha256(f"{Cache.RENDERING}|{text}".encode()).hexdigest()


def stamps(rows: Iterable[DecisionRow | MemoryRow]) -> str:
    """What the fingerprint of a file says of the rows it shows: each one's key, stamp and state."""
    return "\n".join(f"{r.mirror_key}|{r.stamp}|{r.origin}|{r.status}|{r.type}" for r in rows)


def stamp_of(field: str) -> Cast:
    """The column as text, exactly as stored: a row's stamp changes whenever the row is written."""
    return Cast(field, output_field=CharField())


def moment(text: str) -> datetime:
    """A time read as text (`stamp_of`) as the aware datetime in UTC that Django gives: ISO 8601 on both
    engines, with no offset on SQLite, which stores UTC."""
    parsed = datetime.fromisoformat(text)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


# A memory indexed from a notes file lives in that file, which Canon only reads.
IN_FILES = ~Q(source=Source.NOTES)


# ---------------------------------------------------------------------------------------------
# Light rows


def fetch(rows: QuerySet[Any, Any]) -> list[tuple[Any, ...]]:
    """The tuples of a `values_list`, as the database gives them: no conversion per value (a light row
    needs none: its stamp is text, and 0 and 1 serve as well as False and True)."""
    try:
        sql, params = rows.query.sql_with_params()
    except EmptyResultSet:  # `pk__in` of no id
        return []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@dataclass(slots=True)
class DecisionRow:
    """A decision as the layout of the log and of `boundaries.md` reads it (`render.Row`)."""

    mirror_key: str
    pk: int
    stamp: str
    # Where the row goes in a file listing rows oldest first: `created_at` as stored.
    order: str
    origin: str
    status: str
    type: str
    held: bool
    superseded_by_id: int | None
    markdown_length: int


@dataclass(slots=True)
class MemoryRow:
    """A memory as the layout of a history and of `patterns.md` reads it (`render.Row`)."""

    mirror_key: str
    pk: int
    stamp: str
    order: str
    agent_id: int
    origin: str
    status: str
    source: str
    type: str
    markdown_length: int


def decision_rows(project: Project, ids: Iterable[int] | None = None) -> list[DecisionRow]:
    """The project's decisions (those of `ids`, when given), light, oldest first."""
    found = Decision.objects.filter(project=project)
    if ids is not None:
        found = found.filter(pk__in=sorted(set(ids)))
    values = found.order_by("created_at", "id").values_list(
        "pk",
        stamp_of("updated_at"),
        stamp_of("created_at"),
        "origin",
        "status",
        "type",
        "held",
        "superseded_by_id",
        Length("markdown"),
    )
    return [
        DecisionRow(f"decision:{pk}", pk, f"{stamp}|{length}", order, origin, status, kind, held, by, length)
        for pk, stamp, order, origin, status, kind, held, by, length in fetch(values)
    ]


def memory_rows(memories: QuerySet[AgentMemory]) -> list[MemoryRow]:
    found = (
        memories.filter(IN_FILES)
        .order_by("created_at", "id")
        .values_list(
            "pk",
            stamp_of("updated_at"),
            stamp_of("created_at"),
            "agent_id",
            "origin",
            "status",
            "source",
            "type",
            Length("markdown"),
        )
    )
    return [MemoryRow(f"agentmemory:{values[0]}", *values) for values in fetch(found)]


def listed(memory: MemoryRow) -> bool:
    """Whether a history lists the memory: an archived one leaves it, except a line the team wrote."""
    return memory.status != MemoryStatus.ARCHIVED or memory.source == Source.IMPORT


# ---------------------------------------------------------------------------------------------
# Texts


@dataclass
class Texts:
    """The text of each row a file shows (`found`, by key), the stamp each was drawn from, and the sha256
    of the texts taken from the file as Canon wrote it (known from its parts: not computed again)."""

    found: dict[str, str] = field(default_factory=dict)
    stamps: dict[str, str] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)

    def __call__(self, row: Any) -> str:
        try:
            return self.found[row.mirror_key]
        except AttributeError:
            return self.found[render.key(row)]

    def digest(self, key: str, text: str) -> str:
        """The sha256 of `text`, the row's text as placed in the file."""
        known = self.digests.get(key)
        if known is not None and self.found.get(key) is text:
            return known
        return render.sha(text)


class Sources:
    """The rows of one export, read once and only when a file to render needs them."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._decisions: list[DecisionRow] | None = None
        self._memories: list[MemoryRow] | None = None
        # Their place in the order of all (created, id), and the memories of each file: those adopted
        # from it (by its path), and each agent's own (by the agent's id).
        self._memories_order: dict[str, int] = {}
        self._by_file: dict[str | int, list[MemoryRow]] | None = None
        # The memories of one history, when not all memories were read.
        self._histories: dict[tuple[str, int, bool], list[MemoryRow]] = {}
        self._full: dict[type[Any], dict[int, Any]] = {Decision: {}, AgentMemory: {}, InboxEntry: {}}
        # Each agent's home history (`targets.histories`), once the histories were listed.
        self.homes: dict[str, str] | None = None

    @property
    def decisions(self) -> list[DecisionRow]:
        if self._decisions is None:
            self._decisions = decision_rows(self.project)
        return self._decisions

    def models(self, model: type[Decision | AgentMemory | InboxEntry], ids: Iterable[int]) -> dict[int, Any]:
        """The rows of these ids, each as what its text reads (`TEXT_FIELDS`, its agent's name as
        `.agent.name`: the texts of `render` read no more), each read once per export."""
        held = self._full[model]
        wanted = sorted({pk for pk in ids if pk not in held})
        if not wanted:
            return held
        names = ("pk", *TEXT_FIELDS[model])
        # Many of them (a first export): all the project's rows in one statement, rather than by ids.
        batches = (
            [model.objects.filter(project=self.project)]
            if len(wanted) > 4 * BATCH
            else [model.objects.filter(pk__in=wanted[i : i + BATCH]) for i in range(0, len(wanted), BATCH)]
        )
        # The time as text, parsed here: much quicker than the drivers' and Django's conversions.
        columns = [stamp_of(name) if name == "created_at" else name for name in names]
        for rows in batches:
            for values in rows.values_list(*columns):
                fields = dict(zip(names, values, strict=True))
                fields["created_at"] = moment(fields["created_at"])
                agent = SimpleNamespace(name=fields.pop("agent__name"))
                held[fields["pk"]] = SimpleNamespace(**fields, agent=agent)
        return held

    @property
    def memories(self) -> list[MemoryRow]:
        """Every memory the files may show, light, in the order files list them (oldest first)."""
        if self._memories is None:
            self._memories = memory_rows(AgentMemory.objects.filter(project=self.project))
            self._memories_order = {m.mirror_key: i for i, m in enumerate(self._memories)}
            self._by_file = {}
            for m in self._memories:
                if listed(m):
                    self._by_file.setdefault(m.origin or m.agent_id, []).append(m)
        return self._memories

    def history_rows(self, path: str, agent_id: int, home: bool) -> list[MemoryRow]:
        """The memories a history shows: those adopted from it and, in the agent's home, its own (an
        archived one only when the team wrote it: its line stays), oldest first.

        Unless all memories were read, only the agent's are: a memory adopted from a history is the
        agent's whose folder it is (the import adopts a history's lines for its folder's agent)."""
        if self._by_file is None:
            known = self._histories.get((path, agent_id, home))
            if known is None:
                mine = (Q(origin=path) | Q(origin="")) if home else Q(origin=path)
                agents = AgentMemory.objects.filter(mine, project=self.project, agent_id=agent_id)
                known = self._histories[path, agent_id, home] = [m for m in memory_rows(agents) if listed(m)]
            return known
        found = self._by_file.get(path, []) + (self._by_file.get(agent_id, []) if home else [])
        return sorted(found, key=lambda m: self._memories_order[m.mirror_key]) if home else found

    def pattern_rows(self) -> list[MemoryRow]:
        """The memories `patterns.md` shows: active patterns."""
        return [m for m in self.memories if m.type == MemoryType.PATTERN and m.status == MemoryStatus.ACTIVE]

    def texts(
        self,
        rows: Sequence[Any],
        cache: Cache,
        *,
        model: type[Decision | AgentMemory],
        stamp: Callable[[Any], str],
        draw: Callable[[Any], str],
        along: Callable[[Any], int | None] = lambda row: None,
    ) -> Texts:
        """The text of each of `rows`: the one the file holds when the row's stamp is the one it was
        written with, else `draw` of its model (read with the models `along` names)."""
        texts = Texts()
        found, stamps = texts.found, texts.stamps
        missing = []
        for row in rows:
            name, stamped = row.mirror_key, stamp(row)
            stamps[name] = stamped
            held = cache.text_of(name, stamped)
            if held is None:
                missing.append(row)
            else:
                found[name] = held
        texts.digests = cache.digests
        if missing:
            more = [other for row in missing if (other := along(row)) is not None]
            full = self.models(model, [*(row.pk for row in missing), *more])
            for row in missing:
                found[row.mirror_key] = draw(full[row.pk])
        return texts

    def log_texts(self, rows: Sequence[DecisionRow], cache: Cache) -> Texts:
        """The blocks of the decision log: a superseded decision's names its replacement, whose stamp
        counts too."""
        by_id = {d.pk: d for d in self.decisions}

        def stamp(row: DecisionRow) -> str:
            replacement = by_id.get(row.superseded_by_id or 0)
            return row.stamp if replacement is None else f"{row.stamp}>{replacement.stamp}"

        def draw(decision: Decision) -> str:
            return render.decision_text(decision, self._full[Decision])

        return self.texts(
            rows, cache, model=Decision, stamp=stamp, draw=draw, along=lambda row: row.superseded_by_id
        )
