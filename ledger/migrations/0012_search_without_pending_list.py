"""PostgreSQL: the full-text GIN indexes take each write at once (`fastupdate = off`).

With GIN's default, new rows wait in the index's pending list until VACUUM or autoanalyze merges it,
and until then every search reads the whole list: after 5,000 new memories, a relevant-layer query
spent about 7 ms of its time there instead of under 1 ms. The ledger is written far less often than
it is read (every agent turn compiles), so each write pays for its own index entries instead, and a
search costs the same just after a burst of writes as after a VACUUM. The lists that exist are merged
here. SQLite has nothing of the kind.
"""

from importlib import import_module

from django.db import migrations

fts = import_module("ledger.migrations.0007_full_text_search")

TABLES = ["ledger_decision", "ledger_inboxentry", "ledger_agentmemory", "ledger_episode"]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        index = fts.PG_INDEX.format(table=table)
        schema_editor.execute(f"ALTER INDEX {index} SET (fastupdate = off)")
        schema_editor.execute(f"SELECT gin_clean_pending_list('{index}'::regclass)")


def backward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"ALTER INDEX {fts.PG_INDEX.format(table=table)} RESET (fastupdate)")


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0011_entryrevision"),
    ]

    operations = [migrations.RunPython(forward, backward)]
