"""Which rows bear on a task: the task's content words, and how a candidate's text score is weighed.

A task is a sentence ("add a retry to the billing webhook handler"), not a query: it is cut into its
content words (`task_terms`: English stop words and the fillers a task is phrased with left out), and
any of them may match.

The compiler's relevant-knowledge layer (`ledger.context`, docs/compiler.md) asks the full-text index
of memories, episodes and decisions once each for all the task's words (`task_words`, any of them may
match: `fts5_any`, `pg_any`) and weighs each candidate's text score with what else is known of it
(`blend`): importance, recency (`ledger.lifecycle.decay`) and source (`ledger.lifecycle.source_weight`).
"""

from __future__ import annotations

import re

from ledger.lifecycle import decay, source_weight
from ledger.search import STOP_WORDS as SEARCH_STOP_WORDS
from ledger.search import terms as search_terms

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


# --- The compiler's relevant-knowledge layer ---

# At most this many of a task's words are searched: a long task's first words name its topic, and the
# index's work grows with every word.
MAX_TASK_WORDS = 16
# What a memory's importance (its `importance_rank`: high, medium, low) multiplies its score by. An
# episode and a decision have no importance: they count as high.
IMPORTANCE_WEIGHTS = (1.0, 0.75, 0.5)
# The share of a candidate's weight its age never takes away. The part above it halves every half-life
# of the row's source, so of two rows that match a task alike the newer comes first; but an old row
# that answers the task still comes before a new one that barely mentions it (with the whole weight
# halving, a learning four months old counted a sixteenth of a new one, whatever it said).
RECENCY_FLOOR = 0.5


def task_words(task: str) -> list[str]:
    """The words of `task` the full-text index is asked for: its content words (`task_terms`) cut the
    way the index cuts text (`ledger.search.terms`: letters and digits only), each once, at most
    `MAX_TASK_WORDS`."""
    return search_terms(" ".join(task_terms(task)))[:MAX_TASK_WORDS]


def fts5_any(words: list[str]) -> str:
    """An FTS5 query matching a row with any of `words`, each quoted (a word holds no quote)."""
    return " OR ".join(f'"{word}"' for word in words)


def task_pieces(task: str) -> list[str]:
    """The content words of `task` that hold more than letters and digits (`deploy-web-pages.sh`,
    `v0.13.1`, `aiplan-04`, `ledger/mirror`), which the index's words cut apart, at most
    `MAX_TASK_WORDS`: PostgreSQL's parser keeps some of them whole in its index."""
    return [term for term in task_terms(task) if search_terms(term) != [term]][:MAX_TASK_WORDS]


def pg_any(words: list[str], pieces: list[str]) -> str:
    """The text PostgreSQL's parser reads for the relevant layer's match (`ledger.context`): `words`
    (the task's words, cut as `task_words` cuts them) and `pieces` (`task_pieces`), so that a row is
    found by any of the words and by any piece its index holds whole."""
    return " ".join([*words, *pieces])


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
    times its importance weight, its recency and its source's weight (`source_weight`). Higher is
    better.

    Recency is `RECENCY_FLOOR` plus the rest times `decay` (with the half-life of `decays_as`, by
    default its source; a coordinator's memory or decision, or a pinned memory, never decays): from 1
    when new down to `RECENCY_FLOOR` when long past its half-life."""
    share = text / best if best > 0 else 0.0
    importance = IMPORTANCE_WEIGHTS[min(max(importance_rank, 0), len(IMPORTANCE_WEIGHTS) - 1)]
    recency = RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * decay(decays_as or source, age_seconds, pinned=pinned)
    return share * importance * recency * source_weight(source)
