"""A decision held for review: a block someone added to a team's decision log after its adoption reaches
no agent's context until a coordinator retypes or edits it.

SQLite rebuilds `ledger_decision` to add a column that is not null, which drops the triggers that keep
its full-text index in step (0007): they are created again, and the index rebuilt.

Decisions adopted before this migration are not held: which blocks of a log arrived after its first
adoption was not recorded.
"""

from importlib import import_module

from django.db import migrations, models

fts = import_module("ledger.migrations.0007_full_text_search")

TABLE = "ledger_decision"


def decision_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for table, index, columns, _ in fts.INDEXES:
        if table == TABLE:
            for statement in fts._sqlite_triggers(table, index, columns):
                schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0016_search_angle_brackets"),
    ]

    operations = [
        migrations.AddField(
            model_name="decision",
            name="held",
            field=models.BooleanField(default=False),
        ),
        # Both ways: undoing the change rebuilds the table as well.
        migrations.RunPython(decision_triggers, decision_triggers),
    ]
