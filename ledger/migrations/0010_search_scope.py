"""Who may read a row, in the full-text index of memories and episodes: scope words.

The relevant-knowledge layer of a compile looks for the task's words among the rows one agent may
read. Found through the whole index and filtered afterwards, every row of every agent that matches a
word is scored first (tens of thousands at 100,000 memories). So each memory and each episode is also
indexed under words that say who may read it, and the search asks for those words AND the task's: the
index itself narrows the matches to the agent's rows before any is scored.

- a memory: `canonagent{agent id}`; `canonteam{project id}` when it is cross-team;
  `canonsummary{project id}` when it is a closed session's summary;
- an episode: `canonagent{agent id}`.

SQLite: the FTS5 tables of memories and episodes become contentless (`content=''`) with a `scope`
column; triggers write the scope words computed from the row, and give the same values back to delete
it. Searches for what someone typed are limited to the text columns. PostgreSQL: the scope words join
the generated `search_vector` (the `simple` configuration, weight D), and searches rank by the text
query alone.

Keep in mind for later migrations: a migration that rebuilds `ledger_agentmemory` or `ledger_episode`
on SQLite drops their triggers: run `sqlite_triggers` of this module again for that table.
"""

from importlib import import_module

from django.db import migrations

fts = import_module("ledger.migrations.0007_full_text_search")
episodes = import_module("ledger.migrations.0008_episodes")

TOKENIZER = fts.TOKENIZER

def memory_scope(row: str = "") -> str:
    """The scope words of a memory, as an SQL expression over the columns of `row` (`new`, `old`, a
    table name, or nothing for the row itself). The casts keep it immutable for PostgreSQL."""
    p = f"{row}." if row else ""
    return (
        f"'canonagent' || CAST({p}agent_id AS TEXT)"
        f" || CASE WHEN {p}cross_team THEN ' canonteam' || CAST({p}project_id AS TEXT) ELSE '' END"
        f" || CASE WHEN {p}source = 'session_summary' THEN ' canonsummary' || CAST({p}project_id AS TEXT)"
        " ELSE '' END"
    )


def episode_scope(row: str = "") -> str:
    p = f"{row}." if row else ""
    return f"'canonagent' || CAST({p}agent_id AS TEXT)"


# (table, FTS5 table, text columns, scope expression, the columns it reads, PostgreSQL text vector)
SCOPED = [
    (
        "ledger_agentmemory",
        "ledger_memory_fts",
        ["content", "tag_index"],
        memory_scope,
        ["agent_id", "project_id", "cross_team", "source"],
        fts.INDEXES[0][3],
    ),
    ("ledger_episode", "ledger_episode_fts", episodes.COLUMNS, episode_scope, ["agent_id"], episodes.VECTOR),
]


def sqlite_triggers(table, name, columns, scope, scope_columns):
    """Triggers that keep the contentless index `name` in step with `table` (an update of any column
    it reads re-indexes the row), and the index filled again from the table."""
    names = ", ".join([*columns, "scope"])

    def values(row):
        return ", ".join([*(f"{row}.{c}" for c in columns), scope(row)])

    remove = f"INSERT INTO {name}({name}, rowid, {names}) VALUES ('delete', old.id, {values('old')});"
    add = f"INSERT INTO {name}(rowid, {names}) VALUES (new.id, {values('new')});"
    watched = ", ".join([*columns, *scope_columns])
    return [f"DROP TRIGGER IF EXISTS {name}_{event}" for event in ("insert", "delete", "update")] + [
        f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} BEGIN {add} END",
        f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} BEGIN {remove} END",
        f"CREATE TRIGGER {name}_update AFTER UPDATE OF {watched} ON {table} BEGIN {remove} {add} END",
        f"INSERT INTO {name}({name}) VALUES ('delete-all')",
        f"INSERT INTO {name}(rowid, {names}) SELECT id, {values(table)} FROM {table}",
    ]


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table, name, columns, scope, scope_columns, vector in SCOPED:
        if vendor == "sqlite":
            fts._run(schema_editor, fts._sqlite_backward(table, name, columns))
            fts._run(
                schema_editor,
                [
                    f"CREATE VIRTUAL TABLE {name} USING fts5({', '.join([*columns, 'scope'])}, content='',"
                    f" tokenize='{TOKENIZER}')",
                    *sqlite_triggers(table, name, columns, scope, scope_columns),
                ],
            )
        elif vendor == "postgresql":
            fts._run(schema_editor, fts._postgresql_backward(table))
            scoped = f"{vector} || setweight(to_tsvector('simple'::regconfig, {scope()}), 'D')"
            fts._run(schema_editor, fts._postgresql_forward(table, scoped))


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table, name, columns, _, _, vector in SCOPED:
        if vendor == "sqlite":
            fts._run(schema_editor, fts._sqlite_backward(table, name, columns))
            fts._run(schema_editor, fts._sqlite_forward(table, name, columns))
        elif vendor == "postgresql":
            fts._run(schema_editor, fts._postgresql_backward(table))
            fts._run(schema_editor, fts._postgresql_forward(table, vector))


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0009_memory_lifecycle"),
    ]

    operations = [migrations.RunPython(forward, backward)]
