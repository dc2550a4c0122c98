"""Text holding `<` is indexed whole on both engines (migration 0016): PostgreSQL's parser reads `<` as the
start of a tag and, without the migration, drops the tag's words, or everything after `<script` or
`<style`; SQLite's tokenizer reads `<` as a space."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from ledger import search, services
from ledger.models import AgentMemory, Decision, Episode, InboxEntry

# The migration before 0016.
BEFORE = [("ledger", "0015_session_authors")]

TABLES = {
    AgentMemory: "ledger_agentmemory",
    Decision: "ledger_decision",
    InboxEntry: "ledger_inboxentry",
    Episode: "ledger_episode",
}

# (model, a word that follows a tag in its row's text, as `write_rows` writes it)
WORDS_AFTER_TAGS = [
    (AgentMemory, "redis"),
    (Decision, "nginx"),
    (InboxEntry, "sparingly"),
    (Episode, "kubernetes"),
    (Episode, "string"),
]


def write_rows(project, spaced: bool = False, name: str = "") -> dict[type, int]:
    """One row of each searchable kind whose text holds a tag before a word; with `spaced`, each `<`
    followed by a space (the text no parser reads a tag in), and `name` in the slug and the run id of
    that second set, which are keys. Their ids."""

    def text(value: str) -> str:
        return value.replace("<", "< ") if spaced else value

    memory = services.memory_record(
        project=project,
        agent_name="Alice",
        type="learning",
        content=text("Sessions live in <script> redis now."),
        tags="cache,sessions",
    )
    decision = services.decision_create(
        project=project,
        agent_name="lead",
        type="technical",
        title="Dashboard assets",
        content=text("The dashboard <style nginx serves them."),
        by="l",
    )
    entry = services.entry_submit(
        project=project,
        agent_name="Alice",
        slug=f"bold-titles{name}",
        type="technical",
        title="Bold titles",
        content=text("Titles use <b sparingly> in the inbox."),
    ).entry
    episode = services.episode_record(
        project=project,
        agent_name="Dallas",
        run_id=f"run-7{name}",
        outcome="failed",
        tried=text("Parsed Vec<String> values."),
        difficulties=text("The cluster <script kubernetes never came up."),
        files=[text("templates/<b>.html")],
    ).episode
    return {AgentMemory: memory.pk, Decision: decision.pk, InboxEntry: entry.pk, Episode: episode.pk}


def found(model, q: str) -> list[int]:
    return [row.pk for row in search.search(model.objects.all(), q)]


@pytest.mark.django_db
@pytest.mark.parametrize(("model", "word"), WORDS_AFTER_TAGS)
def test_a_word_after_a_tag_is_found(project, model, word):
    ids = write_rows(project)
    assert found(model, word) == [ids[model]]


@pytest.mark.django_db
def test_the_words_around_a_tag_are_found_too(project):
    ids = write_rows(project)
    services.memory_record(
        project=project, agent_name="Alice", type="learning", content="Sessions expire hourly."
    )
    assert sorted(found(AgentMemory, "sessions")) == sorted(AgentMemory.objects.values_list("pk", flat=True))
    assert found(Decision, "dashboard") == [ids[Decision]]
    assert found(Episode, "parsed values") == [ids[Episode]]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("Sessions live in <script> redis now.", "redis"),
        ("The dashboard <style nginx serves them.", "nginx"),
        ("Parsed Vec<String> values", "string"),
    ],
)
def test_the_matcher_and_the_index_both_hold_the_word_after_a_tag(project, text, word):
    """Python reads a row's words as the index does: the word after the tag is in both."""
    services.memory_record(project=project, agent_name="Alice", type="learning", content=text)
    assert search.Matcher.read(word).found(text) == (word,)
    assert len(found(AgentMemory, word)) == 1, connection.vendor


# --- The migration, backward and forward ---


def _migrate(targets: list[tuple[str, str]]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def _latest() -> list[tuple[str, str]]:
    """Every app at its last migration, as the models expect the database."""
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.fixture
def ledger_at_latest(transactional_db):
    """The database at its last migration again after the test, whatever the test left it at."""
    yield
    _migrate(_latest())


def test_search_finds_the_words_after_tags_after_migrating_back_and_forth(project, ledger_at_latest):
    ids = write_rows(project)
    _migrate(BEFORE)
    _migrate(_latest())
    for model, word in WORDS_AFTER_TAGS:
        assert found(model, word) == [ids[model]], (model.__name__, word)
    later = services.decision_create(
        project=project,
        agent_name="lead",
        type="technical",
        title="Fonts",
        content="<style caddy serves fonts",
        by="l",
    )
    assert found(Decision, "caddy") == [later.pk]


def _vectors(weights: str = "") -> dict[type, dict[int, str]]:
    """PostgreSQL: each row's `search_vector` as text (only its lexemes of `weights`, when given), by
    model and id."""
    vector = f"ts_filter(search_vector, '{{{','.join(weights.lower())}}}')" if weights else "search_vector"
    vectors = {}
    with connection.cursor() as cursor:
        for model, table in TABLES.items():
            cursor.execute(f"SELECT id, {vector}::text FROM {table}")
            vectors[model] = dict(cursor.fetchall())
    return vectors


def _holding(model, word: str) -> list[int]:
    """PostgreSQL: the ids of the rows whose vector holds `word`."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {TABLES[model]} WHERE search_vector @@ plainto_tsquery('english', %s) ORDER BY id",
            [word],
        )
        return [row[0] for row in cursor.fetchall()]


def _index_options() -> list[list[str] | None]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relkind = 'i' AND relname LIKE 'ledger_%_search'"
        )
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.postgresql_only
def test_postgresql_the_migration_reads_each_tag_as_spaced_text_and_changes_nothing_else(
    project, ledger_at_latest
):
    """With the migration a row holding tags is indexed as the same text with a space after each `<`.
    Backward, the vectors are 0015's again: the words after the tags are gone, and the text already
    spaced keeps the very same vector (weights, tags, slug words, file words and scope words alike).
    Each time the GIN indexes take each write at once (0012)."""
    tagged = write_rows(project)
    spaced = write_rows(project, spaced=True, name="-spaced")
    after, after_text = _vectors(), _vectors("B")
    for model in TABLES:
        # The tagged text is in columns of weight B; the spaced rows' other columns differ (keys).
        assert after_text[model][tagged[model]] == after_text[model][spaced[model]], model.__name__
    for model, word in WORDS_AFTER_TAGS:
        assert _holding(model, word) == sorted([tagged[model], spaced[model]]), word

    _migrate(BEFORE)
    before = _vectors()
    for model in TABLES:
        assert before[model][spaced[model]] == after[model][spaced[model]], model.__name__
    for model, word in WORDS_AFTER_TAGS:
        assert _holding(model, word) == [spaced[model]], word
    assert _index_options() == [["fastupdate=off"]] * 4

    _migrate(_latest())
    assert _vectors() == after
    assert _index_options() == [["fastupdate=off"]] * 4
