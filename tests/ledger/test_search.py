"""Full-text search (`ledger.search`): what `q` finds and in which order, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import connection

from ledger import search, search_sql, services, visibility
from ledger.models import Agent, AgentMemory, Decision, InboxEntry

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


def test_a_row_holding_any_word_is_found(project):
    remember(project, "Retry the webhook when the payment provider times out")
    remember(project, "Payment pages render on the server")
    remember(project, "Invoices are sent monthly")
    assert sorted(found("payment webhook")) == [
        "Payment pages render on the server",
        "Retry the webhook when the payment provider times out",
    ]


def test_rows_holding_every_word_come_first(project):
    both = remember(project, "cache the tokens")
    remember(project, "tokens tokens: every token expires, tokens are rotated")
    remember(project, "cache warmers run hourly")
    assert found("cache tokens")[0] == both.content
    assert sorted(found("cache invoices")) == ["cache the tokens", "cache warmers run hourly"]


def test_every_word_outweighs_one_word_said_often_and_in_a_title(project):
    """BM25 alone (SQLite) ranks the decision saying `quarantine` in its title and three times more
    first; the boost for holding every word outweighs it."""
    decide(project, "Quarantine", "Quarantine first: the quarantine list has a quarantine owner.")
    decide(project, "Test runs in CI", "A failing test goes to the quarantine list until someone fixes it.")
    for i in range(6):
        decide(project, f"Rule {i}", "Tests run on Tuesdays.")
    assert found("quarantine tests", Decision)[:2] == ["Test runs in CI", "Quarantine"]


@pytest.mark.sqlite_only
def test_without_the_boost_bm25_prefers_the_word_said_often(project, monkeypatch):
    decide(project, "Quarantine", "Quarantine first: the quarantine list has a quarantine owner.")
    decide(project, "Test runs in CI", "A failing test goes to the quarantine list until someone fixes it.")
    for i in range(6):
        decide(project, f"Rule {i}", "Tests run on Tuesdays.")
    monkeypatch.setattr(search_sql, "ALL_WORDS_BOOST", 1.0)
    assert found("quarantine tests", Decision)[:2] == ["Quarantine", "Test runs in CI"]


def test_the_boost_multiplies_only_the_rows_holding_every_word(project, monkeypatch):
    both = remember(project, "The payment webhook is retried")
    one = remember(project, "The payment page is slow")

    def scores():
        return {m.pk: m.search_rank for m in search.search(AgentMemory.objects.all(), "payment webhook")}

    boosted = scores()
    monkeypatch.setattr(search_sql, "ALL_WORDS_BOOST", 1.0)
    plain = scores()
    assert boosted[both.pk] == pytest.approx(3.0 * plain[both.pk])
    assert boosted[one.pk] == pytest.approx(plain[one.pk])


def test_each_row_carries_its_score_best_first(project):
    remember(project, "webhook")
    remember(project, "webhook webhook, the webhook again")
    remember(project, "a long note that mentions the webhook only once among many other words here")
    rows = list(search.search(AgentMemory.objects.all(), "webhook"))
    scores = [getattr(row, search.SCORE) for row in rows]
    assert all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)
    assert rows[0].content == "webhook webhook, the webhook again"


def test_the_last_word_matches_as_a_prefix(project):
    remember(project, "Keep all state in PostgreSQL")
    assert found("postg") == ["Keep all state in PostgreSQL"]
    assert found("invoices postg") == ["Keep all state in PostgreSQL"]
    assert found("postg invoices") == []  # only the last word typed is a prefix
    assert found("postg the") == ["Keep all state in PostgreSQL"]  # the last word, stop words aside


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


# Each query is read as its words only: operators, quotes and column names are words (or separators)
# like any other, and a row holding any of the words is found.
PAYMENT, ALONE = "payment webhook retried", "webhook alone"


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ('"', []),
        ('"unbalanced', []),
        ("*", []),
        ("paym*", [PAYMENT]),
        ('"payment', [PAYMENT]),
        ("NEAR(payment webhook)", [PAYMENT, ALONE]),
        ("NEAR(payment", [PAYMENT]),
        ("payment OR webhook", [PAYMENT, ALONE]),
        ("payment AND NOT webhook", [PAYMENT, ALONE]),  # not an exclusion
        ("-payment", [PAYMENT]),
        ("alone -payment", [PAYMENT, ALONE]),
        ("content:retried", [PAYMENT]),  # no column filter: `content` is a word
        ("retried: payment", [PAYMENT]),
        ("(payment", [PAYMENT]),
        ("payment)", [PAYMENT]),
        ("payment & !alone", [PAYMENT, ALONE]),
        ("'payment' | 'webhook'", [PAYMENT, ALONE]),
        ("payment:*", [PAYMENT]),
        ("payment:A", [PAYMENT]),  # `a` is a stop word
        ("retried:B", [PAYMENT]),  # no weight: `b` is a word no row holds
        ("<->", []),
        ("\\", []),
        ("^payment", [PAYMENT]),
        ("{content tag_index}: alone", [ALONE]),
        ("alone' OR 1=1 --", [ALONE]),
    ],
)
def test_query_syntax_is_never_interpreted(project, q, expected):
    remember(project, PAYMENT)
    remember(project, ALONE)
    assert sorted(found(q)) == sorted(expected)


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


def test_a_query_keeps_the_pieces_that_hold_a_kept_word():
    query = search.Query.read("cache the deploy-web-pages.sh webh")
    assert query.keeping(list(query.words)) is query
    kept = query.keeping(["pages", "webh"])
    assert kept.words == ("deploy", "web", "pages", "sh", "webh") and kept.prefix == "webh"
    assert kept.pieces == (("deploy", "web", "pages", "sh"), ("webh",))
    dropped = query.keeping(["cache"])
    assert dropped.words == ("cache",) and dropped.prefix == ""  # a whole word, no longer a prefix
    assert search.fts5_any(dropped) == '"cache"'


@pytest.fixture
def large(monkeypatch):
    """A table counts as large from ten rows (`ledger.word_stats.PRUNE_FROM`), and a word in more than
    30 % of its rows as common."""
    from ledger import word_stats

    monkeypatch.setattr(word_stats, "PRUNE_FROM", 10)
    monkeypatch.setattr(word_stats, "COMMON_SHARE", 0.3)

    def analysed() -> None:
        """How common each word is, read afresh once the rows are written (PostgreSQL: after ANALYZE)."""
        word_stats.forget_word_stats()
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE ledger_agentmemory, ledger_decision")

    yield analysed
    word_stats.forget_word_stats()


def test_on_a_large_index_a_word_most_memories_hold_is_matched_only_with_rarer_ones(project, large):
    """`deploy` is in 11 of 12 memories: asked with `rollback`, it ranks what `rollback` finds and finds
    nothing alone; asked alone, it finds every memory holding it."""
    for i in range(10):
        remember(project, f"Deploy note {i}: the deploy ran")
    both = remember(project, "Deploy rollback takes the previous release")
    rollback = remember(project, "A rollback needs the previous schema")
    remember(project, "Invoices are sent monthly")
    large()
    assert found("deploy rollback") == [both.content, rollback.content]
    assert len(found("deploy")) == 11
    assert search.search(AgentMemory.objects.all(), "deploy rollback").count() == 2


def test_on_a_small_index_every_word_is_matched(project):
    for i in range(5):
        remember(project, f"Deploy note {i}: the deploy ran")
    remember(project, "A rollback needs the previous schema")
    assert len(found("deploy rollback")) == 6


def test_each_table_leaves_out_the_words_common_in_it(project, large):
    """How common a word is is counted in the table searched: `deploy` is common among these memories
    and rare among these decisions, `rollback` the other way round."""
    for i in range(12):
        remember(project, f"Deploy note {i}: the deploy ran")
        decide(project, f"Rollback rule {i}", "A rollback restores the previous schema.")
    rollback = remember(project, "A rollback needs the previous schema")
    deploy = decide(project, "Deploy rule", "The deploy waits for the tests.")
    decide(project, "Invoice rule", "Invoices are sent monthly.")
    large()
    assert found("deploy rollback") == [rollback.content]
    assert found("deploy rollback", Decision) == [deploy.title]
    assert len(found("rollback", Decision)) == 12  # asked alone, a common word finds every row


def test_an_agents_search_asks_the_index_for_its_rows_and_finds_what_the_rule_lets_it_read(project):
    """A queryset narrowed to what an agent reads knows its reader; the index's scope words then give
    exactly the rows `memory_readable` gives."""
    from ledger import visibility
    from ledger.models import Agent

    remember(project, "Ripley: rotate the webhook keys", agent="Ripley")
    remember(project, "Dallas: the webhook keys are in the vault", agent="Dallas")
    remember(project, "Dallas shares: webhook keys expire yearly", agent="Dallas", tags=["cross-team"])
    services.session_start(project=project, summary="Webhook keys rotated.", by="lead")
    services.session_update_current(project=project, end=True, by="lead")
    ripley = Agent.objects.get(project=project, name="Ripley")
    visible = visibility.memories_visible_to(project, ripley)
    assert visible.reader == ripley and visible.filter(type="learning").reader == ripley
    found = {m.content for m in search.search(visible, "webhook keys")}
    by_rule = {
        m.content
        for m in search.search(AgentMemory.objects.filter(project=project), "webhook keys")
        if visibility.memory_is_readable(m, ripley)
    }
    assert found == by_rule and len(found) == 3


def test_a_search_ranks_only_the_newest_matching_memories(project, monkeypatch):
    monkeypatch.setattr(search, "RANKED_MEMORIES", 3)
    old = remember(project, "webhook webhook webhook")  # the best match, but the oldest
    newer = [remember(project, f"note {i} about the webhook and other things") for i in range(4)]
    remember(project, "Invoices are sent monthly")
    rows = search.search(AgentMemory.objects.all(), "webhook")
    assert {m.pk for m in rows} == {m.pk for m in newer[1:]}
    assert rows.count() == 3
    assert old.pk not in {m.pk for m in search.search(AgentMemory.objects.all(), "webhook")}
    monkeypatch.setattr(search, "RANKED_MEMORIES", 10)
    assert search.search(AgentMemory.objects.all(), "webhook")[0].pk == old.pk


@pytest.mark.parametrize("ranked", [3, 10])
def test_a_paged_search_reads_the_newest_matches_once_and_finds_what_search_finds(
    project, monkeypatch, django_assert_num_queries, ranked
):
    monkeypatch.setattr(search, "RANKED_MEMORIES", ranked)
    remember(project, "webhook webhook webhook")
    for i in range(4):
        remember(project, f"note {i} about the webhook")
        remember(project, f"note {i} about the webhook, Dallas's", agent="Dallas")
    remember(project, "Invoices are sent monthly")
    for rows in (
        AgentMemory.objects.filter(project=project),
        visibility.memories_visible_to(project, Agent.objects.get(project=project, name="Alice")),
    ):
        expected = [(m.pk, m.search_rank) for m in search.search(rows, "webhook")]
        assert len(expected) == min(ranked, rows.count() - 1)
        paged = search.search(rows, "webhook", paged=True)  # which are the newest is read here
        with django_assert_num_queries(2):
            assert paged.count() == len(expected)
            assert [(m.pk, m.search_rank) for m in paged[:20]] == expected


MEMORY_VALUES = ("id", "content", "tags", "created_at", "expires_at", "agent__name")


def test_best_reads_the_newest_matching_memories_as_search_ranks_them(project, monkeypatch):
    monkeypatch.setattr(search, "RANKED_MEMORIES", 3)
    remember(project, "webhook webhook webhook")  # the best match, but older than the three newest
    for i in range(4):
        remember(project, f"note {i} about the webhook", tags=["ops"] if i % 2 else [])
    remember(project, "Invoices are sent monthly")
    rows = AgentMemory.objects.filter(project=project)
    ranked = list(search.search(rows, "webhook").values(*MEMORY_VALUES, search.SCORE))
    assert len(ranked) == 3 and "webhook webhook webhook" not in {row["content"] for row in ranked}
    assert search.best(rows, "webhook", 10, MEMORY_VALUES) == ranked
    assert search.best(rows, "webhook", 2, MEMORY_VALUES) == ranked[:2]
    assert search.best(rows, "the", 10, MEMORY_VALUES) == []


def test_best_reads_only_what_the_reader_may_see(project):
    remember(project, "Dallas: the webhook keys are in the vault", agent="Dallas")
    remember(project, "Dallas shares: webhook keys expire yearly", agent="Dallas", tags=["cross-team"])
    mine = remember(project, "Ripley: webhook retries back off", agent="Ripley")
    ripley = visibility.memories_visible_to(project, Agent.objects.get(project=project, name="Ripley"))
    found = search.best(ripley, "webhook keys", 10, MEMORY_VALUES)
    assert found == list(search.search(ripley, "webhook keys").values(*MEMORY_VALUES, search.SCORE))
    assert {row["content"] for row in found} == {"Dallas shares: webhook keys expire yearly", mine.content}


def test_best_reads_the_best_decisions_in_searchs_order(project):
    for i in range(6):
        decide(project, f"Retry rule {i}", "Retries back off." + " Then wait." * i)
    decide(project, "Invoices", "Sent monthly, retried once.")
    rows = Decision.objects.filter(project=project)
    fields = ("id", "title", "content", "status", "created_at", "agent__name")
    ranked = list(search.search(rows, "retry rule").values(*fields, search.SCORE))
    assert len(ranked) == 7
    assert search.best(rows, "retry rule", 4, fields) == ranked[:4]


def test_terms_are_words_without_stop_words():
    assert search.terms('The "PostgreSQL" OR  near(migrations)*') == ["postgresql", "near", "migrations"]


def test_a_query_is_read_as_words_and_pieces():
    query = search.Query.read(
        "Fix deploy-web-pages.sh for \uff21\uff29\uff30\uff2c\uff21\uff2e-04 the"
    )  # full-width
    assert query.words == ("fix", "deploy", "web", "pages", "sh", "aiplan", "04")
    assert query.prefix == "04"  # the last word typed that is not a stop word
    assert query.pieces == (("fix",), ("deploy", "web", "pages", "sh"), ("aiplan", "04"))
    assert query.last_piece == "AIPLAN-04"
    assert not query.plain
    assert search.Query.read("(payment), webhook!").plain
    assert not search.Query.read("-04").plain  # PostgreSQL reads `-04` as a signed number


def test_the_fts5_queries_quote_every_word():
    query = search.Query.read("state-of-the-art cache v0.13")
    assert search.fts5_any(query) == '"state" OR "art" OR "cache" OR "v0" OR "13"*'
    assert search.fts5_all(query) == '"state" AND "art" AND "cache" AND "v0" AND "13"*'
    assert search.fts5_ranked(query) == (
        '"state" OR "art" OR "cache" OR "v0" OR "13"* OR "state of the art" OR "v0 13"*'
    )


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


# --- Which words a row holds, and the excerpt that shows them ---


@pytest.mark.parametrize(
    ("q", "text"),
    [
        ("generous", "A generation of agents"),  # porter: both `gener`; Snowball: `generous`, `generat`
        ("migrations", "Every migration is reversible"),
        ("café", "Le cafe ferme"),  # accents: folded on SQLite only
        ("postg", "Keep all state in PostgreSQL"),
        ("deploying", "Deploys happen on Tuesdays"),
        ("happily", "A happy path"),
        ("invoices", "Rotate the keys"),
    ],
)
def test_the_matcher_holds_a_word_exactly_when_the_index_finds_it(project, q, text):
    """Python reads a row's words as the database in use does: same stemmer, same accent folding."""
    remember(project, text)
    matcher = search.Matcher.read(q)
    assert bool(matcher.found(text)) == bool(found(q)), (connection.vendor, q, text)


