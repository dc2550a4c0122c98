"""The export's cost follows what changed (docs/mirror.md "What an export does").

- `MirrorFile` remembers what each file was rendered from (`inputs`), what the workspace showed of it
  (`seen`) and where each row's text stands in it (`pieces`). Rows written before this migration have
  none of it: the next export renders them once.
- `MirrorChange`: a trigger on each table the files show (decisions, memories, inbox entries, sessions)
  adds a row for every insert, update and delete of a project that has a workspace, in the write's own
  transaction; and one for each manifest row an import adopts or removes. The export reads them and
  renders only the files they touch.
- `MirrorState.exported`: what the last export left.
- On PostgreSQL, the parts, placed rows and pieces of a file are stored uncompressed (`KNOWN`).

Keep in mind for later migrations: on SQLite, a migration that rebuilds one of these tables (Django
copies it into a new table for most column changes) drops its triggers, which must then be created
again with `TRIGGERS` below (the mirror tests check that they exist, and an export that finds one
missing looks at every file instead of trusting the changes).
"""

import django.db.models.deletion
from django.db import migrations, models

# (table, kind, the events that matter)
TRIGGERS = [
    ("ledger_decision", "decision", ("INSERT", "UPDATE", "DELETE")),
    ("ledger_agentmemory", "memory", ("INSERT", "UPDATE", "DELETE")),
    # Every column but `file`, which the export itself sets when it writes a new entry's file (its path
    # stays the same).
    (
        "ledger_inboxentry",
        "entry",
        (
            "INSERT",
            "UPDATE OF project_id, agent_id, slug, type, title, content, rationale, tags, importance,"
            " run_id, status, source, decision_id, memory_id, merged_at, reviewed_by, reviewed_at, reason,"
            " created_at, updated_at",
            "DELETE",
        ),
    ),
    ("ledger_session", "session", ("INSERT", "UPDATE", "DELETE")),
    # What an import adopts: the export's own writes never set `adopted_sha256`. (A row an import removes
    # is that of an inbox file gone from the workspace: its path is simply no longer there.)
    ("ledger_mirrorfile", "file", ("INSERT", "UPDATE OF adopted_sha256")),
]

WORKSPACE = "EXISTS (SELECT 1 FROM ledger_project WHERE id = {row}.project_id AND workspace <> '')"
# A manifest row counts only once adopted.
ADOPTED = {"ledger_mirrorfile": "{row}.adopted_sha256 <> '' AND "}


def sqlite_triggers(table, kind, events):
    """The statements that (re)create the SQLite triggers of one table."""
    statements = []
    for event in events:
        row = "OLD" if event == "DELETE" else "NEW"
        name = f"ledger_mirror_{kind}_{event.split()[0].lower()}"
        statements += [
            f"DROP TRIGGER IF EXISTS {name}",
            f"CREATE TRIGGER {name} AFTER {event} ON {table}"
            f" WHEN {ADOPTED.get(table, '').format(row=row)}{WORKSPACE.format(row=row)} BEGIN"
            f" INSERT INTO ledger_mirrorchange (project_id, kind, row_id)"
            f" VALUES ({row}.project_id, '{kind}', {row}.id); END",
        ]
    return statements


POSTGRESQL_FUNCTION = f"""
CREATE OR REPLACE FUNCTION ledger_mirror_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed record;
BEGIN
    IF TG_OP = 'DELETE' THEN
        changed := OLD;
    ELSE
        changed := NEW;
    END IF;
    IF {WORKSPACE.format(row="changed")} THEN
        INSERT INTO ledger_mirrorchange (project_id, kind, row_id)
        VALUES (changed.project_id, TG_ARGV[0], changed.id);
    END IF;
    RETURN NULL;
END
$$
"""


def postgresql_triggers(table, kind, events):
    name = f"ledger_mirror_{kind}"
    return [
        f"DROP TRIGGER IF EXISTS {name} ON {table}",
        f"CREATE TRIGGER {name} AFTER {' OR '.join(events)} ON {table} FOR EACH ROW"
        + (f" WHEN ({ADOPTED[table].format(row='NEW').removesuffix(' AND ')})" if table in ADOPTED else "")
        + f" EXECUTE FUNCTION ledger_mirror_change('{kind}')",
    ]


# What Canon knows of the rows of a file (the log's is megabytes) is rewritten whole at every write of
# the file: on PostgreSQL it is stored out of line uncompressed, which costs less than compressing it.
KNOWN = ("parts", "placed", "pieces")


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRESQL_FUNCTION)
        for column in KNOWN:
            schema_editor.execute(f"ALTER TABLE ledger_mirrorfile ALTER COLUMN {column} SET STORAGE EXTERNAL")
    for table, kind, events in TRIGGERS:
        if vendor == "sqlite":
            statements = sqlite_triggers(table, kind, events)
        elif vendor == "postgresql":
            statements = postgresql_triggers(table, kind, events)
        else:
            statements = []
        for statement in statements:
            schema_editor.execute(statement)


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table, kind, events in TRIGGERS:
        if vendor == "sqlite":
            for event in events:
                schema_editor.execute(
                    f"DROP TRIGGER IF EXISTS ledger_mirror_{kind}_{event.split()[0].lower()}"
                )
        elif vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS ledger_mirror_{kind} ON {table}")
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS ledger_mirror_change()")
        for column in ("parts", "placed"):
            schema_editor.execute(f"ALTER TABLE ledger_mirrorfile ALTER COLUMN {column} SET STORAGE EXTENDED")


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0018_full_text_index_rows"),
    ]

    operations = [
        migrations.AddField(
            model_name="mirrorfile",
            name="inputs",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="mirrorfile",
            name="seen",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name="mirrorfile",
            name="pieces",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="mirrorstate",
            name="exported",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.CreateModel(
            name="MirrorChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(max_length=10)),
                ("row_id", models.BigIntegerField()),
                (
                    "project",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="mirror_changes",
                        to="ledger.project",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["project", "kind"], name="ledger_mirrorchange_project")],
            },
        ),
        migrations.RunPython(forward, backward),
    ]
