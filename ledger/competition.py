"""Competing proposals: pending entries and active decisions that answer the same question as an entry
(docs/dashboard.md "Competing proposals"). The dashboard shows them; a merge of a boundary proposal
(`ledger.services.inbox.merge.entry_merge`) is refused while one competes, until the reviewer chooses.

Two proposals compete when they share a base slug (the part before `--`: `queue-tech`,
`queue-tech--bob` and `queue-tech--bob--2` are one topic proposed three times, as Canon de-collides a
taken slug), or when their titles are closely similar, or the same words but one on each side ("Use
Redis for the rate limiter", "Use memcached for the rate limiter": one question, two answers). An
entry also competes with the active decision an entry of its base slug was merged into. Only pending
entries compete: a decided one has had its turn.

`competitors` answers for a whole inbox page in at most five queries, whatever the number of entries
or the size of the ledger: the same-slug matches in one, then the titles of a bounded number of
candidates in two, then the rows found in two more.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Any

from django.db import connection
from django.db.models import Q
from rapidfuzz import fuzz

from ledger.models import Decision, DecisionStatus, EntryStatus, InboxEntry, Project
from ledger.search import STOP_WORDS, WORD

# Token-set similarity (0-100) of two normalised titles from which they compete.
TITLE_SIMILARITY = 85
# Titles compete only when they share at least this many words (or have exactly the same words): a
# one-word title is contained in every title that mentions it, which token-set similarity scores 100.
# Titles sharing this many words that differ in one word on each side (counting words with a
# letter, not numbers) compete too, whatever their similarity: "redis rate limiter" and
# "memcached rate limiter" score 80, and name two answers to one question.
SHARED_WORDS = 2
# How many of the newest pending entries, and of the newest active decisions, the titles are compared
# with (besides the entries asked about). Keeps a page of the inbox fast on a ledger of any size.
TITLE_CANDIDATES = 200
# How many of a title's rarest words index it (`_key_pairs`): every pair of them.
KEY_WORDS = 4

Competitor = InboxEntry | Decision


def base_slug(slug: str) -> str:
    """The topic part of an entry's slug: what comes before Canon's de-collision separator `--`."""
    return slug.split("--", 1)[0]


@dataclass(frozen=True)
class _Title:
    """A title as titles are compared: its words (stop words dropped) and those words as one text."""

    words: frozenset[str]
    text: str

    @classmethod
    @lru_cache(maxsize=8192)
    def of(cls, title: str) -> _Title:
        """Folded once per process for each title seen (a page compares hundreds of titles, mostly the
        same ones from one request to the next)."""
        folded = unicodedata.normalize("NFKC", title).casefold()
        words = [word for word in WORD.findall(folded) if word not in STOP_WORDS]
        return cls(frozenset(words), " ".join(words))

    def similar(self, other: _Title) -> bool:
        if not self.words or not other.words:
            return False
        if self.words == other.words:
            return True
        shared = self.words & other.words
        if len(shared) < SHARED_WORDS:
            return False
        if _one_word_swapped(shared, self.words - shared, other.words - shared):
            return True  # the same words but one: the same question answered two ways
        return fuzz.token_set_ratio(self.text, other.text, score_cutoff=TITLE_SIMILARITY) >= TITLE_SIMILARITY


def _one_word_swapped(shared: frozenset[str], mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether two titles are the same words but one on each side, counting words with a letter:
    "redis" for "memcached" beside "rate limiter" swaps an answer; a number is no such word ("step 1"
    and "step 2" number a series, and "rule 0" and "entry 0" share a number, not a topic)."""
    return (
        len(mine) == 1 == len(theirs)
        and all(_lettered(word) for word in mine | theirs)
        and sum(_lettered(word) for word in shared) >= SHARED_WORDS
    )


def _lettered(word: str) -> bool:
    return any(c.isalpha() for c in word)


def entry_title(entry: InboxEntry) -> str:
    """What an entry is called: its title, else its base slug's words."""
    return entry.title or _slug_words(entry.slug)