def test_words_joined_by_punctuation_are_marked_as_one(project):
    matcher = search.Matcher.read("deploy-web-pages.sh", "sqlite")
    text = "Run deploy-web-pages.sh, then deploy again."
    assert [text[s:e] for s, e, _ in matcher.marks(text)] == ["deploy-web-pages.sh", "deploy"]
    matcher = search.Matcher.read("release-desk@tidepool.example.com AIPLAN-04", "postgresql")
    text = "Mail release-desk@tidepool.example.com about AIPLAN-04."
    assert [text[s:e] for s, e, _ in matcher.marks(text)] == [
        "release-desk@tidepool.example.com",
        "AIPLAN-04",
    ]


def test_the_excerpt_shows_the_place_with_the_most_words():
    matcher = search.Matcher.read("webhook retries backoff", "sqlite")
    text = (
        "The webhook handler was written in March. "
        + "Unrelated notes about the billing pages. " * 12
        + "Retries of the webhook use exponential backoff, capped at eight minutes. "
        + "More unrelated notes. " * 10
    )
    parts = search.excerpt(matcher, text, length=120)
    shown = "".join(piece for piece, _ in parts)
    assert parts[0] == ("…", False) and parts[-1] == ("…", False)
    assert len(shown) <= 122
    assert [piece for piece, hit in parts if hit] == ["Retries", "webhook", "backoff"]


