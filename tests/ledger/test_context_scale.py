"""What keeps the relevant layer cheap on a large ledger, and correct while doing it: the index narrows
matches to what the agent may read (scope words kept in step with the rows), and words too common to
say what a task is about are left out of the match once the ledger is large."""

from __future__ import annotations

import pytest
from django.db import connection

from ledger import context, relevance, services
from ledger.context import kept_task_words
from ledger.relevance import COMMON_SHARE, PRUNE_FROM, rare_words

pytestmark = pytest.mark.django_db


def remember(project, agent, content, tags=None):
    return services.memory_record(
        project=project, agent_name=agent, type="learning", importance="medium", content=content, tags=tags
    )


def test_rare_words_leaves_out_common_words_only_on_a_large_index():
    shares = {"webhook": 0.30, "billing": COMMON_SHARE, "stripe": 0.001}
    words = ["webhook", "billing", "stripe", "ledger"]
    assert rare_words(words, shares, rows=PRUNE_FROM) == ["billing", "stripe", "ledger"]
    assert rare_words(words, shares, rows=PRUNE_FROM - 1) == words
    # Every word common: the rarest stays, so a task always searches for something.
    assert rare_words(["webhook", "billing"], {"webhook": 0.3, "billing": 0.05}, rows=10**6) == ["billing"]
    assert rare_words([], {}, rows=10**6) == []


@pytest.fixture
def stats_read_again(monkeypatch):
    """PostgreSQL's word statistics read afresh (they are cached per process), after ANALYZE."""
    monkeypatch.setattr(context, "_pg_stats", context._LexemeStats())
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE ledger_agentmemory")


def test_a_word_in_most_memories_is_left_out_of_a_large_ledgers_match(project, monkeypatch):
    # 60 memories hold "webhook"; one in 61 (under 2%) holds "ledger".
    for i in range(60):
        remember(project, "Ripley", f"Webhook handler note number {i} for the payments service.")
    rare = remember(project, "Ripley", "The webhook signing secret rotates with the ledger keys.")
    monkeypatch.setattr(relevance, "PRUNE_FROM", 10)
    monkeypatch.setattr(context, "_pg_stats", context._LexemeStats())
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE ledger_agentmemory")

    with connection.cursor() as cursor:
        assert kept_task_words(cursor, connection.vendor, ["webhook", "ledger"]) == ["ledger"]
        assert kept_task_words(cursor, connection.vendor, ["webhook"]) == ["webhook"]

    result = context.compile(project, "Ripley", task="rotate the webhook ledger keys", max_items=0)
    assert result.relevant.ids == [rare.pk]


def test_a_small_ledger_keeps_every_word(project, stats_read_again):
    for i in range(12):
        remember(project, "Ripley", f"Webhook handler note number {i}.")
    with connection.cursor() as cursor:
        assert kept_task_words(cursor, connection.vendor, ["webhook", "ledger"]) == ["webhook", "ledger"]


def test_a_memory_shared_later_reaches_another_agents_relevant_layer_and_leaves_it_when_unshared(project):
    note = remember(project, "Dallas", "Stripe webhook signatures expire after five minutes.")
    task = "stripe webhook signatures"
    assert context.compile(project, "Ripley", task=task).relevant.ids == []

    services.memory_edit(project=project, memory_id=note.pk, by="lead", tags=["cross-team"])
    assert context.compile(project, "Ripley", task=task).relevant.ids == [note.pk]

    services.memory_edit(project=project, memory_id=note.pk, by="lead", tags=[])
    assert context.compile(project, "Ripley", task=task).relevant.ids == []
    # Its own agent finds it all along.
    assert context.compile(project, "Dallas", task=task, max_items=0).relevant.ids == [note.pk]


def test_scope_words_are_not_found_by_what_someone_types(project):
    """The words that say who may read a row are in the index, but a search never matches them."""
    from ledger.models import AgentMemory
    from ledger.search import search

    note = remember(project, "Ripley", "Rotate keys quarterly.")
    rows = AgentMemory.objects.filter(project=project)
    assert list(search(rows, f"canonagent{note.agent_id}")) == []
    assert list(search(rows, "rotate")) == [note]
