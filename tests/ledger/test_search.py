"""Full-text search (`ledger.search`): what `q` finds and in which order, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import connection

from ledger import search, services
from ledger.models import AgentMemory, Decision, InboxEntry

pytestmark = pytest.mark.django_db


def remember(project, content, agent="Alice", **kw):
    kw.setdefault("type", "learning")
    return services.memory_record(project=project, agent_name=agent, content=content, **kw)


def decide(project, title, content, **kw):
    return services.decision_create(
        project=project, agent_name="lead", type="technical", title=title, content=content, by="l", **kw
    )


def found(q, model=AgentMemory):
    rows = search.search(model.objects.all(), q)
    field = "content" if model is AgentMemory else "title"
    return [getattr(row, field) for row in rows]


def test_two_words_that_are_not_adjacent_are_found(project):
    remember(project, "Retry the webhook when the payment provider times out")
    remember(project, "Payment pages render on the server")
    assert found("payment webhook") == ["Retry the webhook when the payment provider times out"]


def test_every_word_must_match(project):
    remember(project, "cache the tokens")
    assert found("cache tokens") == ["cache the tokens"]
    assert found("cache invoices") == []


def test_the_last_word_matches_as_a_prefix(project):
    remember(project, "Keep all state in PostgreSQL")
    assert found("postg") == ["Keep all state in PostgreSQL"]
    assert found("state postg") == ["Keep all state in PostgreSQL"]


def test_words_are_stemmed(project):
    remember(project, "Every migration is reversible")
    assert found("migrations") == ["Every migration is reversible"]
    assert found("migrated every") == ["Every migration is reversible"]


def test_case_is_ignored(project):
    remember(project, "Deploys happen on Tuesdays")
    assert found("DEPLOYS tuesday") == ["Deploys happen on Tuesdays"]


def test_a_title_match_beats_a_passing_mention(project):
    decide(project, "Caching policy", "Responses are kept for an hour.")
    decide(project, "Background jobs", "Jobs run hourly; one of them warms the caching layer.")
    assert found("caching", Decision) == ["Caching policy", "Background jobs"]


def test_more_matches_rank_higher(project):
    remember(project, "flaky test once")
    remember(project, "flaky flaky flaky: the flaky test suite needs a flaky-test quarantine")
    assert found("flaky")[0].startswith("flaky flaky")


def test_ties_are_newest_first(project):
    first = remember(project, "same words here")
    second = remember(project, "same words here", agent="Bob")
    rows = list(search.search(AgentMemory.objects.all(), "same words"))
    assert [row.pk for row in rows] == [second.pk, first.pk]


def test_entries_are_found_by_slug_title_content_and_rationale(project):
    services.entry_submit(
        project=project,
        agent_name="Alice",
        slug="adopt-granian",
        type="technical",
        title="Production server",
        content="Serve the app with one process manager.",
        rationale="Fewer moving parts.",
    )
    for q in ("granian", "production server", "process manager", "moving parts"):
        assert [e.slug for e in search.search(InboxEntry.objects.all(), q)] == ["adopt-granian"], q


def test_memory_tags_are_searched(project):
    remember(project, "Rotate the keys yearly", tags="security,ops")
    assert found("security keys") == ["Rotate the keys yearly"]


# Each query is read as its words only: `near`, `content` and the like are words the row must hold too.
PAYMENT = ["payment webhook retried"]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ('"', []),
        ('"unbalanced', []),
        ("*", []),
        ("paym*", PAYMENT),
        ('"payment', PAYMENT),
        ("NEAR(payment webhook)", []),
        ("NEAR(payment webhook", []),
        ("payment OR webhook", PAYMENT),
        ("payment AND NOT webhook", PAYMENT),
        ("-payment", PAYMENT),
        ("webhook -payment", PAYMENT),
        ("content:payment", []),
        ("retried: payment", PAYMENT),
        ("(payment", PAYMENT),
        ("payment)", PAYMENT),
        ("payment & !webhook", PAYMENT),
        ("'payment' | 'webhook'", PAYMENT),
        ("payment:*", PAYMENT),
        ("payment:A", PAYMENT),  # `a` is a stop word
        ("payment:B", []),
        ("<->", []),
        ("\\", []),
        ("^payment", PAYMENT),
        ("{content retried}: payment", []),
        ("webhook' OR 1=1 --", []),
    ],
)
def test_query_syntax_is_never_interpreted(project, q, expected):
    remember(project, "payment webhook retried")
    remember(project, "webhook alone")
    assert found(q) == expected


@pytest.mark.parametrize("q", ["", "   ", "!!!", "...", "the", "and or not", "AND NOT", "-", "___"])
def test_no_word_to_search_for_matches_nothing(project, q):
    remember(project, "the and or not")
    assert found(q) == []


def test_accented_and_unusual_text(project):
    remember(project, "Le café est fermé le dimanche")
    remember(project, "Ünïcödé names like Zoë and Ångström")
    remember(project, "日本語 テキスト")
    assert found("café") == ["Le café est fermé le dimanche"]
    assert found("Zoë ångström") == ["Ünïcödé names like Zoë and Ångström"]
    assert found("ＣＡＦÉ") == ["Le café est fermé le dimanche"]  # full-width letters are NFKC-normalised
    assert found("日本語") == ["日本語 テキスト"]
    assert found("🙂") == []


@pytest.mark.sqlite_only
def test_sqlite_folds_accents(project):
    remember(project, "Le café est fermé")
    assert found("cafe ferme") == ["Le café est fermé"]


@pytest.mark.postgresql_only
def test_postgresql_keeps_accents(project):
    """The `english` configuration does not fold accents (that needs the `unaccent` extension)."""
    remember(project, "Le café est fermé")
    assert found("cafe") == []


def test_the_index_follows_edits_through_the_services(project):
    memory = remember(project, "Use blue buttons")
    services.memory_edit(project=project, memory_id=memory.pk, by="l", content="Use green buttons")
    assert found("blue") == []
    assert found("green buttons") == ["Use green buttons"]
    services.memory_edit(project=project, memory_id=memory.pk, by="l", tags="design")
    assert found("design") == ["Use green buttons"]


def test_the_index_follows_decision_edits(project):
    decision = decide(project, "Old title", "Old text")
    services.decision_edit(
        project=project, decision_id=decision.pk, by="l", title="Fresh title", content="New"
    )
    assert found("old", Decision) == []
    assert found("fresh", Decision) == ["Fresh title"]


def test_archived_rows_stay_found_and_keep_their_status(project):
    memory = remember(project, "Archive me later")
    services.memory_archive(project=project, memory_id=memory.pk, by="l")
    assert [(m.content, m.status) for m in search.search(AgentMemory.objects.all(), "archive")] == [
        ("Archive me later", "archived")
    ]
    assert list(search.search(AgentMemory.objects.filter(status="active"), "archive")) == []


def test_the_index_follows_deletes(project):
    memory = remember(project, "Short lived")
    AgentMemory.objects.filter(pk=memory.pk).delete()
    assert found("short lived") == []
    remember(project, "Short lived again")
    assert found("short lived") == ["Short lived again"]


def test_search_narrows_and_never_widens(project, other_project):
    remember(project, "Shared words in alpha")
    remember(other_project, "Shared words in beta")
    rows = search.search(AgentMemory.objects.filter(project=project), "shared words")
    assert [m.content for m in rows] == ["Shared words in alpha"]
    assert rows.count() == 1


def test_the_result_is_still_a_queryset(project, django_assert_num_queries):
    for i in range(5):
        remember(project, f"paged note {i}")
    rows = search.search(AgentMemory.objects.select_related("agent"), "paged note")
    with django_assert_num_queries(2):
        assert rows.count() == 5
        assert [m.agent.name for m in rows[1:3]] == ["Alice", "Alice"]


def test_a_search_inside_another_querys_subquery(project):
    """The rank follows the row's table under the alias a subquery gives it."""
    remember(project, "nested search works")
    ids = search.search(AgentMemory.objects.all(), "nested").values_list("pk", flat=True)[:10]
    assert [m.content for m in AgentMemory.objects.filter(pk__in=ids)] == ["nested search works"]


