"""Full-text search indexes for memories, decisions and inbox entries (`ledger.search`).

SQLite: an FTS5 external-content table beside each table (the text is not stored twice), kept in step
by triggers after every insert, update and delete, and filled from the rows already there.
PostgreSQL: a stored generated `tsvector` column (`search_vector`) on each table with a GIN index; the
database fills and maintains it. The models do not declare either, so they stay the same on both.

Keep in mind for later migrations: on SQLite, a migration that rebuilds one of these tables (Django
copies it into a new table for most column changes) drops its triggers, which must then be created
again (the search tests check that they exist); on PostgreSQL, a column the generated column reads
cannot change type until the generated column is dropped.
"""

from django.db import migrations

TOKENIZER = "porter unicode61 remove_diacritics 2"

# (model table, FTS5 table, indexed columns, PostgreSQL tsvector expression)
INDEXES = [
    (
        "ledger_agentmemory",
        "ledger_memory_fts",
        ["content", "tag_index"],
        "setweight(to_tsvector('english'::regconfig, coalesce(content, '')), 'B')"
        " || setweight(to_tsvector('english'::regconfig, translate(coalesce(tag_index, ''), ',', ' ')), 'C')",
    ),
    (
        "ledger_decision",
        "ledger_decision_fts",
        ["title", "content", "rationale"],
        "setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')"
        " || setweight(to_tsvector('english'::regconfig, coalesce(content, '')), 'B')"
        " || setweight(to_tsvector('english'::regconfig, coalesce(rationale, '')), 'C')",
    ),
    (
        "ledger_inboxentry",
        "ledger_entry_fts",
        ["slug", "title", "content", "rationale"],
        "setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')"
        " || setweight(to_tsvector('english'::regconfig, coalesce(content, '')), 'B')"
        " || setweight(to_tsvector('english'::regconfig, translate(coalesce(slug, ''), '-_', '  ')), 'C')"
        " || setweight(to_tsvector('english'::regconfig, coalesce(rationale, '')), 'C')",
    ),
]

# The GIN index of each table's generated column: `ledger.search` finds the matching rows with it.
PG_INDEX = "{table}_search"


def _sqlite_forward(table, fts, columns):
    names = ", ".join(columns)
    return [
        f"CREATE VIRTUAL TABLE {fts} USING fts5({names}, content='{table}', content_rowid='id',"
        f" tokenize='{TOKENIZER}')",
        *_sqlite_triggers(table, fts, columns),
    ]


def _sqlite_triggers(table, fts, columns):
    """The triggers that keep `fts` in step with `table`, then the index rebuilt from the table: also
    what a later migration runs again after rebuilding `table`."""
    names = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    remove = f"INSERT INTO {fts}({fts}, rowid, {names}) VALUES ('delete', old.id, {old});"
    add = f"INSERT INTO {fts}(rowid, {names}) VALUES (new.id, {new});"
    return [f"DROP TRIGGER IF EXISTS {fts}_{event}" for event in ("insert", "delete", "update")] + [
        f"CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} BEGIN {add} END",
        f"CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} BEGIN {remove} END",
        # Only an update that writes an indexed column re-indexes the row (archiving writes `status`
        # alone, through a queryset update).
        f"CREATE TRIGGER {fts}_update AFTER UPDATE OF {names} ON {table} BEGIN {remove} {add} END",
        f"INSERT INTO {fts}({fts}) VALUES ('rebuild')",
    ]


def _sqlite_backward(table, fts, columns):
    return [f"DROP TRIGGER IF EXISTS {fts}_{event}" for event in ("insert", "delete", "update")] + [
        f"DROP TABLE IF EXISTS {fts}"
    ]


def _postgresql_forward(table, vector):
    return [
        f"ALTER TABLE {table} ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({vector}) STORED",
        f"CREATE INDEX {PG_INDEX.format(table=table)} ON {table} USING gin (search_vector)",
    ]


def _postgresql_backward(table):
    return [
        f"DROP INDEX IF EXISTS {PG_INDEX.format(table=table)}",
        f"ALTER TABLE {table} DROP COLUMN IF EXISTS search_vector",
    ]


def _run(schema_editor, statements):
    for statement in statements:
        schema_editor.execute(statement)


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table, fts, columns, vector in INDEXES:
        if vendor == "sqlite":
            _run(schema_editor, _sqlite_forward(table, fts, columns))
        elif vendor == "postgresql":
            _run(schema_editor, _postgresql_forward(table, vector))


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table, fts, columns, _ in INDEXES:
        if vendor == "sqlite":
            _run(schema_editor, _sqlite_backward(table, fts, columns))
        elif vendor == "postgresql":
            _run(schema_editor, _postgresql_backward(table))


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0006_agentmemory_category"),
    ]

    operations = [migrations.RunPython(forward, backward)]