def competitors(
    project: Project, entries: Sequence[InboxEntry], *, types: Collection[str] | None = None
) -> dict[int, list[Competitor]]:
    """Each given entry's id mapped to what it competes with: active decisions first, then pending
    entries oldest first. Entries that are not pending (or not in `project`) compete with nothing.
    With `types`, only decisions and entries of those types are looked for (a merge's boundaries)."""
    found: dict[int, list[Competitor]] = {entry.pk: [] for entry in entries}
    pending = [e for e in entries if e.project_id == project.pk and e.status == EntryStatus.PENDING]
    if not pending:
        return found
    entry_ids: dict[int, set[int]] = {entry.pk: set() for entry in pending}
    decision_ids: dict[int, set[int]] = {entry.pk: set() for entry in pending}
    _same_slug(project, pending, entry_ids, decision_ids)
    _similar_titles(project, pending, entry_ids, decision_ids, types)
    wanted_entries = set().union(*entry_ids.values())
    wanted_decisions = set().union(*decision_ids.values())
    rows: dict[tuple[type, int], Competitor] = {}
    if wanted_decisions:
        active = Decision.objects.filter(pk__in=wanted_decisions, status=DecisionStatus.ACTIVE)
        if types is not None:
            active = active.filter(type__in=types)
        for decision in active.select_related("agent"):
            rows[Decision, decision.pk] = decision
    if wanted_entries:
        pending_rows = InboxEntry.objects.filter(pk__in=wanted_entries, status=EntryStatus.PENDING)
        if types is not None:
            pending_rows = pending_rows.filter(type__in=types)
        for entry in pending_rows.select_related("agent"):
            rows[InboxEntry, entry.pk] = entry
    for entry in pending:
        decisions = [rows[Decision, pk] for pk in decision_ids[entry.pk] if (Decision, pk) in rows]
        others = [rows[InboxEntry, pk] for pk in entry_ids[entry.pk] if (InboxEntry, pk) in rows]
        found[entry.pk] = [*_oldest_first(decisions), *_oldest_first(others)]
    return found


def _oldest_first(rows: Iterable[Competitor]) -> list[Competitor]:
    return sorted(rows, key=lambda row: (row.created_at, row.pk))


def _same_slug(
    project: Project,
    pending: Sequence[InboxEntry],
    entry_ids: dict[int, set[int]],
    decision_ids: dict[int, set[int]],
) -> None:
    """Entries of the same base slug, in one query: pending ones, and the decisions merged ones became
    (which compete while active)."""
    bases: dict[str, list[int]] = {}
    for entry in pending:
        bases.setdefault(base_slug(entry.slug), []).append(entry.pk)
    with connection.cursor() as cursor:
        sql, params = _same_slug_sql(project.pk, list(bases))
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    for pk, slug, status, decision_id in rows:
        for entry_id in bases.get(base_slug(slug), ()):
            if status == EntryStatus.PENDING and pk != entry_id:
                entry_ids[entry_id].add(pk)
            elif status == EntryStatus.MERGED and decision_id is not None:
                # Competes while the decision is active: `competitors` reads only active ones.
                decision_ids[entry_id].add(decision_id)


def _same_slug_sql(project_id: int, bases: list[str]) -> tuple[str, list[Any]]:
    """The entries of `project_id` whose base slug is one of `bases`, as SQL and its parameters.

    Written by hand because the ORM takes longer to build fifty prefix lookups than the database takes
    to answer them. PostgreSQL cuts each slug at its first `--` (`split_part`), whatever the database's
    collation, and reads an index on that expression. SQLite compares text byte by byte, so there a
    base's de-collided slugs are the range from `base--` up to `base-.`, read from the (project, slug)
    index: one term per base, each naming the project, so that it reads each range rather than every
    entry.
    """
    meta = InboxEntry._meta
    quote = connection.ops.quote_name
    columns = {field.name: str(field.column) for field in meta.concrete_fields}

    def column(name: str) -> str:
        return quote(columns[name])

    project, slug = column("project"), column("slug")
    select = (
        f"SELECT {column('id')}, {slug}, {column('status')}, {column('decision')} "
        f"FROM {quote(meta.db_table)} WHERE "
    )
    if connection.vendor == "postgresql":
        # Read from the topic index (migration 0013): (project, the slug cut at its first `--`).
        return select + f"{project} = %s AND split_part({slug}, '--', 1) = ANY(%s)", [project_id, bases]
    marks = ", ".join(["%s"] * len(bases))
    terms = [f"({project} = %s AND {slug} IN ({marks}))"]
    params: list[Any] = [project_id, *bases]
    for base in bases:
        terms.append(f"({project} = %s AND {slug} >= %s AND {slug} < %s)")
        params += [project_id, f"{base}--", f"{base}-."]
    return select + " OR ".join(terms), params


