"""Which memories bear on a task: the task's content words, each searched alone, the rankings fused.

A text search that needs every term to match finds nothing for a whole task sentence ("add a retry
to the billing webhook handler"): no memory says all of that. So the task is cut into its content
words (`task_terms`), each word is searched on its own, and the per-word rankings are fused by
reciprocal rank (`rank_by_task`): a memory found by several words, or high in one word's ranking,
comes first. Equal scores go to the more important memory, then the newer one.

The search itself is the caller's (`search(rows, term)`, best first), so the same fusion serves a
substring match today and a ranked full-text search later.

The compiler's relevant-knowledge layer (`ledger.context`, docs/compiler.md) asks the full-text index
once for all the task's words (`task_words`, any of them may match: `fts5_any`, `tsquery_any`) and
weighs each candidate's text score with what else is known of it (`blend`): importance, recency
(`ledger.lifecycle.decay`) and source (`ledger.lifecycle.source_weight`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import QuerySet

from ledger.lifecycle import decay, source_weight
from ledger.models import AgentMemory
from ledger.search import STOP_WORDS as SEARCH_STOP_WORDS
from ledger.search import terms as search_terms

# Reciprocal rank fusion's damping constant (Cormack, Clarke & Büttcher, 2009): a row's score from
# one ranking is 1 / (RRF_K + rank), so the top of each ranking counts a little more than the rest.
RRF_K = 60
# How far down each term's ranking is read: enough for a long list of matches, bounded per term.
TERM_DEPTH = 100
# Shorter words are letters and numbers that match everything as a substring.
MIN_TERM_LENGTH = 2

# A word, with the dots, dashes and slashes inside identifiers, paths and versions kept
# (`pg_dump`, `ledger/mirror`, `3.11`, `django-ninja`); punctuation at either end dropped. An
# apostrophe ends a word, so a possessive or a contraction leaves its stem (`pod's` → `pod`).
_WORD = re.compile(r"\w+(?:[./\-]\w+)*")

# Words that carry no topic: the search's English stop words, and the verbs, fillers and contractions a
# task is phrased with ("make sure we…", "let's…", "couldn't").
_TASK_FILLERS = """
    also aren cannot could couldn didn doesn done either else even ever every get gets getting got hasn
    haven isn let lets like ll make makes making may might much must need needs one ought per please re
    shall shouldn sure upon us ve via wasn weren whether whose within without won would wouldn yet
"""
STOP_WORDS = SEARCH_STOP_WORDS | frozenset(_TASK_FILLERS.split())


def task_terms(task: str) -> list[str]:
    """The task's content words: lower-cased, stop words and one-letter words dropped, each once, in
    the order the task gives them."""
    terms: dict[str, None] = {}
    for match in _WORD.finditer(task.lower()):
        word = match.group()
        if len(word) >= MIN_TERM_LENGTH and word not in STOP_WORDS:
            terms[word] = None
    return list(terms)


@dataclass
class _Fused:
    memory: AgentMemory
    score: float = 0.0


def rank_by_task(
    rows: QuerySet[AgentMemory],
    task: str,
    k: int,
    search: Callable[[QuerySet[AgentMemory], str], QuerySet[AgentMemory]],
) -> list[AgentMemory]:
    """The `k` rows that best match the task: `search(rows, term)` for each of `task_terms(task)`,
    fused by reciprocal rank; equal scores in order of importance, then newest first.

    `rows` is already narrowed to what the reader may see; `search` returns the rows matching one
    term, best first. One query per term, each reading at most `TERM_DEPTH` rows.
    """
    if k <= 0:
        return []
    fused: dict[int, _Fused] = {}
    for term in task_terms(task):
        for rank, memory in enumerate(search(rows, term)[:TERM_DEPTH], start=1):
            entry = fused.setdefault(memory.pk, _Fused(memory))
            entry.score += 1.0 / (RRF_K + rank)
    ordered = sorted(
        fused.values(),
        key=lambda f: (-f.score, f.memory.importance_rank, -f.memory.created_at.timestamp(), -f.memory.pk),
    )
    return [f.memory for f in ordered[:k]]


# --- The compiler's relevant-knowledge layer ---

# At most this many of a task's words are searched: a long task's first words name its topic, and the
# index's work grows with every word.
MAX_TASK_WORDS = 16
# A word found in more than COMMON_SHARE of the index's rows says little about what a task is about
# (BM25 gives it a small weight) and costs the most to rank: every row holding it is scored. Such words
# are left out of the relevant layer's match once the index holds PRUNE_FROM rows or more; below that
# everything is cheap and every word is kept. When every word is that common, the rarest one stays (the
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


# What a memory's importance (its `importance_rank`: high, medium, low) multiplies its score by. An
# episode has no importance: it counts as high.
IMPORTANCE_WEIGHTS = (1.0, 0.75, 0.5)


def task_words(task: str) -> list[str]:
    """The words of `task` the full-text index is asked for: its content words (`task_terms`) cut the
    way the index cuts text (`ledger.search.terms`: letters and digits only), each once, at most
    `MAX_TASK_WORDS`."""
    return search_terms(" ".join(task_terms(task)))[:MAX_TASK_WORDS]


def fts5_any(words: list[str]) -> str:
    """An FTS5 query matching a row with any of `words`, each quoted (a word holds no quote)."""
    return " OR ".join(f'"{word}"' for word in words)


def tsquery_any(words: list[str]) -> str:
    """A `to_tsquery` text matching a row with any of `words`, each quoted as one lexeme.

    Unlike a search's query it asks for no weights: a weighted query makes PostgreSQL read every
    matching row's vector again to check the weights, and the compiler asks for the agent's scope
    words as a condition of its own."""
    return " | ".join(f"'{word}'" for word in words)


def blend(
    text: float,
    best: float,
    *,
    importance_rank: int,
    source: str,
    age_seconds: float,
    pinned: bool = False,
    decays_as: str | None = None,
) -> float:
    """A candidate's place in the relevant layer: its text score as a share of the best candidate's,
    times its importance weight, its recency (`decay` with the half-life of `decays_as`, by default its
    source; a coordinator's or a pinned memory never decays) and its source's weight (`source_weight`).
    Higher is better."""
    share = text / best if best > 0 else 0.0
    importance = IMPORTANCE_WEIGHTS[min(max(importance_rank, 0), len(IMPORTANCE_WEIGHTS) - 1)]
    recency = decay(decays_as or source, age_seconds, pinned=pinned)
    return share * importance * recency * source_weight(source)
