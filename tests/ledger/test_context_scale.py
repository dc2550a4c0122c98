"""What keeps the relevant layer cheap on a large ledger, and correct while doing it: the index narrows
matches to what the agent may read (scope words kept in step with the rows), and words too common to
say what a task is about are left out of the match once the ledger is large."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ledger import context, services, word_stats
from ledger.word_stats import COMMON_SHARE, PRUNE_FROM, kept_words, rare_words

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
def stats_read_again():
    """How common words are, read afresh (it is remembered per process), after ANALYZE on PostgreSQL."""
    word_stats.forget_word_stats()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE ledger_agentmemory")


def test_a_word_in_most_memories_is_left_out_of_a_large_ledgers_match(project, monkeypatch):
    # 60 memories hold "webhook"; one in 61 (under 2%) holds "ledger".
    for i in range(60):
        remember(project, "Ripley", f"Webhook handler note number {i} for the payments service.")
    rare = remember(project, "Ripley", "The webhook signing secret rotates with the ledger keys.")
    monkeypatch.setattr(word_stats, "PRUNE_FROM", 10)
    word_stats.forget_word_stats()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE ledger_agentmemory")

    with connection.cursor() as cursor:
        assert kept_words(cursor, connection.vendor, ["webhook", "ledger"]) == ["ledger"]
        assert kept_words(cursor, connection.vendor, ["webhook"]) == ["webhook"]

    result = context.compile(project, "Ripley", task="rotate the webhook ledger keys", max_items=0)
    assert result.relevant.ids == [rare.pk]


def test_a_small_ledger_keeps_every_word(project, stats_read_again):
    for i in range(12):
        remember(project, "Ripley", f"Webhook handler note number {i}.")
    with connection.cursor() as cursor:
        assert kept_words(cursor, connection.vendor, ["webhook", "ledger"]) == ["webhook", "ledger"]


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


def counted_words(queries) -> list[str]:
    """The words a compile counted (SQLite), from the queries it made."""
    found = [query["sql"] for query in queries if "coalesce(max(id), 0)" in query["sql"]]
    return [word for sql in found for word in re.findall(r'\{content tag_index\} : "(\w+)"', sql)]


@pytest.mark.sqlite_only
def test_sqlite_counts_each_word_once_a_while(project, monkeypatch):
    remember(project, "Ripley", "Webhook handler retries with backoff.")
    word_stats.forget_word_stats()  # the write's near-duplicate search counted its words already
    with CaptureQueriesContext(connection) as first:
        context.compile(project, "Ripley", task="webhook retries")
    with CaptureQueriesContext(connection) as again:
        context.compile(project, "Ripley", task="webhook retries")
    with CaptureQueriesContext(connection) as more:
        context.compile(project, "Ripley", task="webhook signing")
    assert counted_words(first) == ["webhook", "retries"]
    assert counted_words(again) == []
    assert counted_words(more) == ["signing"]

    monkeypatch.setattr(word_stats, "STATS_SECONDS", 0.0)  # every count is out of date at once
    with CaptureQueriesContext(connection) as stale:
        context.compile(project, "Ripley", task="webhook signing")
    assert counted_words(stale) == ["webhook", "signing"]


@pytest.mark.sqlite_only
def test_sqlite_forgets_every_count_past_its_limit_and_still_leaves_out_common_words(project, monkeypatch):
    for i in range(60):
        remember(project, "Ripley", f"Webhook handler note number {i} for the payments service.")
    remember(project, "Ripley", "The webhook signing secret rotates with the ledger keys.")
    monkeypatch.setattr(word_stats, "PRUNE_FROM", 10)
    monkeypatch.setattr(word_stats, "COUNTED_WORDS", 2)
    with connection.cursor() as cursor:
        assert kept_words(cursor, "sqlite", ["payments", "ledger"]) == ["ledger"]
    # One more word would make three: every count is forgotten, and both words are counted afresh.
    with CaptureQueriesContext(connection) as queries, connection.cursor() as cursor:
        assert kept_words(cursor, "sqlite", ["webhook", "ledger"]) == ["ledger"]
    assert counted_words(queries) == ["webhook", "ledger"]
    assert set(word_stats._sqlite_counts["ledger_agentmemory"].shares) == {"webhook", "ledger"}