def _similar_titles(
    project: Project,
    pending: Sequence[InboxEntry],
    entry_ids: dict[int, set[int]],
    decision_ids: dict[int, set[int]],
    types: Collection[str] | None,
) -> None:
    """Entries and decisions whose titles are closely similar, among the entries asked about and the
    newest `TITLE_CANDIDATES` pending entries and active decisions (of `types`, when given: two
    bounded queries)."""
    of_type = Q(type__in=types) if types is not None else Q()
    newest = (
        InboxEntry.objects.filter(of_type, project=project, status=EntryStatus.PENDING)
        .order_by("-created_at", "-id")
        .values_list("pk", "title", "slug")[:TITLE_CANDIDATES]
    )
    decisions = (
        Decision.objects.filter(of_type, project=project, status=DecisionStatus.ACTIVE)
        .order_by("-created_at", "-id")
        .values_list("pk", "title")[:TITLE_CANDIDATES]
    )
    candidates = (
        *((("entry", pk), title or _slug_words(slug)) for pk, title, slug in newest),
        *((("decision", pk), title) for pk, title in decisions),
    )
    asked = tuple((entry.pk, entry_title(entry)) for entry in pending)
    for entry_id, kind, pk in _title_matches(candidates, asked):
        (entry_ids if kind == "entry" else decision_ids)[entry_id].add(pk)


@lru_cache(maxsize=64)
def _title_matches(
    candidates: tuple[tuple[tuple[str, int], str], ...], asked: tuple[tuple[int, str], ...]
) -> tuple[tuple[int, str, int], ...]:
    """(entry id, kind, id) for each candidate whose title is closely similar to an asked entry's.

    Titles are compared only with those that share a pair of their key words (`_key_pairs`), looked
    up in an index, not with every candidate. The answer depends on the titles alone, so it is kept
    for the last few sets of them: a list shown again (another page and back, a filter changed and
    cleared) is not compared again; a decision or a new proposal changes the set.
    """
    titles = {key: _Title.of(text) for key, text in candidates}
    mine = {("entry", pk): _Title.of(text) for pk, text in asked}
    titles.update(mine)
    seen = Counter(word for title in titles.values() for word in title.words)
    index: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    for key, title in titles.items():
        for pair in _key_pairs(title, seen):
            index.setdefault(pair, []).append(key)
    found = []
    for (_, entry_id), title in mine.items():
        near = {key for pair in _key_pairs(title, seen) for key in index[pair]}
        for kind, pk in sorted(near):
            if (kind, pk) != ("entry", entry_id) and title.similar(titles[kind, pk]):
                found.append((entry_id, kind, pk))
    return tuple(found)


def _slug_words(slug: str) -> str:
    return base_slug(slug).replace("-", " ")


def _key_pairs(title: _Title, seen: Counter[str]) -> list[tuple[str, ...]]:
    """The pairs of a title's `KEY_WORDS` rarest words (fewest titles have them; then the longest): two
    similar titles share at least one such pair, as they share most of their words. A one-word title
    has that word alone."""
    ranked = sorted(title.words, key=lambda word: (seen[word], -len(word), word))[:KEY_WORDS]
    if len(ranked) == 1:
        return [(ranked[0],)]
    return list(combinations(sorted(ranked), 2))
