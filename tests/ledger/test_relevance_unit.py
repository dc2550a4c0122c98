"""`ledger.relevance` on its own: the words taken from a task, and the fusion of per-word rankings,
with a search that answers from a table instead of the database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ledger.models import AgentMemory
from ledger.relevance import RRF_K, TERM_DEPTH, rank_by_task, task_terms

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def memory(pk: int, importance_rank: int = 1, age_days: int = 0) -> AgentMemory:
    return AgentMemory(pk=pk, importance_rank=importance_rank, created_at=NOW - timedelta(days=age_days))


class FakeSearch:
    """Answers each term from a table, best first, and remembers the terms it was asked."""

    def __init__(self, table: dict[str, list[AgentMemory]]) -> None:
        self.table = table
        self.asked: list[str] = []

    def __call__(self, rows: object, term: str) -> list[AgentMemory]:
        self.asked.append(term)
        return self.table.get(term, [])


ROWS = AgentMemory.objects.none()


# --- task_terms ---


@pytest.mark.parametrize(
    "task, terms",
    [
        ("Fix the Flaky test, then fix the flaky TEST", ["fix", "flaky", "test"]),
        ("Make sure we add a retry to the billing webhook", ["add", "retry", "billing", "webhook"]),
        ("Bump pg_dump to 16.2 in ledger/mirror.", ["bump", "pg_dump", "16.2", "ledger/mirror"]),
        ("Swap django-ninja for DRF", ["swap", "django-ninja", "drf"]),
        ("Why does the web pod's memory keep growing?", ["web", "pod", "memory", "keep", "growing"]),
        ("Don't page Kenji; ask Łukasz and Zoë", ["page", "kenji", "ask", "łukasz", "zoë"]),
        ("Upgrade to Python 3.12 (see #perf)", ["upgrade", "python", "3.12", "see", "perf"]),
    ],
)
def test_task_terms_are_the_content_words_lower_cased_once_each_in_order(task, terms):
    assert task_terms(task) == terms


@pytest.mark.parametrize("task", ["", "   ", "the and of to", "a b c x y z", "!!! ??? — …"])
def test_a_task_of_only_stop_words_letters_and_punctuation_has_no_terms(task):
    assert task_terms(task) == []


# --- rank_by_task ---


def test_a_memory_found_by_two_words_comes_before_one_found_by_one():
    both, first_only = memory(1), memory(2)
    search = FakeSearch({"billing": [first_only, both], "webhook": [both]})
    assert rank_by_task(ROWS, "billing webhook", 5, search) == [both, first_only]


def test_higher_in_a_ranking_scores_more():
    top, second = memory(1), memory(2)
    search = FakeSearch({"cache": [top, second]})
    assert rank_by_task(ROWS, "cache", 5, search) == [top, second]


def test_the_score_is_the_sum_of_reciprocal_ranks():
    """Found third and third (2 / 63) beats found first once (1 / 61)."""
    twice, once = memory(1), memory(2)
    filler = [memory(10 + i) for i in range(3)]
    search = FakeSearch({"a1": [once, filler[0], twice], "b2": [filler[1], filler[2], twice]})
    found = rank_by_task(ROWS, "a1 b2", 1, search)
    assert 2 / (RRF_K + 3) > 1 / (RRF_K + 1)
    assert found == [twice]


def test_equal_scores_go_to_the_more_important_then_the_newer_then_the_later_id():
    low = memory(1, importance_rank=2)
    high_old = memory(2, importance_rank=0, age_days=9)
    high_new = memory(3, importance_rank=0, age_days=1)
    high_new_same_time = memory(4, importance_rank=0, age_days=1)
    # Each is first in its own term's ranking: all four score 1 / (RRF_K + 1).
    search = FakeSearch({"aa": [low], "bb": [high_old], "cc": [high_new], "dd": [high_new_same_time]})
    assert rank_by_task(ROWS, "aa bb cc dd", 5, search) == [high_new_same_time, high_new, high_old, low]


def test_k_limits_the_result():
    rows = [memory(i) for i in range(1, 8)]
    assert rank_by_task(ROWS, "many", 3, FakeSearch({"many": rows})) == rows[:3]


@pytest.mark.parametrize("k", [0, -1])
def test_no_room_means_no_search(k):
    search = FakeSearch({"cache": [memory(1)]})
    assert rank_by_task(ROWS, "cache", k, search) == []
    assert search.asked == []


def test_each_term_is_searched_once_and_stop_words_never():
    search = FakeSearch({})
    assert rank_by_task(ROWS, "Clear the cache and the CACHE keys", 5, search) == []
    assert search.asked == ["clear", "cache", "keys"]


def test_a_task_without_terms_searches_nothing():
    search = FakeSearch({})
    assert rank_by_task(ROWS, "to the and of", 5, search) == []
    assert search.asked == []


def test_each_ranking_is_read_only_to_its_depth():
    rows = [memory(i) for i in range(1, TERM_DEPTH + 6)]
    beyond = rows[TERM_DEPTH]
    found = rank_by_task(ROWS, "many", len(rows), FakeSearch({"many": rows}))
    assert len(found) == TERM_DEPTH
    assert beyond not in found
