"""An inbox entry's memory is no longer its own: merging a learning its agent already holds as an active
memory records nothing new and links the entry to that memory, so several entries may link to one.

SQLite rebuilds `ledger_inboxentry` to drop the column's unique constraint, which drops the triggers
that keep its full-text index in step (0007): they are created again, and the index rebuilt.
"""

from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

fts = import_module("ledger.migrations.0007_full_text_search")

TABLE = "ledger_inboxentry"


def entry_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for table, index, columns, _ in fts.INDEXES:
        if table == TABLE:
            for statement in fts._sqlite_triggers(table, index, columns):
                schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0013_entry_topic_index"),
    ]

    operations = [
        migrations.AlterField(
            model_name="inboxentry",
            name="memory",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="source_entries",
                to="ledger.agentmemory",
            ),
        ),
        # Both ways: undoing the change rebuilds the table as well.
        migrations.RunPython(entry_triggers, entry_triggers),
    ]
