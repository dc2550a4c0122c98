"""PostgreSQL: inbox entries indexed by topic, the part of the slug before Canon's `--` suffix.

The inbox finds competing proposals by topic (`review.competition`): `queue-tech`, `queue-tech--bob`
and `queue-tech--bob--2` are one. Cutting each slug at its first `--` as the query runs read every slug
of the project, a cost that grew with the ledger; the expression index answers from the topics asked.
SQLite reads each topic as a range of the (project, slug) index instead, where text compares byte by
byte; PostgreSQL's collation may ignore the hyphen, so it cannot.
"""

from django.db import migrations

INDEX = "ledger_entry_topic"


def forward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {INDEX} ON ledger_inboxentry (project_id, split_part(slug, '--', 1))"
    )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0012_search_without_pending_list"),
    ]

    operations = [migrations.RunPython(forward, backward)]
