"""One search across the ledger (docs/api.md "Search"): decisions, memories, episodes, session summaries
and, for coordinators, inbox entries, as one list, best match first.

`find` asks the full-text index (`ledger.search`) for each kind of row separately, among the rows the
reader may see (`ledger.visibility`, the rule of every list), and reads the best of each kind (the
memories and the ended sessions' summaries, which are memories, in one read of their one index). Then
it puts them in one order. The index's scores cannot be compared from one kind to another as they are:
BM25 weighs each word by how rare it is in its own table (so a table of three decisions scores a
perfect match near zero), and `ts_rank_cd` has no scale at all. Each hit's score is therefore

    score = relative * coverage

- `relative`: the row's text score divided by the best text score of its index for this query (1.0
  for the best decision, the best memory or summary, …): the index's own order within a kind is kept;
- `coverage`: the share of the query's words the row holds, in any of its fields, which means the
  same for every kind: a memory holding four of the five words comes before the best decision holding
  one of them;

and a row that is no longer in force (a superseded or archived decision or memory, an expired memory,
a merged or rejected inbox entry, asked for with `inactive`) counts half (`INACTIVE_WEIGHT`), and says
what it is in its `status`. The open session's summary has no index entry: it is matched here, word by
word, and counts as the best of its kind. Equal scores go to decisions first, then memories, summaries,
episodes and entries, then the newer row.

Which words a row holds, in which field, and the excerpt shown for it are read from the row's text
the way the index reads it (`ledger.search.Matcher`, `ledger.search.excerpt`). A row the index matched
through a token the words cannot show (PostgreSQL's parser keeps `deploy-web-pages.sh` whole) still
counts one word.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from ledger import selectors, visibility
from ledger.lifecycle import live
from ledger.models import (
    Agent,
    Decision,
    DecisionStatus,
    EntryStatus,
    Episode,
    InboxEntry,
    MemoryStatus,
    Project,
    Session,
    Source,
)
from ledger.search import EXCERPT_SCAN, SCORE, Matcher, best, excerpt
from ledger.services import NotFound, invalid

DECISION, MEMORY, EPISODE, SUMMARY, ENTRY = "decision", "memory", "episode", "summary", "entry"
# Every kind of row a search finds, in the order equal scores are given.
KINDS = (DECISION, MEMORY, SUMMARY, EPISODE, ENTRY)
# What a coordinator may search; an agent, everything but the inbox.
AGENT_KINDS = (DECISION, MEMORY, SUMMARY, EPISODE)

QUERY_MAX_LENGTH = 2_000  # as long as a task (`ledger.context.TASK_MAX_LENGTH`): a task is a query
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
# How many rows of each kind are read beyond `limit`: the order of a kind's rows changes a little once
# their coverage counts, so a few more are weighed.
CANDIDATES = 5
# What a row no longer in force counts, against one in force.
INACTIVE_WEIGHT = 0.5
# The longest title (a row's title, or its first line), in characters.
TITLE_LENGTH = 120
# The id of the open session's summary, which is no memory yet (memories' ids start at 1).
OPEN_SUMMARY_ID = 0
# How the excerpt marks a word the search matched.
MARK_OPEN, MARK_CLOSE = "<mark>", "</mark>"
# The fields a title is taken from, never shown again in the excerpt, and those only listed (a path, a
# tag, a slug is no sentence to excerpt).
_TITLE_FIELDS = {"title"}
_LISTED_FIELDS = {"slug", "tags", "files"}
_EMPHASIS = re.compile(r"\*\*|__")


@dataclass(frozen=True)
class Why:
    """The query's words (as typed, lower-cased) that one field of the row holds."""

    field: str
    words: tuple[str, ...]


@dataclass(frozen=True)
class Hit:
    """One row found, with what a reader needs to decide whether to open it.

    `id` is the row's id in its own table: a decision's, a memory's (an ended session's summary is kept
    as a memory of the coordinator agent), an episode's, an inbox entry's; the open session's summary,
    which is no memory yet, has 0. Every summary has its `session_id`, an episode its `run_id`.
    `title` is the row's title or its first line; `excerpt` the part of its text that holds the most of
    the query's words, one line, each matched word between `<mark>` and `</mark>` (`parts` holds the
    same excerpt as pieces, each marked or not, for a page that escapes them). `why` says which of the
    query's words each field holds, `words` every query word the row holds, in the query's order.
    `status` is the row's status (`expired` for an expired memory), an episode's outcome, `open` or
    `ended` for a summary. `agent` is who wrote it (for a summary, its writers).
    """

    kind: str
    id: int
    title: str
    parts: tuple[tuple[str, bool], ...]
    score: float
    why: tuple[Why, ...]
    words: tuple[str, ...]
    status: str
    agent: str
    created_at: datetime
    session_id: str = ""
    run_id: str = ""

    @property
    def excerpt(self) -> str:
        return "".join(f"{MARK_OPEN}{text}{MARK_CLOSE}" if marked else text for text, marked in self.parts)


