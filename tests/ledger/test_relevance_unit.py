"""`ledger.relevance` on its own: the words taken from a task."""

from __future__ import annotations

import pytest

from ledger.relevance import task_terms

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
