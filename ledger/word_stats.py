"""How common a word is in a table's full-text index, and which words of a task or a query are too
common to match by.

On a large ledger a word that most memories hold (`deploy`, `cache`) finds tens of thousands of rows,
and every one of them must be scored before the best can be shown: the cost follows the commonest word.
Such a word also says little about what is asked (BM25 weighs it near zero). So once a table is large
(`PRUNE_FROM` rows), the words held by more than `COMMON_SHARE` of its rows are left out of the match
while a rarer word is asked for with them (`rare_words`); the match is then as small as its rarest
words make it. When every word is that common, the rarest one is matched. The compiler's relevant
layer (`ledger.context`, by the memories' counts) and the search of memories, decisions and inbox
entries (`ledger.search`, each by its own table's) use the same rule.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from snowballstemmer import stemmer

# A word found in more than COMMON_SHARE of the index's rows says little about what a task or a query is
# about (BM25 gives it a small weight) and costs the most to rank: every row holding it is scored. Such
# words are left out of the match once the index holds PRUNE_FROM rows or more; below that everything is
# cheap and every word is kept. When every word is that common, the rarest one stays (the
# first of them when they are equally common, as counts that stop at COMMON_SHARE make them).
COMMON_SHARE = 0.02
PRUNE_FROM = 5_000


def rare_words(words: list[str], shares: dict[str, float], rows: int) -> list[str]:
    """`words` without those found in more than `COMMON_SHARE` of an index of `rows` rows (`shares`:
    each word's share of the rows, a word not in it is rare), in their order; never empty when
    `words` is not."""
    if rows < PRUNE_FROM or not words:
        return words
    kept = [word for word in words if shares.get(word, 0.0) <= COMMON_SHARE]
    return kept or [min(words, key=lambda word: shares.get(word, 0.0))]


# How common each word is, for `rare_words`: the share of the memory index's rows holding it.
# SQLite: counted in the FTS5 index for each word, each count stopping at COMMON_SHARE of the rows (so
# a common word costs no more than a rare one), and remembered per process for STATS_SECONDS (at most
# COUNTED_WORDS words; more forgets them all). PostgreSQL: the most common lexemes and their shares
# that ANALYZE keeps for `search_vector` (pg_stats), read at most every STATS_SECONDS per process, the
# words stemmed as the `english` configuration stems them; no statistics yet means nothing is left out.
# Either way a word's share is at most STATS_SECONDS old: how common a word is changes slowly.
@dataclass(frozen=True)
class Table:
    """A table whose index's words are counted: its name, its FTS5 table (SQLite) and the columns of
    that table a count reads (the text, never the scope words)."""

    name: str
    fts_table: str
    text_columns: str


MEMORIES = Table("ledger_agentmemory", "ledger_memory_fts", "content tag_index")
DECISIONS = Table("ledger_decision", "ledger_decision_fts", "title content rationale")
ENTRIES = Table("ledger_inboxentry", "ledger_entry_fts", "slug title content rationale")

# SQLite: one word's rows in `{fts}`, counted up to COMMON_SHARE of the table (`{share}`) and one more.
SHARES_SQLITE_WORD = (
    "(SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH %s"
    " LIMIT (SELECT CAST(coalesce(max(id), 0) * {share} AS INTEGER) + 1 FROM {table})))"
)
# PostgreSQL: the most common lexemes of a table's `search_vector` and their shares (`%s`: the table).
SHARES_POSTGRESQL_SQL = """
SELECT e.elem, e.freq, (SELECT reltuples FROM pg_class WHERE oid = %s::regclass)
FROM pg_stats p, unnest(p.most_common_elems::text::text[], p.most_common_elem_freqs) AS e(elem, freq)
WHERE p.schemaname = current_schema() AND p.tablename = %s
  AND p.attname = 'search_vector' AND e.elem IS NOT NULL
"""
STATS_SECONDS = 600.0
COUNTED_WORDS = 10_000


@dataclass
class _LexemeStats:
    """PostgreSQL: every common lexeme's share in one table, read together."""

    rows: int = 0
    shares: dict[str, float] = field(default_factory=dict)
    read_at: float = -STATS_SECONDS


@dataclass
class _WordCounts:
    """SQLite: the share of each word counted so far in one table, with when it was counted, and the
    table's size at the last count."""

    rows: int = 0
    shares: dict[str, tuple[float, float]] = field(default_factory=dict)


_pg_stats: dict[str, _LexemeStats] = {}
_pg_stats_lock = threading.Lock()
_sqlite_counts: dict[str, _WordCounts] = {}
_sqlite_counts_lock = threading.Lock()
_english = stemmer("english")
_english_lock = threading.Lock()


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    """`word` as PostgreSQL's `english` configuration stems it (a stemmer object is not thread-safe)."""
    with _english_lock:
        return str(_english.stemWord(word))


def forget_word_stats() -> None:
    """Read how common words are afresh at the next search or compile, on either engine."""
    with _pg_stats_lock, _sqlite_counts_lock:
        _pg_stats.clear()
        _sqlite_counts.clear()


def _sqlite_shares(cursor: Any, words: list[str], table: Table) -> tuple[dict[str, float], int]:
    """Each word's share of the table's rows, counting only the words not counted lately."""
    with _sqlite_counts_lock:
        now = time.monotonic()
        counts = _sqlite_counts.setdefault(table.name, _WordCounts())
        known = counts.shares
        stale = [word for word in words if now - known.get(word, (0.0, -STATS_SECONDS))[1] >= STATS_SECONDS]
        if len(known) + len(stale) > COUNTED_WORDS:
            known.clear()
            stale = words
        if stale:
            one = SHARES_SQLITE_WORD.format(
                fts=table.fts_table, table=table.name, share=f"{COMMON_SHARE:.6f}"
            )
            cursor.execute(
                f"SELECT (SELECT coalesce(max(id), 0) FROM {table.name}), {', '.join([one] * len(stale))}",
                [f'{{{table.text_columns}}} : "{word}"' for word in stale],
            )
            rows, *found = cursor.fetchone()
            for word, count in zip(stale, found, strict=True):
                known[word] = (count / rows if rows else 0.0, now)
            counts.rows = rows
        return {word: known[word][0] for word in words}, counts.rows


def _pg_shares(cursor: Any, words: list[str], table: Table) -> tuple[dict[str, float], int]:
    """Each word's share of the table's rows, from the statistics ANALYZE keeps (read lately)."""
    with _pg_stats_lock:
        stats = _pg_stats.get(table.name)
        if stats is None or time.monotonic() - stats.read_at >= STATS_SECONDS:
            cursor.execute(SHARES_POSTGRESQL_SQL, [table.name, table.name])
            found = cursor.fetchall()
            stats = _pg_stats[table.name] = _LexemeStats(
                rows=int(found[0][2]) if found else 0,
                shares={elem: float(freq) for elem, freq, _ in found},
                read_at=time.monotonic(),
            )
    return {word: stats.shares.get(_stem(word), 0.0) for word in words}, stats.rows


def kept_words(cursor: Any, vendor: str, words: list[str], table: Table = MEMORIES) -> list[str]:
    """`words` without those too common in `table` to match by (`rare_words`), on the engine `vendor`."""
    shares = _sqlite_shares if vendor == "sqlite" else _pg_shares
    return rare_words(words, *shares(cursor, words, table))