@dataclass
class _Row:
    """A row the index found, before it is weighed against the others."""

    kind: str
    id: int
    fields: dict[str, str]
    title: str
    status: str
    agent: str
    created_at: datetime
    text_score: float | None  # None: matched here, not by the index
    inactive: bool = False
    session_id: str = ""
    run_id: str = ""
    # The kind whose index scored it: a summary is scored among the memories, in their index.
    table: str = ""


# ---------------------------------------------------------------------------------------------
# Titles


def _cut(text: str, length: int) -> str:
    """`text` at most `length` characters, cut at a space where one is near, with `…` when cut."""
    if len(text) <= length:
        return text
    head = text[: length - 1]
    space = head.rfind(" ")
    return (head[:space] if space > length // 2 else head).rstrip() + "…"


def first_line(text: str) -> str:
    """The first line of `text` that is not blank, without its Markdown marks (a heading's `#`, a
    bullet, `**bold**`), at most `TITLE_LENGTH` characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _cut(" ".join(_EMPHASIS.sub("", line).lstrip("#>-*+ ").split()), TITLE_LENGTH)


# ---------------------------------------------------------------------------------------------
# The rows of each kind the reader may see, best first


def _score(row: dict[str, Any]) -> float:
    return float(row[SCORE] or 0.0)


def _decisions(project: Project, q: str, count: int, inactive: bool) -> list[_Row]:
    rows = Decision.objects.filter(project=project)
    if not inactive:
        rows = rows.filter(status=DecisionStatus.ACTIVE)
    fields = ("id", "title", "content", "rationale", "status", "created_at", "agent__name")
    return [
        _Row(
            kind=DECISION,
            id=d["id"],
            fields={"title": d["title"], "content": d["content"], "rationale": d["rationale"]},
            title=_cut(" ".join(d["title"].split()), TITLE_LENGTH),
            status=d["status"],
            agent=d["agent__name"],
            created_at=d["created_at"],
            text_score=_score(d),
            inactive=d["status"] != DecisionStatus.ACTIVE,
        )
        for d in best(rows, q, count, fields)
    ]


def _memory_status(status: str, expires_at: datetime | None, now: datetime) -> str:
    """A memory's status, `expired` for an active one past its time (`AgentMemory.expired`)."""
    expired = expires_at is not None and expires_at <= now
    return "expired" if status == MemoryStatus.ACTIVE and expired else status


def _memories(
    project: Project, viewer: Agent | None, q: str, count: int, inactive: bool, kinds: Collection[str]
) -> list[_Row]:
    """Memories `viewer` may read, of `kinds`: `memory`, `summary` (the ended sessions' summaries,
    source `session_summary`) or both, read together from the one index they share."""
    rows = visibility.memories_visible_to(project, viewer)
    if MEMORY not in kinds:
        rows = rows.filter(source=Source.SESSION_SUMMARY)
    elif SUMMARY not in kinds:
        rows = rows.exclude(source=Source.SESSION_SUMMARY)
    if not inactive:
        rows = rows.filter(live())
    fields = (
        "id",
        "content",
        "tags",
        "status",
        "expires_at",
        "created_at",
        "session_id",
        "source",
        "injected_by",
        "agent__name",
    )
    found = []
    now = timezone.now()
    # Memories and summaries share one index and one order: the best `count` of both are enough.
    for m in best(rows, q, count, fields):
        status = _memory_status(m["status"], m["expires_at"], now)
        summary = m["source"] == Source.SESSION_SUMMARY
        if summary:
            fields_shown = {"summary": m["content"]}
            writer = m["injected_by"] or m["agent__name"]
            status = "ended" if status == MemoryStatus.ACTIVE else status
        else:
            fields_shown = {"content": m["content"], "tags": ", ".join(m["tags"])}
            writer = m["agent__name"]
        found.append(
            _Row(
                kind=SUMMARY if summary else MEMORY,
                id=m["id"],
                fields=fields_shown,
                title=first_line(m["content"]),
                status=status,
                agent=writer,
                created_at=m["created_at"],
                text_score=_score(m),
                inactive=status not in (MemoryStatus.ACTIVE, "ended"),
                session_id=m["session_id"] if summary else "",
                table=MEMORY,
            )
        )
    return found


def _open_summary(project: Project, matcher: Matcher) -> list[_Row]:
    """The open session's summary when it holds a word of the query: it is in no index."""
    session = (
        Session.objects.filter(project=project, ended_at__isnull=True)
        .values("session_id", "summary", "summary_by", "started_at")
        .first()
    )
    if session is None:
        return []
    summary = session["summary"]
    if not summary.strip() or not matcher.found(summary[:EXCERPT_SCAN]):
        return []
    return [
        _Row(
            kind=SUMMARY,
            id=OPEN_SUMMARY_ID,
            fields={"summary": summary},
            title=first_line(summary),
            status="open",
            agent=", ".join(session["summary_by"]),
            created_at=session["started_at"],
            text_score=None,
            session_id=session["session_id"],
        )
    ]


def _episodes(project: Project, viewer: Agent | None, q: str, count: int) -> list[_Row]:
    rows = Episode.objects.filter(project=project)
    if viewer is not None:
        rows = rows.filter(agent=viewer)
    fields = (
        "id",
        "tried",
        "difficulties",
        "feedback",
        "files",
        "outcome",
        "created_at",
        "run_id",
        "agent__name",
    )
    return [
        _Row(
            kind=EPISODE,
            id=e["id"],
            fields={
                "tried": e["tried"],
                "difficulties": e["difficulties"],
                "feedback": e["feedback"],
                "files": " ".join(e["files"]),
            },
            title=first_line(e["tried"]),
            status=e["outcome"],
            agent=e["agent__name"],
            created_at=e["created_at"],
            text_score=_score(e),
            run_id=e["run_id"],
        )
        for e in best(rows, q, count, fields)
    ]


def _entries(project: Project, viewer: Agent | None, q: str, count: int, inactive: bool) -> list[_Row]:
    rows = InboxEntry.objects.filter(project=project)
    if not inactive:
        rows = rows.filter(status=EntryStatus.PENDING)
    rows = visibility.entries_visible_to(rows, viewer)
    fields = ("id", "title", "slug", "content", "rationale", "status", "created_at", "agent__name")
    return [
        _Row(
            kind=ENTRY,
            id=e["id"],
            fields={
                "title": e["title"],
                "slug": e["slug"],
                "content": e["content"],
                "rationale": e["rationale"],
            },
            title=_cut(" ".join(e["title"].split()), TITLE_LENGTH) or first_line(e["content"]),
            status=e["status"],
            agent=e["agent__name"],
            created_at=e["created_at"],
            text_score=_score(e),
            inactive=e["status"] != EntryStatus.PENDING,
        )
        for e in best(rows, q, count, fields)
    ]


# ---------------------------------------------------------------------------------------------
# One list


def kinds_asked(raw: str | Iterable[str] | None, *, coordinator: bool) -> tuple[str, ...]:
    """The kinds a search covers: those asked for (a list, or one comma-separated text), in `KINDS`
    order, or every kind the reader may search. An unknown kind is refused (`Invalid`, on `kinds`), and
    so is `entry` for a reader who is not a coordinator."""
    allowed = KINDS if coordinator else AGENT_KINDS
    if raw is None:
        return allowed
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    asked = {item.strip().lower() for item in items if isinstance(item, str) and item.strip()}
    unknown = sorted(asked - set(KINDS))
    if unknown:
        raise invalid("kinds", f"{', '.join(map(repr, unknown))}: not one of {', '.join(KINDS)}")
    if ENTRY in asked and not coordinator:
        raise invalid("kinds", "inbox entries (`entry`) are searched by coordinators only")
    return tuple(kind for kind in allowed if kind in asked) or allowed


def query_checked(q: object) -> str:
    """`q` as searched: a text, not blank, at most `QUERY_MAX_LENGTH` characters (else `Invalid`)."""
    if not isinstance(q, str) or not q.strip():
        raise invalid("q", "must not be blank: give the words to look for")
    if len(q) > QUERY_MAX_LENGTH:
        raise invalid("q", f"must be at most {QUERY_MAX_LENGTH} characters, got {len(q)}")
    return q


def find(
    project: Project,
    *,
    agent_name: str | None,
    coordinator: bool,
    q: str,
    limit: int = DEFAULT_LIMIT,
    kinds: str | Collection[str] | None = None,
    inactive: bool = False,
) -> list[Hit]:
    """The `limit` rows of the project that best match `q`, of every kind in `kinds` (default: every
    kind the reader may search), best first.

    The reader sees what the lists show it: `agent_name` is the agent whose view is searched (its own
    memories, the shared ones and the sessions' summaries; its own episodes), or None for a
    coordinator's view of every agent's; `coordinator` adds the inbox entries (as `agent_name` would
    see them). `inactive` adds the rows no longer in force, ranked lower. A query with no word left
    once stop words are dropped finds nothing.

    Raises `Invalid` for a blank or too long `q`, a `limit` outside 1-`MAX_LIMIT`, an unknown kind (or
    `entry` for an agent), or no `agent_name` without `coordinator`; `NotFound` for an `agent_name`
    the project has no agent by.
    """
    q = query_checked(q)
    if not 1 <= limit <= MAX_LIMIT:
        raise invalid("limit", f"must be between 1 and {MAX_LIMIT}")
    wanted = kinds_asked(kinds, coordinator=coordinator)
    viewer = _viewer(project, agent_name, coordinator)
    matcher = Matcher.read(q)
    if not matcher.words:
        return []
    count = limit + CANDIDATES
    rows: list[_Row] = []
    if DECISION in wanted:
        rows += _decisions(project, q, count, inactive)
    if MEMORY in wanted or SUMMARY in wanted:
        rows += _memories(project, viewer, q, count, inactive, [k for k in (MEMORY, SUMMARY) if k in wanted])
    if SUMMARY in wanted:
        rows += _open_summary(project, matcher)
    if EPISODE in wanted:
        rows += _episodes(project, viewer, q, count)
    if ENTRY in wanted:
        rows += _entries(project, viewer, q, count, inactive)
    return ranked(rows, matcher, limit)


def _viewer(project: Project, agent_name: str | None, coordinator: bool) -> Agent | None:
    if agent_name is None:
        if not coordinator:
            raise invalid("agent", "name the agent whose view is searched")
        return None
    agent = selectors.agent_find(project, agent_name)
    if agent is None:
        raise NotFound(f"agent: no agent {agent_name!r} in this project")
    return agent


def ranked(rows: list[_Row], matcher: Matcher, limit: int) -> list[Hit]:
    """The best `limit` of `rows` as hits, scored as the module says, best first."""
    best: dict[str, float] = {}
    for row in rows:
        if row.text_score is not None:
            best[row.table or row.kind] = max(best.get(row.table or row.kind, 0.0), row.text_score)
    weighed = []
    for row in rows:
        # What each field holds, of its first `EXCERPT_SCAN` characters, as its excerpt reads it.
        found = {name: matcher.found(text[:EXCERPT_SCAN]) for name, text in row.fields.items()}
        held = {word for words in found.values() for word in words}
        top = best.get(row.table or row.kind, 0.0)
        relative = 1.0 if row.text_score is None or top <= 0 else max(row.text_score, 0.0) / top
        coverage = max(len(held), 1) / len(matcher.words)
        score = round(relative * coverage * (INACTIVE_WEIGHT if row.inactive else 1.0), 6)
        weighed.append((score, row, found, held))
    order = {kind: i for i, kind in enumerate(KINDS)}
    weighed.sort(key=lambda w: (-w[0], order[w[1].kind], -w[1].created_at.timestamp(), -w[1].id))
    return [
        Hit(
            kind=row.kind,
            id=row.id,
            title=row.title,
            parts=excerpt(matcher, row.fields[_shown(found)]),
            score=score,
            why=tuple(Why(name, words) for name, words in found.items() if words),
            words=tuple(word for word in matcher.words if word in held),
            status=row.status,
            agent=row.agent,
            created_at=row.created_at,
            session_id=row.session_id,
            run_id=row.run_id,
        )
        for score, row, found, held in weighed[:limit]
    ]


def _shown(found: dict[str, tuple[str, ...]]) -> str:
    """The field the excerpt is taken from: of the row's text (not its title, tags, slug or paths), the
    one holding the most different query words, the first one among equals."""
    body = [name for name in found if name not in _TITLE_FIELDS | _LISTED_FIELDS]
    return max(body, key=lambda name: len(found[name]))