def test_a_short_text_is_shown_whole_on_one_line():
    matcher = search.Matcher.read("ångström", "postgresql")
    parts = search.excerpt(matcher, "Zoë Ångström\n\n  reviews the café pages.")
    assert parts == (("Zoë ", False), ("Ångström", True), (" reviews the café pages.", False))


def test_a_highlight_says_which_field_holds_which_words(project):
    decision = decide(
        project,
        "Webhook retries use exponential backoff",
        "**By:** Marlow (Backend)\n**What:** A failed payment webhook is retried after 1, 2, 4 and 8 minutes.",
        rationale="The payment provider rate-limits bursts.",
    )
    found = search.highlight(decision, "payment webhook backoff provider")
    assert found.why == {
        "title": ("webhook", "backoff"),
        "content": ("payment", "webhook"),
        "rationale": ("payment", "provider"),
    }
    assert found.field == "content"  # the title shows as the row's title
    assert found.marked() == (
        "**By:** Marlow (Backend) **What:** A failed [payment] [webhook] is retried after 1, 2, 4 and 8 minutes."
    )


def test_a_highlight_of_a_memory_and_an_episode(project):
    memory = remember(project, "Rotate the signing keys every spring.", tags="security,ops")
    assert search.highlight(memory, "security keys").why == {"content": ("keys",), "tags": ("security",)}
    episode = services.episode_record(
        project=project,
        agent_name="Dallas",
        run_id="run-312",
        outcome="succeeded",
        tried="Moved the docs deploy into CI.",
        files=["scripts/deploy-web-pages.sh"],
    ).episode
    found = search.highlight(episode, "deploy-web-pages.sh")
    assert found.why == {"tried": ("deploy",), "files": ("deploy", "web", "pages", "sh")}
    assert found.field == "tried"
    assert found.marked("<mark>", "</mark>") == "Moved the docs <mark>deploy</mark> into CI."


