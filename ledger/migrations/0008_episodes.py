"""Episodes: what each agent's run tried and how it ended, searchable like memories (`ledger.search`).

The full-text index is built the way 0007 builds the others: on SQLite an FTS5 external-content table
kept in step by triggers, on PostgreSQL a stored generated `tsvector` column with a GIN index. The
paths in `files` are indexed as words (`ledger/search.py` is `ledger`, `search`, `py`), as SQLite's
tokenizer cuts them.
"""

from importlib import import_module

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

# The helpers of 0007, whose module name is not an identifier an import statement can spell.
fts = import_module("ledger.migrations.0007_full_text_search")

TABLE, FTS = "ledger_episode", "ledger_episode_fts"
COLUMNS = ["tried", "difficulties", "feedback", "files"]
VECTOR = (
    "setweight(to_tsvector('english'::regconfig, coalesce(tried, '')), 'B')"
    " || setweight(to_tsvector('english'::regconfig, coalesce(difficulties, '')), 'B')"
    " || setweight(to_tsvector('english'::regconfig, coalesce(feedback, '')), 'B')"
    " || setweight(to_tsvector('english'::regconfig,"
    " translate(coalesce(files::text, ''), '/._-', '    ')), 'C')"
)


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        fts._run(schema_editor, fts._sqlite_forward(TABLE, FTS, COLUMNS))
    elif vendor == "postgresql":
        fts._run(schema_editor, fts._postgresql_forward(TABLE, VECTOR))


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        fts._run(schema_editor, fts._sqlite_backward(TABLE, FTS, COLUMNS))
    elif vendor == "postgresql":
        fts._run(schema_editor, fts._postgresql_backward(TABLE))


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0007_full_text_search"),
    ]

    operations = [
        migrations.CreateModel(
            name="Episode",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("run_id", models.CharField(max_length=200)),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("succeeded", "Succeeded"),
                            ("failed", "Failed"),
                            ("abandoned", "Abandoned"),
                        ],
                        max_length=10,
                    ),
                ),
                ("tried", models.TextField()),
                ("files", models.JSONField(blank=True, default=list)),
                ("change_url", models.URLField(blank=True, max_length=2048)),
                ("difficulties", models.TextField(blank=True)),
                ("feedback", models.TextField(blank=True)),
                (
                    "source",
                    models.CharField(
                        choices=[("agent", "Agent"), ("scribe", "Scribe"), ("coordinator", "Coordinator")],
                        default="agent",
                        max_length=12,
                    ),
                ),
                ("tokens", models.PositiveIntegerField(default=0, editable=False)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "agent",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="episodes",
                        to="ledger.agent",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="episodes",
                        to="ledger.project",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(fields=["project", "-created_at", "-id"], name="ledger_episode_project_list")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("project", "agent", "run_id"), name="ledger_episode_unique_run"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("run_id", ""), _negated=True),
                        name="ledger_episode_run_id_not_empty",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("outcome__in", ["succeeded", "failed", "abandoned"])),
                        name="ledger_episode_outcome_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("source__in", ["agent", "scribe", "coordinator"])),
                        name="ledger_episode_source_valid",
                    ),
                ],
            },
        ),
        migrations.RunPython(forward, backward),
    ]