def test_terms_are_words_without_stop_words():
    assert search.terms('The "PostgreSQL" OR  near(migrations)*') == ["postgresql", "near", "migrations"]
    assert search.fts5_query(["a", "b"]) == '"a" AND "b"*'
    assert search.tsquery(["a", "b"]) == "'a':ABC & 'b':*ABC"


@pytest.mark.sqlite_only
def test_sqlite_triggers_exist():
    """A later migration that rebuilds one of the tables drops its triggers; this says so."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'ledger_%_fts_%'")
        names = {row[0] for row in cursor.fetchall()}
    assert names == {
        f"ledger_{table}_fts_{event}"
        for table in ("memory", "decision", "entry", "episode")
        for event in ("insert", "update", "delete")
    }


@pytest.mark.postgresql_only
def test_postgresql_generated_columns_and_indexes_exist():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'search_vector'"
            " AND is_generated = 'ALWAYS'"
        )
        tables = {row[0] for row in cursor.fetchall()}
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'ledger_%_search'")
        indexes = {row[0] for row in cursor.fetchall()}
    assert tables == {"ledger_agentmemory", "ledger_decision", "ledger_inboxentry", "ledger_episode"}
    assert indexes == {f"{table}_search" for table in tables}


@pytest.mark.postgresql_only
def test_postgresql_search_indexes_take_each_write_at_once():
    """No pending list: a search costs the same right after a burst of writes (migration 0012)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relkind = 'i' AND c.relname LIKE 'ledger_%_search'"
        )
        options = dict(cursor.fetchall())
    assert len(options) == 4
    assert all(found == ["fastupdate=off"] for found in options.values()), options


@pytest.mark.postgresql_only
def test_postgresql_new_memories_leave_no_pending_index_entries(project):
    for i in range(30):
        services.memory_record(
            project=project, agent_name="Ripley", type="learning", content=f"Webhook retry note {i}."
        )
    with connection.cursor() as cursor:
        # PostgreSQL's contrib module that reads a GIN index's pending list (the test database only).
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        cursor.execute("SELECT pending_tuples FROM pgstatginindex('ledger_agentmemory_search')")
        assert cursor.fetchone()[0] == 0