@pytest.mark.postgresql_only
def test_postgresql_reads_the_query_with_the_parser_that_built_the_index(project):
    """`to_tsquery` over the words cut apart asks for `aiplan & 04` and `deploy & web & pages & sh`:
    the index holds `-04` and the single token `deploy-web-pages.sh`, so neither row was found."""
    ticket = decide(project, "AIPLAN-04: retire the nightly export", "The warehouse reads the feed.")
    script = decide(project, "Docs ship through deploy-web-pages.sh", "No hand pushes.")
    with connection.cursor() as cursor:
        for q, row in (("AIPLAN-04", ticket), ("deploy-web-pages.sh", script)):
            cursor.execute(
                "SELECT id FROM ledger_decision WHERE search_vector @@ to_tsquery('english', %s)",
                [" & ".join(search.terms(q))],
            )
            assert cursor.fetchall() == []
            sql, params = search.tsquery_sql(q, weights="", prefix=False)
            cursor.execute(f"SELECT id FROM ledger_decision WHERE search_vector @@ ({sql})", params)
            assert cursor.fetchall() == [(row.pk,)], q


@pytest.mark.postgresql_only
def test_postgresql_plans_the_query_as_a_constant(project):
    """The query is built from immutable functions of the text: the planner folds it into one
    `tsquery`, which the GIN index and its statistics can use."""
    decide(project, "Pin the Squad CLI to v0.13.1", "Every agent runs it.")
    rows = search.search(Decision.objects.filter(project=project), "squad v0.13.1")
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (VERBOSE, COSTS OFF) {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "to_tsvector" not in plan
    assert "''v0.13.1'':*ABC" in plan  # a constant, its quotes doubled
